package docker_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/docker"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// fixture is one test's node: its own node name and pod UID, and a Runtime
// whose managed containers are removed at test end.
type fixture struct {
	t    *testing.T
	rt   *docker.Runtime
	node string
	uid  string
	ctx  context.Context
}

func newFixture(t *testing.T) *fixture {
	t.Parallel()
	rt := testimages.EnsureTestImages(t)
	node := testimages.NodeName("t-docker")
	testimages.CleanupNode(t, rt, node)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return &fixture{t: t, rt: rt, node: node, uid: strings.TrimPrefix(node, "t-docker-") + "-uid", ctx: ctx}
}

// spec is a test workload container of the fixture's pod, with args.
func (f *fixture) spec(name string, args ...string) runtimeadapter.ContainerSpec {
	meta := runtimeadapter.Meta{
		Node: f.node, PodUID: f.uid, PodName: "pod", PodNamespace: "default",
		ContainerName: name, Type: runtimeadapter.TypeApp, Hash: "h1", GracePeriod: 2 * time.Second,
	}
	return runtimeadapter.ContainerSpec{
		Name:   runtimeadapter.ContainerName(name, "pod", "default", f.uid, 0),
		Image:  testimages.TestWorkloadTag,
		Cmd:    args,
		Labels: meta.Labels(),
	}
}

// run creates and starts spec and returns the container's ID.
func (f *fixture) run(spec runtimeadapter.ContainerSpec) string {
	f.t.Helper()
	id, err := f.rt.Create(f.ctx, spec)
	if err != nil {
		f.t.Fatalf("create: %v", err)
	}
	if err := f.rt.Start(f.ctx, id); err != nil {
		f.t.Fatalf("start: %v", err)
	}
	return id
}

// list lists the fixture's node, failing the test on error.
func (f *fixture) list(opts runtimeadapter.ListOptions) []runtimeadapter.Container {
	f.t.Helper()
	if opts.Node == "" {
		opts.Node = f.node
	}
	res, err := f.rt.List(f.ctx, opts)
	if err != nil {
		f.t.Fatalf("list %+v: %v", opts, err)
	}
	return res.Containers
}

// find returns the container with id in cs.
func find(cs []runtimeadapter.Container, id string) (runtimeadapter.Container, bool) {
	for _, c := range cs {
		if c.ID == id {
			return c, true
		}
	}
	return runtimeadapter.Container{}, false
}

