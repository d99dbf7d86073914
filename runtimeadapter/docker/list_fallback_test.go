package docker_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/docker"
)

// An inspect that hangs or fails does not fail List: the container is
// reported from the list (its state kept, the exit code from Docker's
// status line, no times), not cached, and inspected again by the next
// List. Inspects run in parallel, each with its own deadline.
func TestListReportsContainerFromListWhenItsInspectFails(t *testing.T) {
	t.Parallel()
	const node = "n-fallback"
	d := newFakeDaemon(t)
	d.add(node, "ok", "Up 5 seconds", inspectOK)
	d.add(node, "hung-running", "Up 2 seconds", inspectHang)
	d.add(node, "hung-exited", "Exited (0) 1 second ago", inspectHang)
	d.add(node, "failed-exited", "Exited (3) 4 seconds ago", inspectFail)
	d.add(node, "failed-dead", "Dead", inspectFail)
	const inspectTimeout = time.Second
	rt, err := docker.New(docker.WithHost(d.host()), docker.WithInspectTimeout(inspectTimeout))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	all := runtimeadapter.ListOptions{Node: node, All: true}

	ctx := withTimeout(t, time.Minute)
	start := time.Now()
	res, err := rt.List(ctx, all)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("List with failing inspects: %v", err)
	}
	if took < inspectTimeout {
		t.Errorf("List took %v, less than the inspect timeout %v the hung inspects wait", took, inspectTimeout)
	}
	got := byID(t, res.Containers)
	if len(got) != 5 {
		t.Fatalf("listed %d containers, want 5: %+v", len(got), res.Containers)
	}
	if c := got["ok"]; c.State != runtimeadapter.StateRunning || !c.StartedAt.Equal(fakeStarted) {
		t.Errorf("inspected container: state %s, started %v; want running since %v", c.State, c.StartedAt, fakeStarted)
	}
	for _, tc := range []struct {
		id       string
		state    runtimeadapter.State
		exitCode int
		reason   string
	}{
		{"hung-running", runtimeadapter.StateRunning, 0, ""},
		{"hung-exited", runtimeadapter.StateExited, 0, "Completed"},
		{"failed-exited", runtimeadapter.StateExited, 3, "Error"},
		{"failed-dead", runtimeadapter.StateExited, 137, "ContainerStatusUnknown"},
	} {
		c := got[tc.id]
		if c.State != tc.state || c.ExitCode != tc.exitCode || c.Reason != tc.reason {
			t.Errorf("%s from the list: state %s, exit code %d, reason %q; want %s, %d, %q",
				tc.id, c.State, c.ExitCode, c.Reason, tc.state, tc.exitCode, tc.reason)
		}
		if !c.StartedAt.IsZero() || !c.FinishedAt.IsZero() {
			t.Errorf("%s from the list: started %v, finished %v; want both unknown", tc.id, c.StartedAt, c.FinishedAt)
		}
		if c.Name != "name-"+tc.id || c.Labels[runtimeadapter.LabelPodUID] != "uid-"+tc.id || c.CreatedAt.Unix() != 1700000000 {
			t.Errorf("%s from the list: name %q, labels %v, created %v", tc.id, c.Name, c.Labels, c.CreatedAt)
		}
	}
	d.mu.Lock()
	parallel := d.maxInFlight
	d.mu.Unlock()
	if parallel < 2 {
		t.Errorf("at most %d inspect at a time, want the hung ones in parallel", parallel)
	}

	// The fallbacks were not cached: the next List inspects them again,
	// and not the one inspected.
	if _, err := rt.List(ctx, all); err != nil {
		t.Fatalf("second List: %v", err)
	}
	for id, want := range map[string]int{"ok": 1, "hung-running": 2, "hung-exited": 2, "failed-exited": 2, "failed-dead": 2} {
		if n := d.inspectCount(id); n != want {
			t.Errorf("%s inspected %d times after two Lists, want %d", id, n, want)
		}
	}

	// Once its inspect answers, a container is seen in full.
	for _, id := range []string{"hung-running", "hung-exited", "failed-exited", "failed-dead"} {
		d.setInspect(id, inspectOK)
	}
	res, err = rt.List(ctx, all)
	if err != nil {
		t.Fatalf("List once inspects answer: %v", err)
	}
	got = byID(t, res.Containers)
	if c := got["failed-exited"]; c.ExitCode != 3 || !c.FinishedAt.Equal(fakeFinished) || !c.StartedAt.Equal(fakeStarted) {
		t.Errorf("inspected exited container: exit code %d, started %v, finished %v", c.ExitCode, c.StartedAt, c.FinishedAt)
	}
	if c := got["hung-running"]; c.State != runtimeadapter.StateRunning || !c.StartedAt.Equal(fakeStarted) {
		t.Errorf("inspected running container: state %s, started %v", c.State, c.StartedAt)
	}
}

// A List whose ctx is shorter than the inspect timeout still answers: a
// hung inspect is given at most half of what is left of ctx.
func TestListHungInspectLeavesTimeToAnswer(t *testing.T) {
	t.Parallel()
	const node = "n-short"
	d := newFakeDaemon(t)
	d.add(node, "hung", "Up 1 second", inspectHang)
	rt, err := docker.New(docker.WithHost(d.host())) // default inspect timeout, 3 s
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx := withTimeout(t, 2*time.Second) // shorter than the default
	res, err := rt.List(ctx, runtimeadapter.ListOptions{Node: node, All: true})
	if err != nil {
		t.Fatalf("List with a hung inspect: %v", err)
	}
	if ctx.Err() != nil {
		t.Errorf("List answered only at its deadline")
	}
	if len(res.Containers) != 1 || res.Containers[0].State != runtimeadapter.StateRunning {
		t.Errorf("listing %+v, want the hung container running", res.Containers)
	}
}

