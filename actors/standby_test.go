package actors

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// A container killed three times under the default CrashLoopBackOff (at
// once, then 10 s, then 20 s): with standby containers each restart
// starts the instance created before the death (no create after it), and
// the pod's events, restartCount and lastState are those without
// standbys.
func TestStandbyRestartIsOneStart(t *testing.T) {
	type outcome struct {
		events   []string
		restarts int32
		last     string
	}
	run := func(t *testing.T, standby bool) outcome {
		var out outcome
		synctest.Test(t, func(t *testing.T) {
			rt := fake.New(fake.AutoImages(true))
			h := newHarness(t, rt)
			h.cfg.Standby = standby
			h.start()
			h.apply(testPod("web", "uid-sb", v1.RestartPolicyAlways, "app"))
			ready := func() bool {
				if len(rt.Running("uid-sb", "app")) != 1 {
					return false
				}
				return !standby || len(h.standbys("uid-sb", "app")) == 1
			}
			waitFor(t, 10*time.Second, "app running", ready)
			for i := range 3 {
				var pending []string
				for _, c := range h.standbys("uid-sb", "app") {
					pending = append(pending, c.ID)
				}
				killed := time.Now()
				if err := rt.Kill(rt.Running("uid-sb", "app")[0].ID, 1); err != nil {
					t.Fatal(err)
				}
				waitFor(t, time.Minute, fmt.Sprintf("app restarted after kill %d", i+1), ready)
				next := rt.Running("uid-sb", "app")[0]
				if standby && !slices.Contains(pending, next.ID) {
					t.Fatalf("kill %d: running %s, not the standby %v", i+1, next.Name, pending)
				}
				if !standby && next.CreatedAt.Before(killed) {
					t.Fatalf("kill %d: without standbys the restart made no container", i+1)
				}
			}
			synctest.Wait()
			for _, e := range podEvents(t, h, "web") {
				out.events = append(out.events, fmt.Sprintf("%s %s %s: %s", e.Type, e.Reason, e.Container, e.Message))
			}
			cs := podStatus(t, h, "web").ContainerStatuses[0]
			out.restarts = cs.RestartCount
			if term := cs.LastTerminationState.Terminated; term != nil {
				out.last = fmt.Sprintf("exit %d %s", term.ExitCode, term.Reason)
			}
			h.stop()
			rt.Close()
		})
		return out
	}
	off := run(t, false)
	on := run(t, true)
	if off.restarts != 3 {
		t.Fatalf("restartCount %d without standbys, want 3", off.restarts)
	}
	if on.restarts != off.restarts || on.last != off.last {
		t.Errorf("with standbys restartCount %d, lastState %q; without %d, %q", on.restarts, on.last, off.restarts, off.last)
	}
	if !slices.Equal(on.events, off.events) {
		t.Errorf("events with standbys\n%q\nwithout\n%q", on.events, off.events)
	}
}

// standbys returns the pending standbys of a pod's container.
func (h *harness) standbys(uid, name string) []runtimeadapter.Container {
	var out []runtimeadapter.Container
	for _, c := range h.live(uid, name) {
		if podsync.IsStandby(&c) {
			out = append(out, c)
		}
	}
	return out
}
