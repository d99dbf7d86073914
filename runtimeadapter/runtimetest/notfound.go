package runtimetest

import (
	"errors"
	"strings"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// notFoundCases: every method says runtimeadapter.ErrNotFound (wrapped,
// naming the container) for a container that does not exist; callers
// read it as "already gone" (a removal that raced another, an agent
// restart).
var notFoundCases = []testCase{
	{"MissingContainer", func(e *env) {
		missing := []string{
			"conf_" + e.Node + "_missing",
			strings.Repeat("0f", 32), // a well-formed ID no container has
		}
		for _, ref := range missing {
			if _, err := e.Runtime.Inspect(e.ctx, ref); !errors.Is(err, runtimeadapter.ErrNotFound) {
				e.t.Errorf("Inspect(%s): %v, want ErrNotFound", ref, err)
			}
			check := func(method string, err error) {
				e.t.Helper()
				if !errors.Is(err, runtimeadapter.ErrNotFound) {
					e.t.Errorf("%s(%s): %v, want ErrNotFound", method, ref, err)
				} else if !strings.Contains(err.Error(), ref) {
					e.t.Errorf("%s(%s): %q does not name the container", method, ref, err)
				}
			}
			check("Start", e.Runtime.Start(e.ctx, ref))
			check("Stop", e.Runtime.Stop(e.ctx, ref, time.Second))
			check("Remove", e.Runtime.Remove(e.ctx, ref))
			if ex, ok := e.Runtime.(runtimeadapter.Execer); ok {
				_, err := ex.Exec(e.ctx, ref, []string{"true"}, time.Second)
				check("Exec", err)
			}
			if ls, ok := e.Runtime.(runtimeadapter.LogSource); ok {
				rc, err := ls.Logs(e.ctx, ref, runtimeadapter.LogOptions{})
				if rc != nil {
					rc.Close()
				}
				check("Logs", err)
			}
		}
	}},
	{"RemovedContainer", func(e *env) {
		id := e.run(e.app("app", Workload{}))
		if err := e.Runtime.Remove(e.ctx, id); err != nil {
			e.t.Fatal(err)
		}
		if err := e.Runtime.Remove(e.ctx, id); !errors.Is(err, runtimeadapter.ErrNotFound) {
			e.t.Errorf("second remove: %v, want ErrNotFound", err)
		}
		if err := e.Runtime.Stop(e.ctx, id, time.Second); !errors.Is(err, runtimeadapter.ErrNotFound) {
			e.t.Errorf("stop after remove: %v, want ErrNotFound", err)
		}
	}},
	{"JoiningAMissingContainer", func(e *env) {
		// A sandbox removed behind the pod's back: its app cannot run in
		// it. Docker creates the app and fails its start (ErrNotFound,
		// naming the sandbox), leaving it created with an Error, as any
		// failed start; an adapter may refuse the create instead.
		missing := "conf_" + e.Node + "_gone"
		app := e.app("app", Workload{})
		app.NetworkMode = "container:" + missing
		e.joinFails(app, missing, runtimeadapter.ErrNotFound)
	}},
	{"JoiningAStoppedContainer", func(e *env) {
		sid := e.run(e.spec(e.pod("p"), runtimeadapter.SandboxName, runtimeadapter.TypeSandbox, Workload{Exits: true, ExitAfter: shortExit}))
		if e.SandboxesRunUntilStopped {
			if err := e.Runtime.Stop(e.ctx, sid, grace); err != nil {
				e.t.Fatal(err)
			}
		}
		e.waitExited(sid)
		app := e.app("app", Workload{})
		app.NetworkMode = "container:" + sid
		e.joinFails(app, sid, nil)
	}},
	{"CreateWithAnAbsentImage", func(e *env) {
		if e.AbsentImage == "" {
			e.t.Fatal("runtimetest: Instance.AbsentImage is empty")
		}
		spec := e.app("app", Workload{})
		spec.Image = e.AbsentImage
		id, err := e.Runtime.Create(e.ctx, spec)
		if id != "" {
			e.track(id)
		}
		if !errors.Is(err, runtimeadapter.ErrNotFound) {
			e.t.Errorf("create from absent image %s: %v, want ErrNotFound", e.AbsentImage, err)
		} else if !strings.Contains(err.Error(), e.AbsentImage) {
			e.t.Errorf("create from an absent image: %q does not name it", err)
		}
	}},
}

// joinFails checks that spec, which joins the network of container
// joined, cannot run: its create fails with want (when not nil), or its
// start fails so (an error naming joined, wrapping want when not nil)
// and leaves it created, with an Error.
func (e *env) joinFails(spec runtimeadapter.ContainerSpec, joined string, want error) {
	e.t.Helper()
	id, err := e.Runtime.Create(e.ctx, spec)
	if id != "" {
		e.track(id)
	}
	if err != nil {
		if want != nil && !errors.Is(err, want) {
			e.t.Errorf("create joining %s: %v, want %v", joined, err, want)
		}
		return
	}
	err = e.Runtime.Start(e.ctx, id)
	switch {
	case err == nil:
		e.t.Fatalf("start joining %s: nil error", joined)
	case want != nil && !errors.Is(err, want):
		e.t.Errorf("start joining %s: %v, want %v", joined, err, want)
	case !strings.Contains(err.Error(), joined):
		e.t.Errorf("start joining %s: %q does not name it", joined, err)
	}
	if c := e.inspect(id); c.RawState != "created" || c.Error == "" || c.ExitCode != 128 {
		e.t.Errorf("after a start joining %s: %q, error %q, exit code %d; want created, an error, 128", joined, c.RawState, c.Error, c.ExitCode)
	}
}