// eventually polls cond every 50 ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitHealthy polls the container's /healthz on port until it answers 200.
func waitHealthy(t *testing.T, f *fixture, id string, port int) {
	t.Helper()
	client := &http.Client{Timeout: time.Second}
	eventually(t, 20*time.Second, "workload /healthz", func() bool {
		c, err := f.rt.Inspect(f.ctx, id)
		if err != nil || c.IP == "" {
			return false
		}
		resp, err := client.Get("http://" + net.JoinHostPort(c.IP, strconv.Itoa(port)) + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

func TestCreateStartListRunning(t *testing.T) {
	f := newFixture(t)
	spec := f.spec("app")
	before := time.Now()
	id := f.run(spec)

	res, err := f.rt.List(f.ctx, runtimeadapter.ListOptions{Node: f.node})
	if err != nil {
		t.Fatal(err)
	}
	if res.ObservedAt.Before(before) {
		t.Errorf("ObservedAt %v before the test started %v", res.ObservedAt, before)
	}
	c, ok := find(res.Containers, id)
	if !ok {
		t.Fatalf("running container %s not listed: %+v", id, res.Containers)
	}
	if c.State != runtimeadapter.StateRunning || c.RawState != "running" {
		t.Errorf("state = %q/%q, want running", c.State, c.RawState)
	}
	if c.Name != spec.Name || c.Image != testimages.TestWorkloadTag {
		t.Errorf("name/image = %q/%q", c.Name, c.Image)
	}
	for k, v := range spec.Labels {
		if c.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], v)
		}
	}
	if c.StartedAt.IsZero() || c.CreatedAt.IsZero() || !c.FinishedAt.IsZero() {
		t.Errorf("times: created %v started %v finished %v", c.CreatedAt, c.StartedAt, c.FinishedAt)
	}
	if c.IP == "" || c.Reason != "" {
		t.Errorf("IP %q (want one on the default bridge), reason %q (want none)", c.IP, c.Reason)
	}

	byName, err := f.rt.Inspect(f.ctx, spec.Name)
	if err != nil || byName.ID != id {
		t.Errorf("Inspect(%s) = %s, %v; want %s", spec.Name, byName.ID, err, id)
	}
	if got := f.list(runtimeadapter.ListOptions{PodUID: f.uid}); len(got) != 1 {
		t.Errorf("list by pod UID: %d containers, want 1", len(got))
	}
	if got := f.list(runtimeadapter.ListOptions{PodUID: "other-uid"}); len(got) != 0 {
		t.Errorf("list by another pod UID: %+v", got)
	}
}

func TestCreateNameConflictCarriesExistingID(t *testing.T) {
	f := newFixture(t)
	spec := f.spec("app")
	id, err := f.rt.Create(f.ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.rt.Create(f.ctx, spec)
	if !errors.Is(err, runtimeadapter.ErrNameConflict) {
		t.Fatalf("second create: %v, want ErrNameConflict", err)
	}
	var conflict *runtimeadapter.NameConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("second create: %T is not a *NameConflictError", err)
	}
	if conflict.ID != id || conflict.Name != spec.Name {
		t.Errorf("conflict = %+v, want name %s id %s", conflict, spec.Name, id)
	}
}

func TestStopSIGTERMIgnoringWorkloadTakesGraceThenIsKilled(t *testing.T) {
	f := newFixture(t)
	id := f.run(f.spec("stubborn", "--ignore-sigterm", "--http", ":8080"))
	// Wait until the workload serves HTTP: its signal handler is installed.
	waitHealthy(t, f, id, 8080)

	const grace = 2 * time.Second
	start := time.Now()
	if err := f.rt.Stop(f.ctx, id, grace); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if took < grace-200*time.Millisecond || took > grace+5*time.Second {
		t.Errorf("stop took %v, want about %v", took, grace)
	}
	var c runtimeadapter.Container
	eventually(t, 10*time.Second, "container exited", func() bool {
		var err error
		c, err = f.rt.Inspect(f.ctx, id)
		return err == nil && c.State == runtimeadapter.StateExited
	})
	if c.ExitCode != 137 || c.Reason != "Error" {
		t.Errorf("exit code %d reason %q, want 137 Error", c.ExitCode, c.Reason)
	}
	if err := f.rt.Stop(f.ctx, id, grace); err != nil {
		t.Errorf("stopping a stopped container: %v", err)
	}
}

func TestExitedWorkloadListsExitCodeAndFinishedAt(t *testing.T) {
	f := newFixture(t)
	id := f.run(f.spec("short", "--exit-code", "3", "--exit-after", "200ms"))
	var c runtimeadapter.Container
	eventually(t, 20*time.Second, "container exited", func() bool {
		var ok bool
		c, ok = find(f.list(runtimeadapter.ListOptions{All: true}), id)
		return ok && c.State == runtimeadapter.StateExited
	})
	if c.ExitCode != 3 || c.Reason != "Error" || c.RawState != "exited" {
		t.Errorf("exit code %d reason %q raw %q, want 3 Error exited", c.ExitCode, c.Reason, c.RawState)
	}
	if c.FinishedAt.IsZero() || c.FinishedAt.Before(c.StartedAt) {
		t.Errorf("started %v finished %v", c.StartedAt, c.FinishedAt)
	}
	if _, ok := find(f.list(runtimeadapter.ListOptions{}), id); ok {
		t.Error("exited container listed without All")
	}
}

func TestListOtherNodeDoesNotShowContainer(t *testing.T) {
	f := newFixture(t)
	id := f.run(f.spec("app"))
	if _, ok := find(f.list(runtimeadapter.ListOptions{All: true}), id); !ok {
		t.Fatal("container not listed on its own node")
	}
	other := f.list(runtimeadapter.ListOptions{Node: f.node + "-other", All: true})
	if _, ok := find(other, id); ok {
		t.Error("container listed on another node")
	}
}

func TestUnlabelledContainersAreNeverListed(t *testing.T) {
	f := newFixture(t)
	none := f.spec("unlabelled")
	none.Labels = nil
	partial := f.spec("partial")
	partial.Labels = map[string]string{runtimeadapter.LabelNode: f.node} // no pod UID etc.
	for _, spec := range []runtimeadapter.ContainerSpec{none, partial} {
		id := f.run(spec)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := f.rt.Remove(ctx, id); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		})
	}
	if got := f.list(runtimeadapter.ListOptions{All: true}); len(got) != 0 {
		t.Errorf("listed containers without actorlet's labels: %+v", got)
	}
}

