package actors

import (
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// One hung runtime call (a create that never answers) stalls only its pod:
// other pods start and the PLEG goes on relisting.
func TestHungCallStallsOnlyItsPod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.Hang(fake.MethodCreate, "actorlet_app_stuck_")
		h := newHarness(t, rt)
		h.start()
		h.apply(testPod("stuck", "uid-stuck", v1.RestartPolicyAlways, "app"), testPod("fine", "uid-fine", v1.RestartPolicyAlways, "app"))
		waitFor(t, 10*time.Second, "the other pod running", func() bool { return len(rt.Running("uid-fine", "app")) == 1 })
		lists := rt.CallCount(fake.MethodList)
		time.Sleep(30 * time.Second)
		synctest.Wait()
		if n := rt.CallCount(fake.MethodList); n <= lists {
			t.Fatal("the PLEG stopped relisting while one create hung")
		}
		if len(rt.Running("uid-stuck", "app")) != 0 {
			t.Fatal("the hung create went through")
		}
		rt.ClearFaults() // the daemon answers again
		waitFor(t, 3*time.Minute, "the stuck pod running", func() bool { return len(rt.Running("uid-stuck", "app")) == 1 })
		if n := len(rt.Running("uid-stuck", "app")); n != 1 {
			t.Fatalf("%d running app containers of the stuck pod, want 1", n)
		}
		h.stop()
		rt.Close()
	})
}

// The runtime restarted underneath actorlet without live-restore: every
// container died while lists failed. Nothing is done while lists fail;
// then each container is recreated once as its restartPolicy says (Always
// yes; Never and a completed OnFailure no), and the exits that happened
// while the daemon was away are seen by relist.
func TestRuntimeRestartUnderneath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("done", fake.Behavior{ExitCode: 0, ExitAfter: time.Second})
		h := newHarness(t, rt)
		h.cfg.EventRelistPeriod = -1 // the event stream would die with the daemon anyway
		h.start()
		h.apply(testPod("always", "uid-a", v1.RestartPolicyAlways, "app"),
			testPod("never", "uid-n", v1.RestartPolicyNever, "app"),
			testPod("job", "uid-j", v1.RestartPolicyOnFailure, "done"))
		waitFor(t, 10*time.Second, "pods up", func() bool {
			return len(rt.Running("uid-a", "app")) == 1 && len(rt.Running("uid-n", "app")) == 1
		})
		time.Sleep(5 * time.Second) // the job completes
		synctest.Wait()
		rt.InjectError(fake.MethodList, runtimeadapter.ErrUnavailable, -1) // the daemon goes away
		for _, c := range rt.Containers() {
			if c.State == runtimeadapter.StateRunning {
				_ = rt.Kill(c.ID, 255) // and every container dies with it
			}
		}
		rt.ResetCalls() // from here on the call log counts only what follows
		time.Sleep(20 * time.Second)
		synctest.Wait()
		for _, c := range rt.Calls() {
			if c.Method == fake.MethodCreate || c.Method == fake.MethodStart || c.Method == fake.MethodStop {
				t.Fatalf("%s(%s) while the runtime was away", c.Method, c.Arg)
			}
		}
		rt.ClearFaults() // the daemon is back
		waitFor(t, 2*time.Minute, "the Always pod running again", func() bool { return len(rt.Running("uid-a", "app")) == 1 })
		time.Sleep(30 * time.Second)
		synctest.Wait()
		if n := len(h.creates("actorlet_app_always_")); n != 1 {
			t.Errorf("Always pod: %d app creates after the restart, want 1", n)
		}
		if n := len(h.creates("actorlet_app_never_")); n != 0 {
			t.Errorf("Never pod: %d app creates after the restart, want 0", n)
		}
		if n := len(h.creates("actorlet_done_job_")); n != 0 {
			t.Errorf("completed OnFailure pod: %d creates after the restart, want 0", n)
		}
		h.stop()
		rt.Close()
	})
}

// The runtime restarted underneath actorlet with live-restore: lists fail
// for a while, the containers keep running. Nothing running is touched,
// during the outage or after it.
func TestRuntimeRestartUnderneathLiveRestore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		h := newHarness(t, rt)
		h.cfg.EventRelistPeriod = -1
		h.start()
		h.apply(testPod("always", "uid-a", v1.RestartPolicyAlways, "app"),
			testPod("never", "uid-n", v1.RestartPolicyNever, "app"))
		waitFor(t, 10*time.Second, "pods up", func() bool {
			return len(rt.Running("uid-a", "app")) == 1 && len(rt.Running("uid-n", "app")) == 1
		})
		time.Sleep(5 * time.Second)
		synctest.Wait()
		rt.InjectError(fake.MethodList, runtimeadapter.ErrUnavailable, -1) // the daemon restarts
		rt.ResetCalls()
		time.Sleep(30 * time.Second)
		rt.ClearFaults() // back, with every container still running
		time.Sleep(time.Minute)
		synctest.Wait()
		for _, c := range rt.Calls() {
			switch c.Method {
			case fake.MethodCreate, fake.MethodStart, fake.MethodStop, fake.MethodRemove:
				t.Errorf("%s(%s) across a live-restore restart of the runtime", c.Method, c.Arg)
			}
		}
		if len(rt.Running("uid-a", "app")) != 1 || len(rt.Running("uid-n", "app")) != 1 {
			t.Error("a container stopped running")
		}
		h.stop()
		rt.Close()
	})
}
