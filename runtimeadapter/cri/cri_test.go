package cri_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/cri"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
	"github.com/actorlet/actorlet/test/support/containerdtest"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// pod returns the specs of a host-network sandbox and one app in it of a
// pod of node, the app running testworkload with args.
func pod(node, name string, args ...string) (sandbox, app runtimeadapter.ContainerSpec) {
	m := runtimeadapter.Meta{Node: node, PodUID: node + "-" + name, PodName: name, PodNamespace: "default",
		ContainerName: runtimeadapter.SandboxName, Type: runtimeadapter.TypeSandbox, GracePeriod: time.Second}
	sandbox = runtimeadapter.ContainerSpec{Name: runtimeadapter.ContainerName("POD", name, "default", m.PodUID, 0),
		Image: testimages.PauseTag, Labels: m.Labels(), NetworkMode: "host", Hostname: name}
	m.ContainerName, m.Type = "app", runtimeadapter.TypeApp
	app = runtimeadapter.ContainerSpec{Name: runtimeadapter.ContainerName("app", name, "default", m.PodUID, 0),
		Image: testimages.TestWorkloadTag, Cmd: args, Labels: m.Labels(), NetworkMode: "host"}
	return sandbox, app
}

// TestFollowLogs: Logs with Follow streams new lines as the container
// prints them (tail and timestamps applied) and ends once it has stopped.
func TestFollowLogs(t *testing.T) {
	t.Parallel()
	rt, cd := newRuntime(t)
	node := testimages.NodeName("t-cri-logs")
	cd.CleanupNode(t, node)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	sb, app := pod(node, "logs", "--log-every", "50ms")
	if _, err := rt.Create(ctx, sb); err != nil {
		t.Fatal(err)
	}
	// NetworkMode "host": the app goes into its pod's sandbox.
	id, err := rt.Create(ctx, app)
	if err == nil {
		err = rt.Start(ctx, id)
	}
	if err != nil {
		t.Fatal(err)
	}
	res, err := rt.List(ctx, runtimeadapter.ListOptions{Node: node, PodUID: node + "-logs"})
	if err != nil || len(res.Containers) != 2 {
		t.Fatalf("the pod lists %+v, %v; want its sandbox and its app", res.Containers, err)
	}
	rc, err := rt.Logs(ctx, id, runtimeadapter.LogOptions{Follow: true, Timestamps: true, TailLines: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	lines := make(chan string, 100)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(lines)
		sc := bufio.NewScanner(rc)
		for sc.Scan() {
			lines <- sc.Text()
		}
	})
	for i := 0; i < 5; i++ {
		select {
		case l := <-lines:
			ts, _, ok := strings.Cut(l, " ")
			if _, err := time.Parse(time.RFC3339Nano, ts); !ok || err != nil {
				t.Errorf("line %q: no timestamp", l)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no line %d within 30 s", i)
		}
	}
	if err := rt.Stop(ctx, id, time.Second); err != nil {
		t.Fatal(err)
	}
	// The stream ends by itself once the container has stopped.
	deadline := time.After(30 * time.Second)
	for open := true; open; {
		select {
		case _, open = <-lines:
		case <-deadline:
			t.Fatal("the followed log did not end after the container stopped")
		}
	}
	wg.Wait()
}

// TestStopThenRemoveRaces: containers that exit as they are stopped are
// removed at once (containerd 1.6 may still show them running for up to
// ~120 ms after StopContainer returns, and RemoveContainer then fails).
func TestStopThenRemoveRaces(t *testing.T) {
	t.Parallel()
	rt, cd := newRuntime(t)
	node := testimages.NodeName("t-cri-race")
	cd.CleanupNode(t, node)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	sb, _ := pod(node, "race")
	sid, err := rt.Create(ctx, sb)
	if err != nil {
		t.Fatal(err)
	}
	const n = 6
	ids := make([]string, n)
	for i := range n {
		_, app := pod(node, "race", "--exit-after", "150ms")
		app.Name += "-" + string(rune('a'+i))
		app.Labels[runtimeadapter.LabelContainerName] = "app" + string(rune('a'+i))
		app.NetworkMode = "container:" + sid
		if ids[i], err = rt.Create(ctx, app); err == nil {
			err = rt.Start(ctx, ids[i])
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			if err := rt.Stop(ctx, id, time.Second); err != nil && !errors.Is(err, runtimeadapter.ErrNotFound) {
				t.Errorf("stop %s: %v", id, err)
			}
			if err := rt.Remove(ctx, id); err != nil {
				t.Errorf("remove %s right after its stop: %v", id, err)
			}
		})
	}
	wg.Wait()
	res, err := rt.List(ctx, runtimeadapter.ListOptions{Node: node, All: true})
	if err != nil || len(res.Containers) != 1 || res.Containers[0].ID != sid {
		t.Errorf("after the removes the node has %+v, %v; want only its sandbox", res.Containers, err)
	}
}

