package actors

import (
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// sidecarTestPod: sidecars s1 and s2 around the regular init container
// setup, then apps a and b.
func sidecarTestPod(uid string, policy v1.RestartPolicy, apps ...string) *v1.Pod {
	pod := testPod("web", uid, policy, apps...)
	always := v1.ContainerRestartPolicyAlways
	pod.Spec.InitContainers = []v1.Container{
		{Name: "s1", Image: "work:1", RestartPolicy: &always},
		{Name: "setup", Image: "work:1"},
		{Name: "s2", Image: "work:1", RestartPolicy: &always},
	}
	return pod
}

// A removed pod stops its apps first, then its sidecars one at a time from
// the last to the first, then the sandbox, all within the pod's grace.
func TestRemovalStopsSidecarsAfterAppsInReverseOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("setup", fake.Behavior{ExitAfter: time.Second})
		h := newHarness(t, rt)
		h.start()
		pod := sidecarTestPod("uid-side", v1.RestartPolicyAlways, "a", "b")
		grace := int64(7)
		pod.Spec.TerminationGracePeriodSeconds = &grace
		h.apply(pod)
		waitFor(t, 20*time.Second, "apps and sidecars running", func() bool {
			return len(rt.Running("uid-side", "a")) == 1 && len(rt.Running("uid-side", "b")) == 1 &&
				len(rt.Running("uid-side", "s1")) == 1 && len(rt.Running("uid-side", "s2")) == 1
		})
		waitFor(t, 5*time.Second, "pod Running and Ready", func() bool {
			st := podStatus(t, h, "web")
			return st.Phase == v1.PodRunning && len(st.Conditions) == 4 && st.Conditions[3].Status == v1.ConditionTrue
		})
		names := map[string]string{}
		for _, c := range rt.Containers() {
			names[c.ID] = c.Labels[runtimeadapter.LabelContainerName]
		}
		rt.ResetCalls()
		h.apply()
		waitFor(t, 60*time.Second, "no containers", func() bool { return len(rt.Containers()) == 0 })
		var order []string
		for _, c := range rt.Calls() {
			if c.Method == fake.MethodStop {
				order = append(order, names[c.Arg])
				if c.Grace > 7*time.Second || c.Grace < 2*time.Second {
					t.Errorf("stop %s with grace %v, want within the pod's 7s", names[c.Arg], c.Grace)
				}
			}
		}
		if len(order) != 5 || !(order[0] == "a" && order[1] == "b" || order[0] == "b" && order[1] == "a") ||
			order[2] != "s2" || order[3] != "s1" || order[4] != runtimeadapter.SandboxName {
			t.Fatalf("stop order %v, want a and b, then s2, s1, then the sandbox", order)
		}
		h.stop()
		rt.Close()
	})
}

// Under restartPolicy Never a killed sidecar is restarted while the app
// runs on (same instance); once the app is done the pod is Succeeded and
// its sidecars are stopped, not restarted.
func TestSidecarRestartedUnderNeverAndStoppedWhenAppsFinish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("setup", fake.Behavior{ExitAfter: time.Second})
		rt.ScriptContainer("a", fake.Behavior{ExitAfter: 40 * time.Second})
		h := newHarness(t, rt)
		h.start()
		h.apply(sidecarTestPod("uid-never", v1.RestartPolicyNever, "a"))
		waitFor(t, 20*time.Second, "app and sidecars running", func() bool {
			return len(rt.Running("uid-never", "a")) == 1 && len(rt.Running("uid-never", "s1")) == 1 && len(rt.Running("uid-never", "s2")) == 1
		})
		app := rt.Running("uid-never", "a")[0].ID
		if err := rt.Kill(rt.Running("uid-never", "s1")[0].ID, 137); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 20*time.Second, "s1 restarted", func() bool {
			r := rt.Running("uid-never", "s1")
			return len(r) == 1 && r[0].Labels[runtimeadapter.LabelRestartCount] == "1"
		})
		if r := rt.Running("uid-never", "a"); len(r) != 1 || r[0].ID != app {
			t.Fatalf("app instances %v, want %s running on", r, app)
		}
		st := podStatus(t, h, "web")
		if st.Phase != v1.PodRunning || st.ContainerStatuses[0].RestartCount != 0 || st.InitContainerStatuses[0].RestartCount != 1 {
			t.Fatalf("phase %s, app restarts %d, s1 restarts %d; want Running, 0, 1", st.Phase,
				st.ContainerStatuses[0].RestartCount, st.InitContainerStatuses[0].RestartCount)
		}
		waitFor(t, 60*time.Second, "pod Succeeded with its sidecars stopped", func() bool {
			return podStatus(t, h, "web").Phase == v1.PodSucceeded && len(rt.Running("uid-never", "s1")) == 0 && len(rt.Running("uid-never", "s2")) == 0
		})
		time.Sleep(30 * time.Second)
		synctest.Wait()
		if n := len(h.creates("actorlet_s1_")); n != 2 {
			t.Fatalf("s1 created %d times, want 2 (not restarted once the pod is done)", n)
		}
		if st := podStatus(t, h, "web"); st.Phase != v1.PodSucceeded {
			t.Fatalf("phase %s after the sidecars stopped, want Succeeded", st.Phase)
		}
		h.stop()
		rt.Close()
	})
}

// A sidecar is probed: its readiness counts toward the pod's Ready, and a
// failed liveness probe kills it, to be restarted whatever restartPolicy.
func TestSidecarProbes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("setup", fake.Behavior{ExitAfter: time.Second})
		rt.SetExecResult("s1", runtimeadapter.ExecResult{ExitCode: 0}, nil)
		rt.SetExecResult("s2", runtimeadapter.ExecResult{ExitCode: 1}, nil)
		h := newHarness(t, rt)
		h.start()
		pod := sidecarTestPod("uid-probed", v1.RestartPolicyNever, "a")
		pod.Spec.InitContainers[0].LivenessProbe = execProbe(1, 3)
		pod.Spec.InitContainers[2].ReadinessProbe = execProbe(1, 1)
		h.apply(pod)
		waitFor(t, 20*time.Second, "app running", func() bool { return len(rt.Running("uid-probed", "a")) == 1 })
		ready := func() bool {
			st := podStatus(t, h, "web")
			for _, c := range st.Conditions {
				if c.Type == v1.PodReady {
					return c.Status == v1.ConditionTrue
				}
			}
			return false
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if ready() {
			t.Fatal("pod Ready while its sidecar s2 fails its readiness probe")
		}
		rt.SetExecResult("s2", runtimeadapter.ExecResult{ExitCode: 0}, nil)
		waitFor(t, 10*time.Second, "pod Ready once s2 is", ready)

		rt.SetExecResult("s1", runtimeadapter.ExecResult{ExitCode: 1}, nil)
		waitFor(t, 30*time.Second, "s1 killed and restarted", func() bool {
			r := rt.Running("uid-probed", "s1")
			return len(r) == 1 && r[0].Labels[runtimeadapter.LabelRestartCount] != "0"
		})
		if n := len(eventsWith(podEvents(t, h, "web"), "Killing", "Init container s1 failed liveness probe")); n != 1 {
			t.Errorf("%d Killing events \"Init container s1 failed liveness probe\", want 1", n)
		}
		h.stop()
		rt.Close()
	})
}
