package docker_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/docker"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// A fresh Runtime's first calls may come at once from two goroutines: the
// PLEG subscribes to events and lists together. The Docker client
// negotiates its API version on its first versioned call and writes the
// version, which Events and List read unsynchronised, so New negotiates
// before handing the Runtime out, and a Runtime whose negotiation in New
// failed serialises it before any call. This test is for -race (the race
// detector reports the unsynchronised write and read); without it, it
// still checks that both calls work.
func TestFreshRuntimeEventsAndListConcurrently(t *testing.T) {
	t.Parallel()
	direct := testimages.EnsureTestImages(t) // Docker's skip and CI rules; the workload image
	for _, tc := range []struct {
		name string
		opts []docker.Option
	}{
		{"negotiated in New", nil},
		{"negotiated by the first calls", []docker.Option{docker.LazyNegotiation()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rt, err := docker.New(tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			node := testimages.NodeName("t-docker-fresh")
			testimages.CleanupNode(t, direct, node)
			uid := strings.TrimPrefix(node, "t-docker-fresh-") // unique: names carry 8 characters of it
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()

			start := make(chan struct{})
			var wg sync.WaitGroup
			var events <-chan runtimeadapter.Event
			var errs <-chan error
			var listErr error
			wg.Go(func() {
				<-start
				events, errs = rt.Events(ctx, node)
			})
			wg.Go(func() {
				<-start
				_, listErr = rt.List(ctx, runtimeadapter.ListOptions{Node: node, All: true})
			})
			close(start)
			wg.Wait()
			if listErr != nil {
				t.Errorf("first List: %v", listErr)
			}
			// The stream works: a container of the node created and
			// removed (never started) is reported destroyed.
			meta := runtimeadapter.Meta{Node: node, PodUID: uid, PodName: "fresh", PodNamespace: "default",
				ContainerName: "app", Type: runtimeadapter.TypeApp, Hash: "h1", GracePeriod: time.Second}
			id, err := rt.Create(ctx, runtimeadapter.ContainerSpec{
				Name:   runtimeadapter.ContainerName("app", "fresh", "default", uid, 0),
				Image:  testimages.TestWorkloadTag,
				Labels: meta.Labels(),
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := rt.Remove(ctx, id); err != nil {
				t.Fatal(err)
			}
			for ev := range events {
				if ev.ContainerID == id && ev.Kind == runtimeadapter.EventDestroy {
					break
				}
			}
			if ctx.Err() != nil {
				t.Fatalf("no destroy event of %s before the deadline", id)
			}
			cancel()
			for range events {
			}
			if err := <-errs; !errors.Is(err, context.Canceled) {
				t.Errorf("event stream ended with %v, want context.Canceled", err)
			}
		})
	}
}

// A daemon whose socket refuses connections when New runs (Docker not up
// yet; issue 12 #5): New returns at once without error, every call fails
// with ErrUnavailable without negotiating anything, and once the daemon
// listens the first calls (the PLEG's Events and Lists, concurrently)
// negotiate the API version once and work. Run it with -race: the
// negotiation must not race with those calls.
func TestLazyNegotiationAfterRefusedSocket(t *testing.T) {
	t.Parallel()
	const node = "n-refused"
	dir, err := os.MkdirTemp("", "dk") // a short path: unix sockets allow ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	sock := filepath.Join(dir, "docker.sock")
	// A dead daemon's socket: the file is there, nothing listens.
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	_ = l.Close()

	start := time.Now()
	rt, err := docker.New(docker.WithHost("unix://" + sock))
	if err != nil {
		t.Fatalf("New with a refusing socket: %v", err)
	}
	defer rt.Close()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("New took %v with a socket that refuses at once", d)
	}
	ctx := withTimeout(t, time.Minute)
	if _, err := rt.List(ctx, runtimeadapter.ListOptions{Node: node, All: true}); !errors.Is(err, runtimeadapter.ErrUnavailable) ||
		!strings.Contains(err.Error(), node) {
		t.Fatalf("List while the socket refuses: %v, want ErrUnavailable naming node %s", err, node)
	}
	if err := rt.Ping(ctx); !errors.Is(err, runtimeadapter.ErrUnavailable) {
		t.Fatalf("Ping while the socket refuses: %v, want ErrUnavailable", err)
	}

	// Docker comes up on the same socket.
	if err := os.Remove(sock); err != nil {
		t.Fatal(err)
	}
	l, err = net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	d := newFakeDaemonOn(t, l)
	d.add(node, "up", "Up 1 second", inspectOK)

	evCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var events <-chan runtimeadapter.Event
	var errs <-chan error
	listErrs := make([]error, 3)
	listed := make([]int, 3)
	wg.Go(func() { events, errs = rt.Events(evCtx, node) })
	for i := range listErrs {
		wg.Go(func() {
			res, err := rt.List(ctx, runtimeadapter.ListOptions{Node: node, All: true})
			listErrs[i], listed[i] = err, len(res.Containers)
		})
	}
	wg.Wait()
	for i, err := range listErrs {
		if err != nil || listed[i] != 1 {
			t.Errorf("List %d once the daemon answers: %d containers, %v; want 1, nil", i, listed[i], err)
		}
	}
	cancel()
	for range events {
	}
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Errorf("event stream ended with %v, want context.Canceled", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pings != 1 {
		t.Errorf("%d pings answered, want 1: one negotiation for all the first calls", d.pings)
	}
	if os.Getenv("DOCKER_API_VERSION") == "" {
		for v, n := range d.versions {
			if v != fakeDaemonAPIVersion {
				t.Errorf("%d requests at API version %s, want all at the daemon's %s", n, v, fakeDaemonAPIVersion)
			}
		}
	}
}
