package runtimetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// Timing of the suite. A real runtime on a loaded machine needs seconds
// for what a fake does at once; the deadlines allow for it, the workloads'
// own timings stay short.
const (
	// waitTimeout bounds every wait for a condition.
	waitTimeout = 30 * time.Second
	// pollMin and pollMax bound how often a wait checks its condition:
	// at once for a fake, without flooding a loaded daemon.
	pollMin = 5 * time.Millisecond
	pollMax = 100 * time.Millisecond
	// grace is the grace period of the stops that wait for SIGKILL.
	grace = time.Second
	// shortExit is how long a workload that exits by itself runs.
	shortExit = 100 * time.Millisecond
	// slack is how much later than its deadline a call may return.
	slack = 10 * time.Second
)

// Run runs the conformance suite against the runtime h sets up: one
// parallel subtest per property actorlet relies on.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.New == nil {
		t.Fatal("runtimetest: Harness.New is nil")
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range g.cases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.run(newEnv(t, h))
				})
			}
		})
	}
}

// testCase is one property.
type testCase struct {
	name string
	run  func(e *env)
}

// group is the properties of one method or interface.
var groups = []struct {
	name  string
	cases []testCase
}{
	{"List", listCases},
	{"Inspect", inspectCases},
	{"Lifecycle", lifecycleCases},
	{"Stop", stopCases},
	{"Remove", removeCases},
	{"NotFound", notFoundCases},
	{"Events", eventCases},
	{"Exec", execCases},
	{"Logs", logCases},
	{"Images", imageCases},
	{"Context", contextCases},
	{"Concurrency", concurrencyCases},
}

// env is one subtest's view of its Instance.
type env struct {
	Instance
	t   *testing.T
	ctx context.Context
	tr  *tracker
}

// tracker holds the IDs of the containers a subtest created, removed at
// its end.
type tracker struct {
	mu      sync.Mutex
	created []string
}

// step runs f as a subtest of its own on e's runtime and containers: one
// property of a container several properties share, so that a real
// runtime creates fewer containers. A failed step fails the properties
// after it.
func (e *env) step(name string, f func(e *env)) {
	e.t.Helper()
	ok := e.t.Run(name, func(t *testing.T) {
		sub := *e
		sub.t = t
		f(&sub)
	})
	if !ok {
		e.t.FailNow()
	}
}

func newEnv(t *testing.T, h Harness) *env {
	in := h.New(t)
	if in.Runtime == nil || in.Node == "" || in.Workload == nil {
		t.Fatal("runtimetest: Instance needs Runtime, Node and Workload")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	e := &env{Instance: in, t: t, ctx: ctx, tr: &tracker{}}
	t.Cleanup(e.removeAll)
	return e
}

// removeAll removes every container the subtest created.
func (e *env) removeAll() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e.tr.mu.Lock()
	ids := e.tr.created
	e.tr.mu.Unlock()
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			if err := e.Runtime.Remove(ctx, id); err != nil && !errors.Is(err, runtimeadapter.ErrNotFound) {
				e.t.Errorf("cleanup: remove container %s: %v", id, err)
			}
		})
	}
	wg.Wait()
}

// pod names one pod of the subtest's node.
type pod struct {
	node, name, uid string
}

// pod returns the pod called name on the subtest's node.
func (e *env) pod(name string) pod {
	return pod{node: e.Node, name: name, uid: e.Node + "-" + name}
}

// otherNode is a second node, for the filtering properties.
func (e *env) otherNode() string { return e.Node + "-other" }

