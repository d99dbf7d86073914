package actors

import (
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/podstate"
	"github.com/actorlet/actorlet/internal/probe"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

func execProbe(period, failures int32) *v1.Probe {
	return &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"check"}}},
		PeriodSeconds: period, FailureThreshold: failures, TimeoutSeconds: 1, SuccessThreshold: 1}
}

func podStatus(t *testing.T, h *harness, name string) v1.PodStatus {
	t.Helper()
	res, err := h.sys.Root.RequestFuture(h.pid, &messages.GetPodStatuses{}, time.Second).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.(*messages.PodStatuses).Pods {
		if p.Name == name {
			return p.Status
		}
	}
	t.Fatalf("no pod %s", name)
	return v1.PodStatus{}
}

// A liveness probe that starts failing kills the container after
// failureThreshold failed periods; it is then restarted per restartPolicy.
func TestLivenessFailureRestarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.SetExecResult("app", runtimeadapter.ExecResult{ExitCode: 0}, nil)
		h := newHarness(t, rt)
		h.start()
		pod := testPod("web", "uid-live", v1.RestartPolicyAlways, "app")
		pod.Spec.Containers[0].LivenessProbe = execProbe(10, 3)
		h.apply(pod)
		waitFor(t, 5*time.Second, "app running", func() bool { return len(rt.Running("uid-live", "app")) == 1 })
		time.Sleep(60 * time.Second) // healthy: nothing happens
		synctest.Wait()
		if n := len(h.creates("actorlet_app_")); n != 1 {
			t.Fatalf("%d app creates while healthy, want 1", n)
		}
		rt.SetExecResult("app", runtimeadapter.ExecResult{ExitCode: 1, Output: []byte("sick")}, nil)
		broke := time.Now()
		waitFor(t, 40*time.Second, "the app container killed", func() bool { return rt.CallCount(fake.MethodStop) > 0 })
		// The first failing probe comes within one period; three in a row
		// take two more periods.
		if d := time.Since(broke); d < 20*time.Second || d > 31*time.Second {
			t.Errorf("killed %v after the probe started failing, want within (20 s, 30 s]", d)
		}
		rt.SetExecResult("app", runtimeadapter.ExecResult{ExitCode: 0}, nil)
		waitFor(t, 30*time.Second, "a new app container", func() bool {
			return len(h.creates("actorlet_app_")) == 2 && len(rt.Running("uid-live", "app")) == 1
		})
		res, _ := h.sys.Root.RequestFuture(h.pid, &messages.GetEvents{}, time.Second).Result()
		unhealthy := false
		for _, e := range res.(*messages.Events).Items {
			if e.Reason == "Unhealthy" && e.Container == "app" {
				unhealthy = true
			}
		}
		if !unhealthy {
			t.Error("no Unhealthy event")
		}
		h.stop()
		rt.Close()
	})
}

// A hung exec probe counts as a failure at its timeout and never piles up.
func TestHungExecProbeNeverPilesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.SetExecHang("app")
		h := newHarness(t, rt)
		h.start()
		pod := testPod("web", "uid-hang", v1.RestartPolicyAlways, "app")
		p := execProbe(1, 3) // period 1 s, timeout 1 s
		p.TimeoutSeconds = 5 // longer than the period: the next tick finds it in flight
		pod.Spec.Containers[0].LivenessProbe = p
		h.apply(pod)
		waitFor(t, 60*time.Second, "the app container killed", func() bool { return rt.CallCount(fake.MethodStop) > 0 })
		if n := rt.ExecMaxInFlight("app"); n != 1 {
			t.Fatalf("%d execs in flight at once, want 1", n)
		}
		h.stop()
		// The replacement (a first exit restarts at once) may have an exec
		// in flight at the stop: its 5 s timeout answers a stopped probe
		// actor as the stop's own wait ends, and the dead letter's throttle
		// then waits an interval. Let it.
		time.Sleep(10 * time.Second)
		rt.Close()
	})
}

// A startup probe protects a slow starter: liveness waits until it passes;
// readiness then makes the pod Ready.
func TestStartupProbeProtectsSlowStarter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		var started atomic.Bool
		rt.ScriptExec("app", func(cmd []string) fake.ExecOutcome {
			if cmd[0] == "started" && started.Load() {
				return fake.ExecOutcome{Result: runtimeadapter.ExecResult{ExitCode: 0}}
			}
			if cmd[0] == "ready" {
				return fake.ExecOutcome{Result: runtimeadapter.ExecResult{ExitCode: 0}}
			}
			return fake.ExecOutcome{Result: runtimeadapter.ExecResult{ExitCode: 1}} // liveness would fail
		})
		h := newHarness(t, rt)
		h.start()
		pod := testPod("slow", "uid-slow", v1.RestartPolicyAlways, "app")
		c := &pod.Spec.Containers[0]
		c.LivenessProbe = execProbe(1, 1)
		c.LivenessProbe.Exec.Command = []string{"alive"}
		c.StartupProbe = execProbe(1, 60)
		c.StartupProbe.Exec.Command = []string{"started"}
		c.ReadinessProbe = execProbe(1, 1)
		c.ReadinessProbe.Exec.Command = []string{"ready"}
		h.apply(pod)
		time.Sleep(30 * time.Second) // a slow start: liveness would have killed it long ago
		synctest.Wait()
		if n := rt.CallCount(fake.MethodStop); n != 0 {
			t.Fatalf("%d stops while the startup probe had not passed", n)
		}
		st := podStatus(t, h, "slow")
		if cs := st.ContainerStatuses[0]; cs.Ready || cs.Started == nil || *cs.Started {
			t.Fatalf("before startup: ready %v started %v, want false, false", cs.Ready, cs.Started)
		}
		started.Store(true)
		// Startup passes, then liveness (always failing here) kills it.
		waitFor(t, 10*time.Second, "liveness kills after startup passed", func() bool { return rt.CallCount(fake.MethodStop) > 0 })
		h.stop()
		rt.Close()
	})
}

