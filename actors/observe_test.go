package actors

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
	"github.com/actorlet/actorlet/supervision"
)

// unversioned is the fake without state versions, as Docker's adapter:
// pod actors order its listings by the spans of the List calls.
type unversioned struct{ *fake.Runtime }

func (u unversioned) List(ctx context.Context, o runtimeadapter.ListOptions) (runtimeadapter.ListResult, error) {
	r, err := u.Runtime.List(ctx, o)
	r.Version = 0
	return r, err
}

// A relist whose List began before a pod actor's own list but returned a
// death that came after it (a slow List, as on a loaded Docker) must not
// be dropped as older: the PLEG reports a transition once, so the death
// would be lost and the container never restarted. (Found by the restart
// benchmark: 4 of 24 pods never restarted.)
func TestSlowRelistDeathIsNotLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		h := newHarness(t, rt)
		h.cfg.Runtime = unversioned{rt}
		h.cfg.Backoff = supervision.BackoffPolicy{} // restart at once
		h.start()
		defer h.stop()
		b := testPod("b", "uid-b", v1.RestartPolicyAlways, "app")
		a := testPod("a", "uid-a", v1.RestartPolicyAlways, "app")
		h.apply(b)
		waitFor(t, 5*time.Second, "b's app running", func() bool { return len(h.live("uid-b", "app")) == 1 })

		// The relist's next List hangs (a pod actor's own List names its
		// pod; the relist's names none); b's death triggers it.
		rt.Hang(fake.MethodList, "pod= ")
		if err := rt.Kill(h.live("uid-b", "app")[0].ID, 137); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		// Pod a starts meanwhile: its actor lists its pod after the hung
		// relist began.
		h.apply(b, a)
		waitFor(t, 5*time.Second, "a's app running", func() bool { return len(h.live("uid-a", "app")) == 1 })
		time.Sleep(100 * time.Millisecond)
		// a's container dies; then the hung relist returns, and sees it.
		dead := h.live("uid-a", "app")[0].ID
		if err := rt.Kill(dead, 137); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		rt.ClearFaults()
		waitFor(t, 3*time.Second, "a's app restarted", func() bool {
			live := h.live("uid-a", "app")
			return len(live) == 1 && live[0].ID != dead
		})
	})
}

// A pod actor whose own list fails after a sync must not plan on what it
// held before: when the runtime answers again it lists first. Else it
// re-creates the attempt it already made, and the name conflict with the
// exited instance would restart that instance in place (restartCount 0, no
// CrashLoopBackOff, the exit lost).
func TestListFailureAfterSyncListsBeforePlanning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		h := newHarness(t, rt)
		h.start()
		defer h.stop()
		p := testPod("p", "uid-p", v1.RestartPolicyAlways, "app")
		// The app's start is slow: the sync's own list comes after the
		// outage begins, and the container dies during the outage.
		rt.SetDelay(fake.MethodStart, time.Second)
		h.apply(p)
		time.Sleep(500 * time.Millisecond) // the sandbox is up; the app's start is under way
		rt.InjectError(fake.MethodList, runtimeadapter.ErrUnavailable, -1)
		waitFor(t, 5*time.Second, "the app running", func() bool {
			live := h.live("uid-p", "app")
			return len(live) == 1 && live[0].State == runtimeadapter.StateRunning
		})
		app := h.live("uid-p", "app")[0]
		synctest.Wait()
		if err := rt.Kill(app.ID, 1); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Second)
		rt.ClearFaults()
		waitFor(t, 30*time.Second, "a new instance of the app", func() bool {
			live := h.live("uid-p", "app")
			return len(live) == 1 && live[0].ID != app.ID
		})
		live := h.live("uid-p", "app")[0]
		m, err := runtimeadapter.ParseMeta(live.Labels)
		if err != nil {
			t.Fatal(err)
		}
		if m.RestartCount != 1 {
			t.Errorf("restartCount %d after one exit, want 1 (the exited instance was started again in place?)", m.RestartCount)
		}
		for _, c := range rt.Calls() {
			if c.Method == fake.MethodStart && c.Arg == app.ID && c.Time.After(app.StartedAt.Add(time.Second)) {
				t.Errorf("the exited instance %s was started again at %s", app.ID[:12], c.Time)
			}
		}
	})
}