func TestListCacheSkipsInspectWhenSteady(t *testing.T) {
	f := newFixture(t)
	ids := make([]string, 3)
	for i := range ids {
		ids[i] = f.run(f.spec(string(rune('a' + i))))
	}
	all := runtimeadapter.ListOptions{All: true}

	before := f.rt.InspectCalls()
	if got := f.list(all); len(got) != 3 {
		t.Fatalf("first list: %d containers, want 3", len(got))
	}
	if n := f.rt.InspectCalls() - before; n != 3 {
		t.Errorf("first list: %d inspects, want 3", n)
	}

	before = f.rt.InspectCalls()
	if got := f.list(all); len(got) != 3 {
		t.Fatalf("second list: %d containers, want 3", len(got))
	}
	if n := f.rt.InspectCalls() - before; n != 0 {
		t.Errorf("steady second list: %d inspects, want 0", n)
	}

	// A state change costs one inspect, and the new state is seen.
	if err := f.rt.Stop(f.ctx, ids[0], 0); err != nil {
		t.Fatal(err)
	}
	before = f.rt.InspectCalls()
	c, ok := find(f.list(all), ids[0])
	if !ok || c.State != runtimeadapter.StateExited {
		t.Errorf("stopped container listed as %+v", c)
	}
	if n := f.rt.InspectCalls() - before; n != 1 {
		t.Errorf("list after one stop: %d inspects, want 1", n)
	}

	// Removed containers leave the cache.
	if err := f.rt.Remove(f.ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	f.list(all)
	if n := f.rt.CacheLen(); n != 2 {
		t.Errorf("cache holds %d containers after a removal, want 2", n)
	}
}

func TestMissingObjectsAreNotFound(t *testing.T) {
	f := newFixture(t)
	const missing = "actorlet-no-such-container"
	checks := map[string]error{
		"start":   f.rt.Start(f.ctx, missing),
		"stop":    f.rt.Stop(f.ctx, missing, time.Second),
		"remove":  f.rt.Remove(f.ctx, missing),
		"inspect": func() error { _, err := f.rt.Inspect(f.ctx, missing); return err }(),
	}
	for op, err := range checks {
		if !errors.Is(err, runtimeadapter.ErrNotFound) || !strings.Contains(err.Error(), missing) {
			t.Errorf("%s missing container: %v, want ErrNotFound naming it", op, err)
		}
	}

	spec := f.spec("app")
	spec.Image = "actorlet/no-such-image:0"
	_, err := f.rt.Create(f.ctx, spec)
	if !errors.Is(err, runtimeadapter.ErrNotFound) || !strings.Contains(err.Error(), spec.Image) {
		t.Errorf("create with missing image: %v, want ErrNotFound naming the image", err)
	}
}

func TestEnsureImage(t *testing.T) {
	f := newFixture(t)
	if err := f.rt.EnsureImage(f.ctx, testimages.TestWorkloadTag); err != nil {
		t.Errorf("present image: %v", err)
	}
	const missing = "actorlet/no-such-image:0"
	err := f.rt.EnsureImage(f.ctx, missing)
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing image without a registry: %v, want an error naming it", err)
	}
}

