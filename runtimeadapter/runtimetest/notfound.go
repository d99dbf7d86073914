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