// spec is the spec of container name of p, of type typ, behaving as w.
func (e *env) spec(p pod, name string, typ runtimeadapter.ContainerType, w Workload) runtimeadapter.ContainerSpec {
	meta := runtimeadapter.Meta{
		Node: p.node, PodUID: p.uid, PodName: p.name, PodNamespace: "conformance",
		ContainerName: name, Type: typ, Hash: "h-" + name, RestartCount: 2, GracePeriod: grace,
	}
	s := runtimeadapter.ContainerSpec{
		// Unique on the runtime: the node name is.
		Name:   fmt.Sprintf("conf_%s_%s_%s", p.node, p.name, name),
		Labels: meta.Labels(),
	}
	e.Workload(&s, w)
	if typ == runtimeadapter.TypeSandbox && e.NoPodNetwork {
		s.NetworkMode = "host"
	}
	return s
}

// app is the spec of an app container name of the subtest's pod "p".
func (e *env) app(name string, w Workload) runtimeadapter.ContainerSpec {
	return e.spec(e.pod("p"), name, runtimeadapter.TypeApp, w)
}

// create creates spec, failing the test on error; the container is
// removed at the end.
func (e *env) create(spec runtimeadapter.ContainerSpec) string {
	e.t.Helper()
	id, err := e.Runtime.Create(e.ctx, spec)
	if err != nil {
		e.t.Fatalf("create %s: %v", spec.Name, err)
	}
	if id == "" {
		e.t.Fatalf("create %s: empty ID", spec.Name)
	}
	e.track(id)
	return id
}

func (e *env) track(id string) {
	e.tr.mu.Lock()
	defer e.tr.mu.Unlock()
	e.tr.created = append(e.tr.created, id)
}

// run creates and starts spec.
func (e *env) run(spec runtimeadapter.ContainerSpec) string {
	e.t.Helper()
	id := e.create(spec)
	if err := e.Runtime.Start(e.ctx, id); err != nil {
		e.t.Fatalf("start %s: %v", spec.Name, err)
	}
	return id
}

// ready waits until the workload of id traps SIGTERM (see Instance.Ready).
func (e *env) ready(id string) {
	e.t.Helper()
	if e.Ready != nil {
		e.Ready(e.ctx, e.t, id)
	}
}

// inspect inspects id, failing the test on error.
func (e *env) inspect(id string) runtimeadapter.Container {
	e.t.Helper()
	c, err := e.Runtime.Inspect(e.ctx, id)
	if err != nil {
		e.t.Fatalf("inspect %s: %v", id, err)
	}
	return c
}

// list lists opts (the subtest's node when opts.Node is empty), failing
// the test on error.
func (e *env) list(opts runtimeadapter.ListOptions) runtimeadapter.ListResult {
	e.t.Helper()
	if opts.Node == "" {
		opts.Node = e.Node
	}
	res, err := e.Runtime.List(e.ctx, opts)
	if err != nil {
		e.t.Fatalf("list %+v: %v", opts, err)
	}
	return res
}

// ids returns the IDs of cs as a set.
func ids(cs []runtimeadapter.Container) map[string]bool {
	out := make(map[string]bool, len(cs))
	for _, c := range cs {
		out[c.ID] = true
	}
	return out
}

// find returns the container id of cs.
func find(cs []runtimeadapter.Container, id string) (runtimeadapter.Container, bool) {
	for _, c := range cs {
		if c.ID == id {
			return c, true
		}
	}
	return runtimeadapter.Container{}, false
}

// waitFor polls cond until it holds, failing the test after waitTimeout.
func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for delay := pollMin; !cond(); delay = min(2*delay, pollMax) {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out after %v waiting for %s", waitTimeout, what)
		}
		time.Sleep(delay)
	}
}

// waitExited waits until Inspect reports id exited and returns it.
func (e *env) waitExited(id string) runtimeadapter.Container {
	e.t.Helper()
	var c runtimeadapter.Container
	e.waitFor("container "+id+" to exit", func() bool {
		c = e.inspect(id)
		return c.State == runtimeadapter.StateExited
	})
	return c
}

// checkLabels fails the test unless got has every label of want.
func checkLabels(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: label %s = %q, want %q", what, k, got[k], v)
		}
	}
}
