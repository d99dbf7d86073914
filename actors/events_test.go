package actors

import (
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// With the runtime's event stream, a death reaches the pod actor at once
// (no virtual time passes); relist-only, it waits for the next relist.
// Seen by both the event-triggered relist and the periodic one, it causes
// exactly one restart.
func TestEventsDetectDeathAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events time.Duration // EventRelistPeriod; negative: relist only
		atOnce bool
	}{{"events", 0, true}, {"relist only", -1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rt := fake.New(fake.AutoImages(true))
				h := newHarness(t, rt)
				h.cfg.EventRelistPeriod = tc.events
				h.cfg.RelistPeriod = 2 * time.Second
				h.start()
				h.apply(testPod("web", "uid-ev", v1.RestartPolicyAlways, "app"))
				waitFor(t, 10*time.Second, "app running", func() bool { return len(rt.Running("uid-ev", "app")) == 1 })
				time.Sleep(500 * time.Millisecond) // off the relist beat
				synctest.Wait()
				if err := rt.Kill(rt.Running("uid-ev", "app")[0].ID, 137); err != nil {
					t.Fatal(err)
				}
				synctest.Wait() // every goroutine idle; no virtual time has passed
				cs := podStatus(t, h, "web").ContainerStatuses[0]
				// Known: the app is down, or already replaced (a first exit
				// restarts at once) with the death as its last state.
				knows := cs.State.Running == nil || cs.LastTerminationState.Terminated != nil
				if knows != tc.atOnce {
					t.Fatalf("pod actor knows of the death at once: %v, want %v (state %+v)", knows, tc.atOnce, cs.State)
				}
				time.Sleep(60 * time.Second)
				synctest.Wait()
				if n := len(h.creates("actorlet_app_")); n != 2 {
					t.Fatalf("%d app creates after one death, want 2 (exactly one restart)", n)
				}
				h.stop()
				rt.Close()
			})
		})
	}
}
