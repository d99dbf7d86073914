package runtimetest

import (
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// stopCases: Stop sends SIGTERM, SIGKILL after the grace period, and
// returns once the container has stopped (the pod actor's termination
// waits on it, in the pod's order: apps, then the sandbox).
var stopCases = []testCase{
	{"SIGTERMEndsAWellBehavedContainer", func(e *env) {
		id := e.run(e.app("app", Workload{}))
		e.ready(id)
		start := time.Now()
		if err := e.Runtime.Stop(e.ctx, id, 10*time.Second); err != nil {
			e.t.Fatal(err)
		}
		if took := time.Since(start); took > 5*time.Second {
			e.t.Errorf("stop of a container that exits on SIGTERM took %v, want well under its 10 s grace", took)
		}
		// Stop returned: the container has stopped.
		c := e.inspect(id)
		if c.State != runtimeadapter.StateExited || c.ExitCode != 0 || c.Reason != "Completed" {
			e.t.Errorf("after stop: %q, exit %d, reason %q; want exited, 0 (its own exit on SIGTERM), Completed", c.State, c.ExitCode, c.Reason)
		}
		if c.FinishedAt.IsZero() || c.FinishedAt.Before(c.StartedAt) {
			e.t.Errorf("after stop: started %v, finished %v", c.StartedAt, c.FinishedAt)
		}
	}},
	{"SIGKILLAfterGrace", func(e *env) {
		id := e.run(e.app("stubborn", Workload{IgnoreSIGTERM: true}))
		e.ready(id)
		start := time.Now()
		if err := e.Runtime.Stop(e.ctx, id, grace); err != nil {
			e.t.Fatal(err)
		}
		if took := time.Since(start); took < grace-100*time.Millisecond || took > grace+slack {
			e.t.Errorf("stop of a container ignoring SIGTERM took %v, want its grace %v (and a little)", took, grace)
		}
		c := e.inspect(id)
		if c.State != runtimeadapter.StateExited || c.ExitCode != 137 || c.Reason != "Error" {
			e.t.Errorf("after stop: %q, exit %d, reason %q; want exited, 137 (SIGKILL), Error", c.State, c.ExitCode, c.Reason)
		}
	}},
	{"ZeroGraceKillsAtOnce", func(e *env) {
		id := e.run(e.app("app", Workload{IgnoreSIGTERM: true}))
		e.ready(id)
		start := time.Now()
		if err := e.Runtime.Stop(e.ctx, id, 0); err != nil {
			e.t.Fatal(err)
		}
		if took := time.Since(start); took > slack {
			e.t.Errorf("stop with no grace took %v", took)
		}
		if c := e.inspect(id); c.State != runtimeadapter.StateExited || c.ExitCode != 137 {
			e.t.Errorf("after stop with no grace: %q, exit %d; want exited, 137", c.State, c.ExitCode)
		}
	}},
	{"StopOfAStoppedContainerIsNotAnError", func(e *env) {
		id := e.run(e.app("app", Workload{Exits: true, ExitCode: 4, ExitAfter: shortExit}))
		e.waitExited(id)
		if err := e.Runtime.Stop(e.ctx, id, grace); err != nil {
			e.t.Errorf("stop of an exited container: %v", err)
		}
		if c := e.inspect(id); c.ExitCode != 4 {
			e.t.Errorf("stop of an exited container changed its exit code to %d", c.ExitCode)
		}
	}},
	{"StopOfACreatedContainerIsNotAnError", func(e *env) {
		id := e.create(e.app("app", Workload{}))
		if err := e.Runtime.Stop(e.ctx, id, grace); err != nil {
			e.t.Errorf("stop of a created container: %v", err)
		}
		if c := e.inspect(id); c.State == runtimeadapter.StateRunning {
			e.t.Errorf("stop of a created container started it")
		}
	}},
}

// removeCases: Remove deletes a container whatever its state.
var removeCases = []testCase{
	{"RemoveExited", func(e *env) {
		id := e.run(e.app("app", Workload{Exits: true, ExitAfter: shortExit}))
		e.waitExited(id)
		e.remove(id)
	}},
	{"RemoveCreated", func(e *env) {
		e.remove(e.create(e.app("app", Workload{})))
	}},
	{"RemoveRunningKillsIt", func(e *env) {
		id := e.run(e.app("app", Workload{IgnoreSIGTERM: true}))
		e.ready(id)
		start := time.Now()
		e.remove(id)
		if took := time.Since(start); took > slack {
			e.t.Errorf("remove of a running container took %v", took)
		}
	}},
	{"RemoveFreesTheName", func(e *env) {
		spec := e.app("app", Workload{})
		e.remove(e.create(spec))
		e.create(spec)
	}},
}

// remove removes id and checks it is gone.
func (e *env) remove(id string) {
	e.t.Helper()
	if err := e.Runtime.Remove(e.ctx, id); err != nil {
		e.t.Fatalf("remove %s: %v", id, err)
	}
	if c, err := e.Runtime.Inspect(e.ctx, id); err == nil {
		e.t.Errorf("inspect after remove: %+v, want not found", c)
	}
	if got := ids(e.list(runtimeadapter.ListOptions{All: true}).Containers); got[id] {
		e.t.Errorf("container %s listed after its removal", id)
	}
}