// TestVersionAndNetwork: the private containerd is 1.6 with CRI v1, no
// CNI, and no CRI events, which is what `actorlet run` logs.
func TestVersionAndNetwork(t *testing.T) {
	t.Parallel()
	rt, _ := newRuntime(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if typ := rt.RuntimeType(); typ != "" {
		t.Errorf("RuntimeType = %q before the runtime answered", typ)
	}
	// A List learns the runtime's type, which pod statuses name container
	// IDs with ("containerd://<id>", as the kubelet's).
	if _, err := rt.List(ctx, runtimeadapter.ListOptions{Node: testimages.NodeName("t-cri-version")}); err != nil {
		t.Fatal(err)
	}
	if typ := rt.RuntimeType(); typ != "containerd" {
		t.Errorf("RuntimeType = %q after a List, want containerd", typ)
	}
	v, err := rt.Version(ctx)
	if err != nil || !strings.HasPrefix(v, "containerd://1.") {
		t.Errorf("Version = %q, %v; want containerd://<version>, as the kubelet's node info", v, err)
	}
	if api, err := rt.APIVersion(ctx); err != nil || api != "v1" {
		t.Errorf("APIVersion = %q, %v; want v1", api, err)
	}
	if ready, why, err := rt.NetworkReady(ctx); err != nil || ready || why == "" {
		t.Errorf("NetworkReady = %v, %q, %v; want false and the runtime's reason (no CNI)", ready, why, err)
	}
	served, err := rt.EventsSupported(ctx, time.Second)
	if err != nil || served && strings.HasPrefix(v, "containerd://1.6.") {
		t.Errorf("EventsSupported = %v, %v on %s; containerd 1.6 answers Unimplemented", served, err, v)
	}
	if err := rt.Ping(ctx); err != nil {
		t.Error(err)
	}
	// EnsureImage of the sandbox image actorlet names is the runtime's
	// business; of the workload image, present, a no-op.
	if err := rt.EnsureImage(ctx, testimages.PauseTag); err != nil {
		t.Error(err)
	}
	if err := rt.EnsureImage(ctx, testimages.TestWorkloadTag); err != nil {
		t.Error(err)
	}
}

// TestWithEvents: the hook for another event source keeps every
// interface of the adapter and streams the source's events.
func TestWithEvents(t *testing.T) {
	rt, err := cri.New(cri.Options{Endpoint: "unix:///nonexistent.sock", LogRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	f := fake.New()
	w := cri.WithEvents(rt, f)
	if _, ok := w.(runtimeadapter.EventSource); !ok {
		t.Fatal("WithEvents: not an EventSource")
	}
	for name, ok := range map[string]bool{
		"Execer": is[runtimeadapter.Execer](w), "LogSource": is[runtimeadapter.LogSource](w), "ImageService": is[runtimeadapter.ImageService](w),
	} {
		if !ok {
			t.Errorf("WithEvents lost %s", name)
		}
	}
	if u, ok := w.(interface{ Unwrap() runtimeadapter.Runtime }); !ok || u.Unwrap() != runtimeadapter.Runtime(rt) {
		t.Error("Unwrap does not return the adapter")
	}
	ctx, cancel := context.WithCancel(t.Context())
	events, _ := w.(runtimeadapter.EventSource).Events(ctx, "n")
	cancel()
	for range events {
	}
	// A runtime that does not answer is ErrUnavailable, not "empty".
	lctx, lcancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer lcancel()
	if _, err := rt.List(lctx, runtimeadapter.ListOptions{Node: "n"}); !errors.Is(err, runtimeadapter.ErrUnavailable) {
		t.Errorf("List on a missing socket: %v, want ErrUnavailable", err)
	}
}

func is[T any](v any) bool { _, ok := v.(T); return ok }

// TestRotateLogs: a log past its size is renamed, the runtime reopens it
// (new lines go to a new file), at most maxFiles files are kept, and a
// followed log goes on into the new file.
func TestRotateLogs(t *testing.T) {
	t.Parallel()
	cd := containerdtest.Require(t)
	logs := t.TempDir()
	rt, err := cri.New(cri.Options{Endpoint: cd.Endpoint, LogRoot: logs})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	node := testimages.NodeName("t-cri-rotate")
	cd.CleanupNode(t, node)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	sb, app := pod(node, "rotate", "--log-every", "2ms")
	if _, err := rt.Create(ctx, sb); err != nil {
		t.Fatal(err)
	}
	id, err := rt.Create(ctx, app)
	if err == nil {
		err = rt.Start(ctx, id)
	}
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(logs, "default_rotate_"+node+"-rotate", "app", "0.log")
	rc, err := rt.Logs(ctx, id, runtimeadapter.LogOptions{Follow: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var followed atomic.Int64
	go func() {
		sc := bufio.NewScanner(rc)
		for sc.Scan() {
			followed.Add(1)
		}
	}()
	// Rotated files are named by the second: rotating more often than
	// that waits. Rotate until more files were made than are kept.
	const maxSize, maxFiles = 2 << 10, 3
	seen := map[string]bool{}
	deadline := time.Now().Add(30 * time.Second)
	for delay := 20 * time.Millisecond; len(seen) <= maxFiles; delay = min(2*delay, 200*time.Millisecond) {
		if err := rt.RotateLogs(ctx, node, maxSize, maxFiles); err != nil {
			t.Fatal(err)
		}
		rotated, _ := filepath.Glob(path + ".*")
		if len(rotated) > maxFiles-1 {
			t.Fatalf("%d rotated files %v, want at most %d", len(rotated), rotated, maxFiles-1)
		}
		for _, f := range rotated {
			seen[f] = true
		}
		if time.Now().After(deadline) {
			t.Fatalf("rotated files seen: %v; want %d within 30 s", seen, maxFiles+1)
		}
		time.Sleep(delay)
	}
	before := followed.Load()
	deadline = time.Now().Add(10 * time.Second)
	for followed.Load() < before+10 {
		if time.Now().After(deadline) {
			t.Fatalf("the followed log stopped after rotation at %d lines", followed.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Errorf("the reopened log %s: %v, %v; want new lines in it", path, fi, err)
	}
}
