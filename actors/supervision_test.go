package actors

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/internal/protocol"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// A pod actor that panics is restarted (at most 5 times a minute, by
// default), rebuilding from the runtime; past the limit its pod is Failed
// with a reason that sticks until its spec changes, and the node and every
// other pod go on.
func TestPanickingPodActorIsContained(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var panics, msgs atomic.Int32
		hook := func(uid types.UID, msg any) {
			if uid != "uid-bad" {
				return
			}
			msgs.Add(1)
			if _, ok := msg.(*protocol.PodTransitions); ok {
				panics.Add(1)
				panic("boom")
			}
		}
		podReceiveHook.Store(&hook)
		defer podReceiveHook.Store(nil)

		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("crash", fakeCrash)
		h := newHarness(t, rt)
		core, logs := observer.New(zapcore.ErrorLevel)
		h.cfg.Logger = zap.New(core)
		h.start()
		bad := testPod("bad", "uid-bad", v1.RestartPolicyAlways, "crash")
		good := testPod("good", "uid-good", v1.RestartPolicyAlways, "app")
		h.apply(bad, good)
		waitFor(t, 120*time.Second, "the bad pod Failed", func() bool {
			st := podStatus(t, h, "bad")
			return st.Phase == v1.PodFailed && st.Reason == "PodActorFailed"
		})
		if n := panics.Load(); n != 6 {
			t.Errorf("%d panics before the pod actor was stopped, want 6 (5 restarts allowed)", n)
		}
		// Each panic is logged once, naming the pod and the message.
		logged := logs.FilterMessage("pod actor panicked; its supervisor restarts it").All()
		if len(logged) != 6 {
			t.Errorf("%d panics logged, want 6", len(logged))
		}
		for _, e := range logged {
			if f := e.ContextMap(); f["podUID"] != "uid-bad" || f["message"] != "*protocol.PodTransitions" || f["stack"] == "" {
				t.Errorf("panic logged with fields %v", f)
				break
			}
		}
		if len(rt.Running("uid-good", "app")) != 1 {
			t.Fatal("the good pod stopped running")
		}
		// Later transitions and time do not respawn it; the status sticks.
		before := msgs.Load()
		time.Sleep(60 * time.Second)
		synctest.Wait()
		if n := msgs.Load(); n != before {
			t.Fatalf("the failed pod's actor received %d more messages: it was respawned", n-before)
		}
		if st := podStatus(t, h, "bad"); st.Phase != v1.PodFailed {
			t.Fatalf("the failed pod's status became %s", st.Phase)
		}
		// A changed spec gets a fresh actor.
		podReceiveHook.Store(nil)
		bad2 := testPod("bad", "uid-bad", v1.RestartPolicyAlways, "crash")
		bad2.Spec.Containers[0].Image = "work:2"
		h.apply(bad2, good)
		waitFor(t, 30*time.Second, "the bad pod running again", func() bool { return podStatus(t, h, "bad").Phase != v1.PodFailed })
		h.stop()
		rt.Close()
	})
}

var fakeCrash = fake.Behavior{ExitCode: 1, ExitAfter: time.Second}

// A pod actor restarted after a panic goes on with the same
// CrashLoopBackOff curve (the records live outside the actor).
func TestRestartedPodActorKeepsBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var transitions atomic.Int32
		var panicAt atomic.Int64
		hook := func(uid types.UID, msg any) {
			if _, ok := msg.(*protocol.PodTransitions); ok && uid == "uid-crash" {
				if transitions.Add(1) == 3 { // while the back-off is armed (see below)
					panicAt.Store(time.Now().UnixNano())
					panic("boom")
				}
			}
		}
		podReceiveHook.Store(&hook)
		defer podReceiveHook.Store(nil)
		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("app", fakeCrash)
		h := newHarness(t, rt)
		h.start()
		h.apply(testPod("crasher", "uid-crash", v1.RestartPolicyAlways, "app"))
		waitFor(t, 200*time.Second, "five app creates", func() bool { return len(h.creates("actorlet_app_")) >= 5 })
		got := h.creates("actorlet_app_")
		want := []time.Duration{0, 1 * time.Second, 12 * time.Second, 33 * time.Second, 74 * time.Second}
		for i, w := range want {
			if d := got[i].Sub(got[0]); d != w {
				t.Errorf("create %d at +%v, want +%v (0, 10 s, 20 s, 40 s after each exit)", i, d, w)
			}
		}
		if n := transitions.Load(); n < 3 {
			t.Fatalf("only %d transitions: the panic never happened", n)
		}
		// The panic came after the first restart armed the back-off and
		// before the curve's later steps, which the new incarnation kept.
		if at := time.Unix(0, panicAt.Load()); at.Before(got[1]) || !at.Before(got[3]) {
			t.Errorf("the panic came at +%v, not between the second (+%v) and fourth (+%v) creates",
				at.Sub(got[0]), got[1].Sub(got[0]), got[3].Sub(got[0]))
		}
		h.stop()
		rt.Close()
	})
}
