package docker_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/actorlet/actorlet/internal/testimages"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/docker"
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