// createAndStart adopts a container of its deterministic name only if it
// was created and never started (it starts it) or runs (it leaves it);
// one that already ran is never started again.
func TestCreateAdoptsOnlyCreatedOrRunning(t *testing.T) {
	for _, tc := range []struct {
		raw       string
		state     runtimeadapter.State
		wantErr   bool
		wantStart bool
	}{
		{"created", runtimeadapter.StateUnknown, false, true},
		{"running", runtimeadapter.StateRunning, false, false},
		{"exited", runtimeadapter.StateExited, true, false},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			rt := fake.New(fake.AutoImages(true))
			defer rt.Close()
			spec := runtimeadapter.ContainerSpec{Name: "actorlet_app_p_default_1234_0", Image: "img:1"}
			id := rt.AddContainer(runtimeadapter.Container{Name: spec.Name, Image: "img:1", State: tc.state, RawState: tc.raw})
			w := &worker{cfg: Config{Runtime: rt, RuntimeTimeout: time.Minute}.withDefaults(), uid: "uid-p", log: zap.NewNop()}
			got, err := w.createAndStart(spec, nil, nil)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error: %v", err, tc.wantErr)
			}
			if !tc.wantErr && got != id {
				t.Errorf("adopted %s, want the existing %s", got, id)
			}
			if n := rt.CallCount(fake.MethodStart); (n > 0) != tc.wantStart {
				t.Errorf("%d Start calls, want a start: %v", n, tc.wantStart)
			}
		})
	}
}

// A die event reaches the pod actor at once and the container is restarted
// without waiting for a relist (here the relist's List hangs).
func TestDieEventRestartsWithoutRelist(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		h := newHarness(t, rt)
		h.cfg.Backoff = supervision.BackoffPolicy{} // restart at once
		h.start()
		defer h.stop()
		h.apply(testPod("p", "uid-p", v1.RestartPolicyAlways, "app"))
		waitFor(t, 5*time.Second, "the app running", func() bool {
			live := h.live("uid-p", "app")
			return len(live) == 1 && live[0].State == runtimeadapter.StateRunning
		})
		time.Sleep(time.Second)
		synctest.Wait()
		rt.Hang(fake.MethodList, "pod= ") // the relist's lists hang; a pod's own do not
		dead := h.live("uid-p", "app")[0]
		if err := rt.Kill(dead.ID, 3); err != nil {
			t.Fatal(err)
		}
		waitFor(t, time.Second, "the app restarted", func() bool {
			live := h.live("uid-p", "app")
			return len(live) == 1 && live[0].ID != dead.ID
		})
		m, err := runtimeadapter.ParseMeta(h.live("uid-p", "app")[0].Labels)
		if err != nil || m.RestartCount != 1 {
			t.Errorf("restart count %d (%v), want 1", m.RestartCount, err)
		}
		rt.ClearFaults()
		time.Sleep(10 * time.Second) // the relist reports the same death: no second restart
		synctest.Wait()
		if n := len(h.creates("actorlet_app_p_")); n != 2 {
			t.Errorf("%d app creates, want 2 (the first and one restart)", n)
		}
	})
}

// A pod removed and at once desired again (same UID) runs again: the new
// pod actor is spawned once the old one has stopped (its name is taken
// until then).
func TestPodReaddedAtOnceRunsAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The old pod actor takes 2 s to stop (as one waiting for its
		// runtime call to end would).
		hook := func(uid types.UID, msg any) {
			if _, ok := msg.(*actor.Stopping); ok && uid == "uid-p" {
				time.Sleep(2 * time.Second)
			}
		}
		podReceiveHook.Store(&hook)
		defer podReceiveHook.Store(nil)
		rt := fake.New(fake.AutoImages(true))
		h := newHarness(t, rt)
		h.start()
		defer h.stop()
		p := testPod("p", "uid-p", v1.RestartPolicyAlways, "app")
		p.Spec.TerminationGracePeriodSeconds = new(int64)
		for round := range 3 {
			h.apply(p)
			waitFor(t, 10*time.Second, fmt.Sprintf("round %d: the app running", round), func() bool {
				live := h.live("uid-p", "app")
				return len(live) == 1 && live[0].State == runtimeadapter.StateRunning
			})
			h.apply()
			waitFor(t, 10*time.Second, fmt.Sprintf("round %d: the pod's containers gone", round), func() bool {
				for _, c := range rt.Containers() {
					if c.Labels[runtimeadapter.LabelPodUID] == "uid-p" {
						return false
					}
				}
				return true
			})
			time.Sleep(100 * time.Millisecond) // the old actor is stopping
		}
	})
}
