package actors

import (
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/podstate"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// podObject returns the pod the node shows for name (spec, metadata and
// status, as the API serves it).
func podObject(t *testing.T, h *harness, name string) *v1.Pod {
	t.Helper()
	res, err := h.sys.Root.RequestFuture(h.pid, &messages.GetPodStatuses{}, time.Second).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.(*messages.PodStatuses).Pods {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no pod %s", name)
	return nil
}

// A pod's startTime and creationTimestamp (its AGE) survive an agent
// restart, also after its first sandbox was lost and replaced: they are
// recovered from the runtime. A pod none of whose containers is left when
// the agent starts again starts anew.
func TestStartTimeSurvivesAgentRestart(t *testing.T) {
	for _, tc := range []struct {
		name     string
		wipe     bool // every container of the pod removed while the agent is down
		wantKept bool
	}{{"containers left", false, true}, {"nothing left", true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rt := fake.New(fake.AutoImages(true))
				h := newHarness(t, rt)
				h.start()
				pod := testPod("web", "uid-web", v1.RestartPolicyAlways, "app")
				started := time.Now()
				h.apply(pod)
				waitFor(t, 5*time.Second, "app running", func() bool { return len(rt.Running("uid-web", "app")) == 1 })
				p := podObject(t, h, "web")
				if p.Status.StartTime == nil || !p.Status.StartTime.Time.Equal(started) || !p.CreationTimestamp.Time.Equal(started) {
					t.Fatalf("startTime %v creationTimestamp %v, want %v", p.Status.StartTime, p.CreationTimestamp, started)
				}
				time.Sleep(time.Hour)
				// The first sandbox is lost and replaced.
				if err := rt.RemoveExternally(rt.Running("uid-web", runtimeadapter.SandboxName)[0].ID); err != nil {
					t.Fatal(err)
				}
				waitFor(t, 30*time.Second, "a new sandbox and app", func() bool {
					return len(rt.Running("uid-web", runtimeadapter.SandboxName)) == 1 && len(rt.Running("uid-web", "app")) == 1
				})
				h.stop()
				time.Sleep(time.Hour)
				if tc.wipe {
					for _, c := range rt.Containers() {
						if err := rt.RemoveExternally(c.ID); err != nil {
							t.Fatal(err)
						}
					}
				}
				restarted := time.Now()
				h2 := newHarness(t, rt)
				h2.start()
				h2.apply(pod)
				waitFor(t, 10*time.Second, "app running", func() bool { return len(rt.Running("uid-web", "app")) == 1 })
				time.Sleep(5 * time.Second)
				synctest.Wait()
				want := started
				if !tc.wantKept {
					want = restarted
				}
				p = podObject(t, h2, "web")
				if p.Status.StartTime == nil || !p.Status.StartTime.Time.Equal(want) || !p.CreationTimestamp.Time.Equal(want) {
					t.Errorf("after the restart: startTime %v creationTimestamp %v, want %v (restarted at %v)",
						p.Status.StartTime, p.CreationTimestamp, want, restarted)
				}
				h2.stop()
				rt.Close()
			})
		})
	}
}

// podStartOf reads the start-time label, the earliest of them, and falls
// back to the oldest creation time when no container carries one
// (containers made by an actorlet without the label).
func TestPodStartOf(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c := func(created time.Duration, label string) runtimeadapter.Container {
		ls := map[string]string{}
		if label != "" {
			ls[runtimeadapter.LabelPodStartTime] = label
		}
		return runtimeadapter.Container{CreatedAt: t0.Add(created), Labels: ls}
	}
	at := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339Nano) }
	for _, tt := range []struct {
		name string
		cs   []runtimeadapter.Container
		want time.Time
	}{
		{"none", nil, time.Time{}},
		{"labels win over creation times", []runtimeadapter.Container{c(-time.Hour, ""), c(time.Hour, at(time.Minute))}, t0.Add(time.Minute)},
		{"earliest label", []runtimeadapter.Container{c(0, at(2*time.Second)), c(0, at(time.Second))}, t0.Add(time.Second)},
		{"no label: oldest creation", []runtimeadapter.Container{c(time.Hour, ""), c(time.Minute, ""), c(2*time.Hour, "")}, t0.Add(time.Minute)},
		{"a bad label is no label", []runtimeadapter.Container{c(time.Minute, "yesterday")}, t0.Add(time.Minute)},
	} {
		if got := podstate.StartOf(tt.cs); !got.Equal(tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
