package runtimetest

import (
	"context"
	"errors"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// contextCases: no call outlives its context, and a call that could not
// finish in time fails with runtimeadapter.ErrUnavailable, never with an
// empty or partial answer (a relist reads a failed List as "runtime
// down", not as "no containers").
var contextCases = []testCase{
	{"EndedContextFailsEveryMethod", func(e *env) {
		id := e.run(e.app("app", Workload{}))
		cancelled, cancel := context.WithCancel(e.ctx)
		cancel()
		expired, cancel2 := context.WithDeadline(e.ctx, time.Now().Add(-time.Second))
		defer cancel2()
		for _, ctx := range []context.Context{cancelled, expired} {
			check := func(method string, err error) {
				e.t.Helper()
				if !errors.Is(err, ctx.Err()) {
					e.t.Errorf("%s with an ended context (%v): %v; want an error wrapping it", method, ctx.Err(), err)
				}
				if errors.Is(ctx.Err(), context.DeadlineExceeded) && !errors.Is(err, runtimeadapter.ErrUnavailable) {
					e.t.Errorf("%s past its deadline: %v; want ErrUnavailable", method, err)
				}
			}
			res, err := e.Runtime.List(ctx, runtimeadapter.ListOptions{Node: e.Node, All: true})
			check("List", err)
			if err != nil && len(res.Containers) > 0 {
				e.t.Errorf("failed List returned %d containers", len(res.Containers))
			}
			_, err = e.Runtime.Inspect(ctx, id)
			check("Inspect", err)
			_, err = e.Runtime.Create(ctx, e.app("late", Workload{}))
			check("Create", err)
			check("Stop", e.Runtime.Stop(ctx, id, grace))
		}
		// Nothing was done: the container still runs, "late" was not
		// created.
		if c := e.inspect(id); c.State != runtimeadapter.StateRunning {
			e.t.Errorf("container after calls with ended contexts: %q, want running", c.State)
		}
		if got := e.list(runtimeadapter.ListOptions{All: true}).Containers; len(got) != 1 {
			for _, c := range got {
				e.track(c.ID)
			}
			e.t.Errorf("List after a Create with an ended context: %d containers, want 1", len(got))
		}
	}},
	{"StopOutlivesItsContext", func(e *env) {
		// A Stop whose caller gives up is still carried out, as by a
		// daemon that outlives its client: the container is killed when
		// its grace ends.
		id := e.run(e.app("stubborn", Workload{IgnoreSIGTERM: true}))
		e.ready(id)
		const grace = 2 * time.Second
		ctx, cancel := context.WithTimeout(e.ctx, 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := e.Runtime.Stop(ctx, id, grace)
		if !errors.Is(err, runtimeadapter.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
			e.t.Errorf("Stop past its deadline: %v; want ErrUnavailable and DeadlineExceeded", err)
		}
		if took := time.Since(start); took > grace {
			e.t.Errorf("Stop returned after %v, past its context's deadline", took)
		}
		c := e.waitExited(id)
		if c.ExitCode != 137 {
			e.t.Errorf("exit code %d, want 137 (killed at the end of its grace)", c.ExitCode)
		}
		if took := c.FinishedAt.Sub(start); took < grace-100*time.Millisecond {
			e.t.Errorf("killed %v after the stop, before its grace %v", took, grace)
		}
	}},
}
