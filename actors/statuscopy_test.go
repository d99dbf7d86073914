package actors

import (
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// GetPodStatuses answers with copies: a caller that changes a status it
// got does not change the one the node keeps, which is the pod actor's
// own (shared, never changed once reported).
func TestPodStatusesAreCopies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		h := newHarness(t, rt)
		h.start()
		h.apply(testPod("web", "uid-web", v1.RestartPolicyAlways, "a"))
		waitFor(t, 10*time.Second, "the app running", func() bool {
			st := podStatus(t, h, "web")
			return len(st.ContainerStatuses) == 1 && st.ContainerStatuses[0].State.Running != nil && len(st.Conditions) > 0
		})
		synctest.Wait()
		st := podStatus(t, h, "web")
		st.ContainerStatuses[0].Name = "changed"
		st.Conditions[0].Reason = "changed"
		st.StartTime.Time = time.Time{}
		again := podStatus(t, h, "web")
		if again.ContainerStatuses[0].Name != "a" || again.Conditions[0].Reason == "changed" || again.StartTime.IsZero() {
			t.Errorf("a caller's change to its answer changed the node's status: container %q, condition reason %q, start %v",
				again.ContainerStatuses[0].Name, again.Conditions[0].Reason, again.StartTime)
		}
		h.stop()
		rt.Close()
	})
}
