package actors

import (
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// preStop runs before SIGTERM and counts against the grace period.
func TestPreStopHookBeforeStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.ScriptExec("app", func(cmd []string) fake.ExecOutcome {
			return fake.ExecOutcome{Result: runtimeadapter.ExecResult{ExitCode: 0}, Duration: 4 * time.Second}
		})
		h := newHarness(t, rt)
		h.start()
		pod := testPod("web", "uid-hook", v1.RestartPolicyAlways, "app")
		grace := int64(10)
		pod.Spec.TerminationGracePeriodSeconds = &grace
		pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"drain"}}}}
		h.apply(pod)
		waitFor(t, 5*time.Second, "app running", func() bool { return len(rt.Running("uid-hook", "app")) == 1 })
		h.apply()
		waitFor(t, 30*time.Second, "pod gone", func() bool { return len(rt.Containers()) == 0 })
		var hookAt, stopAt time.Time
		for _, e := range rt.ExecCalls() {
			if len(e.Cmd) > 0 && e.Cmd[0] == "drain" {
				hookAt = e.Time
			}
		}
		var stopGrace time.Duration
		for _, c := range rt.Calls() {
			if c.Method == fake.MethodStop && stopAt.IsZero() && c.Grace != 10*time.Second {
				stopAt, stopGrace = c.Time, c.Grace
			}
		}
		if hookAt.IsZero() || stopAt.IsZero() {
			t.Fatalf("preStop at %v, app stop at %v; want both", hookAt, stopAt)
		}
		if stopAt.Sub(hookAt) != 4*time.Second {
			t.Errorf("stop came %v after the preStop hook started, want the hook's 4 s", stopAt.Sub(hookAt))
		}
		if stopGrace != 6*time.Second {
			t.Errorf("stop grace %v, want 10 s minus the hook's 4 s", stopGrace)
		}
		h.stop()
		rt.Close()
	})
}

// A failing postStart hook kills the container, which restarts per
// restartPolicy.
func TestFailedPostStartHookKills(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.SetExecResult("app", runtimeadapter.ExecResult{ExitCode: 1}, nil)
		h := newHarness(t, rt)
		h.start()
		pod := testPod("web", "uid-post", v1.RestartPolicyAlways, "app")
		pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"init"}}}}
		h.apply(pod)
		waitFor(t, 60*time.Second, "a second app container", func() bool { return len(h.creates("actorlet_app_")) >= 2 })
		if rt.CallCount(fake.MethodStop) == 0 {
			t.Fatal("the container whose postStart failed was not stopped")
		}
		h.stop()
		rt.Close()
	})
}