// A failed list call fails List, whatever the inspects would do.
func TestListFailsWhenTheListCallFails(t *testing.T) {
	t.Parallel()
	const node = "n-listfails"
	d := newFakeDaemon(t)
	d.add(node, "ok", "Up 1 second", inspectOK)
	d.mu.Lock()
	d.listFails = true
	d.mu.Unlock()
	rt, err := docker.New(docker.WithHost(d.host()))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	res, err := rt.List(withTimeout(t, time.Minute), runtimeadapter.ListOptions{Node: node, All: true})
	if err == nil || !strings.Contains(err.Error(), node) || len(res.Containers) != 0 {
		t.Fatalf("List with a failing list call: %+v, %v; want an error naming node %s and no result", res, err, node)
	}
}

// The API version is negotiated once, before any versioned call, by New;
// or, when the daemon did not answer New's ping, by the first calls, one
// at a time: until then calls fail with ErrUnavailable without reaching
// the daemon.
func TestAPIVersionNegotiatedOnceBeforeAnyCall(t *testing.T) {
	t.Parallel()
	const node = "n-negotiate"
	d := newFakeDaemon(t)
	d.add(node, "ok", "Up 1 second", inspectOK)
	d.mu.Lock()
	d.pingUp = false
	d.mu.Unlock()
	rt, err := docker.New(docker.WithHost(d.host()))
	if err != nil {
		t.Fatalf("New with a daemon that does not answer: %v", err)
	}
	defer rt.Close()

	ctx := withTimeout(t, time.Minute)
	_, err = rt.List(ctx, runtimeadapter.ListOptions{Node: node})
	if !errors.Is(err, runtimeadapter.ErrUnavailable) || !strings.Contains(err.Error(), node) {
		t.Fatalf("List before the daemon answers a ping: %v, want ErrUnavailable naming node %s", err, node)
	}
	d.mu.Lock()
	calls := len(d.versions)
	d.pingUp = true
	d.mu.Unlock()
	if calls != 0 {
		t.Fatalf("%d versioned requests reached the daemon before the version was negotiated", calls)
	}

	// The first calls, concurrently: one negotiation, every request at
	// the daemon's version.
	evCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var events <-chan runtimeadapter.Event
	var errs <-chan error
	listErrs := make([]error, 3)
	wg.Go(func() { events, errs = rt.Events(evCtx, node) })
	for i := range listErrs {
		wg.Go(func() { _, listErrs[i] = rt.List(ctx, runtimeadapter.ListOptions{Node: node, All: true}) })
	}
	wg.Wait()
	for i, err := range listErrs {
		if err != nil {
			t.Errorf("List %d: %v", i, err)
		}
	}
	if err := rt.Ping(ctx); err != nil {
		t.Errorf("Ping: %v", err)
	}
	cancel()
	for range events {
	}
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Errorf("event stream ended with %v, want context.Canceled", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pings != 2 {
		t.Errorf("%d pings answered, want 2: one negotiation and the Ping", d.pings)
	}
	if os.Getenv("DOCKER_API_VERSION") == "" { // else the version is fixed
		for v, n := range d.versions {
			if v != fakeDaemonAPIVersion {
				t.Errorf("%d requests at API version %s, want all at the daemon's %s", n, v, fakeDaemonAPIVersion)
			}
		}
	}
}

// A start that fails leaves the container created and sets State.Error:
// no change of state, so a List must not answer from what it cached of the
// created container before; once the Error is seen, it is cached.
func TestListSeesAFailedStartOfACreatedContainer(t *testing.T) {
	t.Parallel()
	const node = "n-startfail"
	d := newFakeDaemon(t)
	d.add(node, "c1", "Created", inspectOK)
	rt, err := docker.New(docker.WithHost(d.host()))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	all := runtimeadapter.ListOptions{Node: node, All: true}
	ctx := withTimeout(t, time.Minute)
	res, err := rt.List(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	if c := byID(t, res.Containers)["c1"]; c.RawState != "created" || c.Error != "" {
		t.Fatalf("created container: %+v", c)
	}
	const msg = `failed to create shim task: OCI runtime create failed: exec: "/does-not-exist": stat /does-not-exist: no such file or directory: unknown`
	d.failStart("c1", msg)
	res, err = rt.List(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	c := byID(t, res.Containers)["c1"]
	if c.RawState != "created" || c.State != runtimeadapter.StateUnknown || c.Error != msg || c.ExitCode != 127 || !c.StartedAt.IsZero() || !c.FinishedAt.IsZero() {
		t.Fatalf("after the failed start: %+v; want created, Error set, exit code 127, no times", c)
	}
	if _, err := rt.List(ctx, all); err != nil {
		t.Fatal(err)
	}
	if n := d.inspectCount("c1"); n != 2 {
		t.Errorf("c1 inspected %d times in three Lists, want 2 (the failed start cached)", n)
	}
	if in, err := rt.Inspect(ctx, "c1"); err != nil || in.Error != msg {
		t.Errorf("Inspect: %+v, %v", in, err)
	}
}
