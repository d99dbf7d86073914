package probe

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// step is one call on a Worker and what it must answer.
type step struct {
	op   string // "run" (SetContainer id, running), "stop" (SetContainer id, not running), "passed" (StartupPassed), "tick", "done"
	id   string
	r    Result  // done: the probe's result
	tick bool    // tick: whether to probe
	want *Change // run, stop, done: the change reported, nil for none
}

func run(id string, want *Change) step  { return step{op: "run", id: id, want: want} }
func stop(id string, want *Change) step { return step{op: "stop", id: id, want: want} }
func passed(id string) step             { return step{op: "passed", id: id} }
func tick(want bool) step               { return step{op: "tick", tick: want} }
func done(id string, r Result, want *Change) step {
	return step{op: "done", id: id, r: r, want: want}
}
func ch(k Kind, id string, r Result) *Change { return &Change{Kind: k, ContainerID: id, State: r} }

// probeOnce is a tick that probes and the result of that probe.
func probeOnce(id string, r Result, want *Change) []step {
	return []step{tick(true), done(id, r, want)}
}

func TestWorker(t *testing.T) {
	tests := []struct {
		name           string
		kind           Kind
		probe          *v1.Probe
		waitForStartup bool
		steps          [][]step
	}{
		{
			name: "readiness passes, fails after 3, container stops", kind: Readiness,
			steps: [][]step{
				{tick(false)}, // no container yet
				{run("c1", ch(Readiness, "c1", Failure))},
				probeOnce("c1", Success, ch(Readiness, "c1", Success)),
				probeOnce("c1", Failure, nil),
				probeOnce("c1", Unknown, nil), // an error: neither counts nor resets
				probeOnce("c1", Failure, nil),
				probeOnce("c1", Failure, ch(Readiness, "c1", Failure)),
				probeOnce("c1", Failure, nil), // readiness keeps probing
				probeOnce("c1", Success, ch(Readiness, "c1", Success)),
				{run("c1", nil)}, // same instance, still running: nothing new
				{stop("c1", ch(Readiness, "c1", Failure))},
				{tick(false)},
				{stop("c1", nil)},
			},
		},
		{
			name: "no second probe while one is in flight", kind: Readiness,
			steps: [][]step{
				{run("c1", ch(Readiness, "c1", Failure))},
				{tick(true), tick(false), tick(false)},
				{done("c1", Success, ch(Readiness, "c1", Success))},
				{tick(true)},
				// A new instance while a probe of the old one is in flight:
				// no probe until that one is done, and its result is dropped.
				{run("c2", ch(Readiness, "c2", Failure))},
				{tick(false)},
				{done("c1", Success, nil)},
				probeOnce("c2", Success, ch(Readiness, "c2", Success)),
			},
		},
		{
			name: "liveness kills after failureThreshold and holds", kind: Liveness,
			probe: &v1.Probe{FailureThreshold: 2},
			steps: [][]step{
				{run("c1", ch(Liveness, "c1", Success))},
				probeOnce("c1", Failure, nil),
				probeOnce("c1", Success, nil),
				probeOnce("c1", Failure, nil),
				probeOnce("c1", Failure, ch(Liveness, "c1", Failure)),
				{tick(false), tick(false)}, // on hold until a new instance
				{stop("c1", nil)},
				{run("c2", ch(Liveness, "c2", Success))},
				probeOnce("c2", Failure, nil), // thresholds start over
				probeOnce("c2", Success, nil),
			},
		},
		{
			name: "liveness waits for the startup probe", kind: Liveness, waitForStartup: true,
			steps: [][]step{
				{run("c1", ch(Liveness, "c1", Success))},
				{tick(false)},
				{passed("c0"), tick(false)}, // another instance's startup
				{passed("c1")},
				probeOnce("c1", Failure, nil),
				{run("c2", ch(Liveness, "c2", Success))},
				{tick(false)}, // the new instance must pass its startup probe again
				{passed("c2")},
				probeOnce("c2", Failure, nil),
				probeOnce("c2", Failure, nil),
				probeOnce("c2", Failure, ch(Liveness, "c2", Failure)),
			},
		},
		{
			name: "readiness waits for the startup probe", kind: Readiness, waitForStartup: true,
			steps: [][]step{
				{run("c1", ch(Readiness, "c1", Failure))},
				{tick(false), passed("c1")},
				probeOnce("c1", Success, ch(Readiness, "c1", Success)),
			},
		},
		{
			name: "startup passes, then stops probing", kind: Startup, waitForStartup: true, // ignored for startup
			steps: [][]step{
				{run("c1", ch(Startup, "c1", Unknown))},
				probeOnce("c1", Failure, nil),
				probeOnce("c1", Unknown, nil),
				probeOnce("c1", Success, ch(Startup, "c1", Success)),
				{tick(false), passed("c1"), tick(false)},
				{stop("c1", nil)},
				{run("c2", ch(Startup, "c2", Unknown))},
				probeOnce("c2", Success, ch(Startup, "c2", Success)),
			},
		},
		{
			name: "startup fails and holds", kind: Startup, probe: &v1.Probe{FailureThreshold: 3},
			steps: [][]step{
				{run("c1", ch(Startup, "c1", Unknown))},
				probeOnce("c1", Failure, nil),
				probeOnce("c1", Failure, nil),
				probeOnce("c1", Failure, ch(Startup, "c1", Failure)),
				{tick(false)},
			},
		},
		{
			name: "container not running yet, then gone", kind: Liveness,
			steps: [][]step{
				{stop("c1", ch(Liveness, "c1", Success))}, // created, not started: a new instance all the same
				{tick(false)},
				{run("c1", nil)},
				{tick(true)},
				{run("", nil)}, // removed while probing
				{tick(false), done("c1", Failure, nil), tick(false)},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWorker(tt.kind, tt.probe, tt.waitForStartup)
			if w.Kind() != tt.kind {
				t.Fatalf("Kind() = %v", w.Kind())
			}
			n := 0
			for _, group := range tt.steps {
				for _, s := range group {
					n++
					where := fmt.Sprintf("step %d (%s %s %v)", n, s.op, s.id, s.r)
					var c Change
					var changed bool
					switch s.op {
					case "run":
						c, changed = w.SetContainer(s.id, true)
					case "stop":
						c, changed = w.SetContainer(s.id, false)
					case "passed":
						w.StartupPassed(s.id)
						continue
					case "tick":
						if got := w.Tick(); got != s.tick {
							t.Fatalf("%s: Tick() = %v, want %v", where, got, s.tick)
						}
						if s.tick && !w.InFlight() {
							t.Fatalf("%s: probe not in flight after Tick", where)
						}
						continue
					case "done":
						c, changed = w.Done(s.id, s.r)
						if w.InFlight() {
							t.Fatalf("%s: probe still in flight after Done", where)
						}
					}
					switch {
					case s.want == nil && changed:
						t.Fatalf("%s: change %+v, want none", where, c)
					case s.want != nil && (!changed || c != *s.want):
						t.Fatalf("%s: change %+v (%v), want %+v", where, c, changed, *s.want)
					case changed && (c.State != w.State() || c.ContainerID != w.ContainerID()):
						t.Fatalf("%s: change %+v disagrees with State() %v, ContainerID() %q", where, c, w.State(), w.ContainerID())
					}
				}
			}
		})
	}
}

func TestChangeKill(t *testing.T) {
	for _, tt := range []struct {
		c    Change
		kill bool
	}{
		{Change{Kind: Liveness, State: Failure}, true},
		{Change{Kind: Startup, State: Failure}, true},
		{Change{Kind: Readiness, State: Failure}, false},
		{Change{Kind: Liveness, State: Success}, false},
		{Change{Kind: Startup, State: Unknown}, false},
	} {
		if got := tt.c.Kill(); got != tt.kill {
			t.Errorf("%+v.Kill() = %v, want %v", tt.c, got, tt.kill)
		}
	}
}