// Readiness sets the container's ready and the pod's Ready condition.
func TestReadinessSetsReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		var ok atomic.Bool
		rt.ScriptExec("app", func([]string) fake.ExecOutcome {
			if ok.Load() {
				return fake.ExecOutcome{Result: runtimeadapter.ExecResult{ExitCode: 0}}
			}
			return fake.ExecOutcome{Result: runtimeadapter.ExecResult{ExitCode: 1}}
		})
		h := newHarness(t, rt)
		h.start()
		pod := testPod("web", "uid-ready", v1.RestartPolicyAlways, "app")
		pod.Spec.Containers[0].ReadinessProbe = execProbe(2, 1)
		h.apply(pod)
		podReady := func() bool {
			for _, c := range podStatus(t, h, "web").Conditions {
				if c.Type == v1.PodReady {
					return c.Status == v1.ConditionTrue
				}
			}
			return false
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if podReady() {
			t.Fatal("pod Ready while its readiness probe fails")
		}
		ok.Store(true)
		waitFor(t, 5*time.Second, "pod Ready", podReady)
		ok.Store(false)
		waitFor(t, 5*time.Second, "pod not Ready again", func() bool { return !podReady() })
		if n := rt.CallCount(fake.MethodStop); n != 0 {
			t.Fatalf("readiness failures killed the container (%d stops)", n)
		}
		h.stop()
		rt.Close()
	})
}

// Each failed probe run has its Unhealthy event, as the kubelet's prober
// records them: a liveness kill after failureThreshold 3 shows three
// "Liveness probe failed: <output>" events, then one Killing "Container
// app failed liveness probe, will be restarted"; a failing readiness
// probe one event per failed run, and no kill.
func TestProbeFailuresEachHaveAnEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.SetExecResult("app", runtimeadapter.ExecResult{ExitCode: 1, Output: []byte("sick")}, nil)
		rt.SetExecResult("web", runtimeadapter.ExecResult{ExitCode: 1, Output: []byte("not yet")}, nil)
		h := newHarness(t, rt)
		h.start()
		live := testPod("live", "uid-live", v1.RestartPolicyAlways, "app")
		live.Spec.Containers[0].LivenessProbe = execProbe(10, 3)
		ready := testPod("ready", "uid-ready", v1.RestartPolicyAlways, "web")
		ready.Spec.Containers[0].ReadinessProbe = execProbe(10, 3)
		h.apply(live, ready)
		waitFor(t, 60*time.Second, "the app container killed", func() bool { return rt.CallCount(fake.MethodStop) > 0 })
		synctest.Wait()
		evs := podEvents(t, h, "live")
		var seq []string
		for _, e := range evs {
			if e.Reason == "Unhealthy" || e.Reason == "Killing" {
				seq = append(seq, string(e.Type)+" "+e.Reason+" "+e.Message)
			}
		}
		want := []string{
			"Warning Unhealthy Liveness probe failed: sick",
			"Warning Unhealthy Liveness probe failed: sick",
			"Warning Unhealthy Liveness probe failed: sick",
			"Normal Killing Container app failed liveness probe, will be restarted",
		}
		if strings.Join(seq, "\n") != strings.Join(want, "\n") {
			t.Errorf("liveness events:\n%s\nwant:\n%s", strings.Join(seq, "\n"), strings.Join(want, "\n"))
		}
		time.Sleep(45 * time.Second) // four or five more readiness runs
		synctest.Wait()
		runs := 0
		for _, c := range rt.ExecCalls() {
			if c.Container == "web" && c.Done {
				runs++
			}
		}
		n := len(eventsWith(podEvents(t, h, "ready"), "Unhealthy", "Readiness probe failed: not yet"))
		if n != runs || runs < 5 {
			t.Errorf("%d readiness Unhealthy events for %d failed runs, want one per run", n, runs)
		}
		if len(rt.Running("uid-ready", "web")) != 1 {
			t.Error("the unready container is not running")
		}
		h.stop()
		rt.Close()
	})
}

// Under restartPolicy Never the Killing message does not promise a restart.
func TestProbeKillMessage(t *testing.T) {
	for _, tt := range []struct {
		kind   probe.Kind
		policy v1.RestartPolicy
		want   string
	}{
		{probe.Liveness, v1.RestartPolicyAlways, "Container app failed liveness probe, will be restarted"},
		{probe.Liveness, v1.RestartPolicyOnFailure, "Container app failed liveness probe, will be restarted"},
		{probe.Startup, v1.RestartPolicyAlways, "Container app failed startup probe, will be restarted"},
		{probe.Liveness, v1.RestartPolicyNever, "Container app failed liveness probe"},
	} {
		if got := podstate.ProbeKillMessage("app", tt.kind, tt.policy); got != tt.want {
			t.Errorf("%s, %s: %q, want %q", tt.kind, tt.policy, got, tt.want)
		}
	}
}