func TestBuildImageReportsBuildErrors(t *testing.T) {
	f := newFixture(t)
	tag := "actorlet/build-fails:" + f.uid
	err := f.rt.BuildImage(f.ctx, tag, map[string][]byte{
		docker.Dockerfile: []byte("FROM scratch\nCOPY missing-file /x\n"),
	})
	if err == nil || !strings.Contains(err.Error(), tag) {
		t.Errorf("failing build: %v, want an error naming %s", err, tag)
	}
	if err := f.rt.BuildImage(f.ctx, tag, map[string][]byte{"x": nil}); err == nil {
		t.Error("build without a Dockerfile: no error")
	}
}

func TestEventsReportLifecycleOfNodeContainers(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	events, errs := f.rt.Events(ctx, f.node)

	// A container of another node must not show up.
	otherNode := testimages.NodeName("t-docker-other")
	testimages.CleanupNode(t, f.rt, otherNode)
	other := f.spec("other")
	other.Name += "-other"
	other.Labels[runtimeadapter.LabelNode] = otherNode
	otherID := f.run(other)

	id := f.run(f.spec("short", "--exit-after", "100ms"))
	want := []runtimeadapter.EventKind{runtimeadapter.EventStart, runtimeadapter.EventDie, runtimeadapter.EventDestroy}
	timeout := time.After(30 * time.Second)
	for i := 0; i < len(want); {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("event stream closed: %v", <-errs)
			}
			if ev.ContainerID == otherID {
				t.Fatalf("event of another node's container: %+v", ev)
			}
			if ev.ContainerID != id || ev.Kind != want[i] {
				t.Fatalf("event %d = %+v, want %s of %s", i, ev, want[i], id)
			}
			if ev.Labels[runtimeadapter.LabelPodUID] != f.uid || ev.Time.IsZero() {
				t.Errorf("event %+v: want pod UID label and a time", ev)
			}
			if ev.Kind == runtimeadapter.EventDie {
				if err := f.rt.Remove(f.ctx, id); err != nil {
					t.Fatal(err)
				}
			}
			i++
		case <-timeout:
			t.Fatalf("timed out waiting for %s event", want[i])
		}
	}

	cancel()
	for range events {
	}
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Errorf("after cancel: %v, want context.Canceled", err)
	}
}

func TestListPastDeadlineIsUnavailable(t *testing.T) {
	f := newFixture(t)
	f.run(f.spec("app"))
	ctx, cancel := context.WithDeadline(f.ctx, time.Now().Add(-time.Second))
	defer cancel()
	res, err := f.rt.List(ctx, runtimeadapter.ListOptions{Node: f.node, All: true})
	if !errors.Is(err, runtimeadapter.ErrUnavailable) || len(res.Containers) != 0 {
		t.Errorf("list past deadline: %+v, %v; want ErrUnavailable and no result", res, err)
	}
}

func TestUnreachableDaemonIsUnavailableNotEmpty(t *testing.T) {
	rt, err := docker.New(docker.WithHost("unix:///nonexistent/actorlet-docker.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := rt.List(ctx, runtimeadapter.ListOptions{Node: "n", All: true})
	if !errors.Is(err, runtimeadapter.ErrUnavailable) {
		t.Errorf("list: %+v, %v; want ErrUnavailable", res, err)
	}
	if _, err := rt.List(ctx, runtimeadapter.ListOptions{}); err == nil {
		t.Error("list without a node: no error")
	}
}
