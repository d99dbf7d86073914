package actors

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

func TestNeedsStartSlot(t *testing.T) {
	for _, c := range []struct {
		name string
		plan podsync.Plan
		want bool
	}{
		{"empty plan", podsync.Plan{}, false},
		{"kills and removals only", podsync.Plan{Kill: []podsync.Kill{{}}, Remove: []runtimeadapter.Container{{}}}, false},
		{"a sandbox to create", podsync.Plan{CreateSandbox: true}, true},
		{"a created sandbox to start", podsync.Plan{AdoptSandboxID: "sb"}, true},
		{"a container to (re)start in the running sandbox", podsync.Plan{SandboxID: "sb", Start: []podsync.Start{{Name: "app"}}}, false},
		{"kills, then a new sandbox and containers", podsync.Plan{Kill: []podsync.Kill{{}}, CreateSandbox: true, Start: []podsync.Start{{Name: "app"}}}, true},
	} {
		if got := needsStartSlot(c.plan); got != c.want {
			t.Errorf("%s: needsStartSlot = %v, want %v", c.name, got, c.want)
		}
	}
}

// The slots' arithmetic: a newcomer waits behind waiters; the bound
// grows by one per pod start that ended and is back to its initial value
// once nothing starts or waits.
func TestSlotState(t *testing.T) {
	type step struct {
		op         string // "take", "done" (a start ended), "pause" (given back for a pull)
		want       int    // take: 1 taken, 0 waits; done, pause: waiters granted
		limit      int    // after the step
		held, wait int
	}
	for _, c := range []struct {
		name    string
		initial int
		steps   []step
	}{
		{"under the bound: taken", 2, []step{
			{"take", 1, 2, 1, 0}, {"take", 1, 2, 2, 0},
		}},
		{"over the bound: waits, then the bound grows per start ended", 2, []step{
			{"take", 1, 2, 1, 0}, {"take", 1, 2, 2, 0}, {"take", 0, 2, 2, 1}, {"take", 0, 2, 2, 2}, {"take", 0, 2, 2, 3},
			{"done", 2, 3, 3, 1}, // one ended: 3 may start, 1 held → 2 waiters go
			{"done", 1, 4, 3, 0},
		}},
		{"a pause for a pull lets one waiter in, the bound stays", 1, []step{
			{"take", 1, 1, 1, 0}, {"take", 0, 1, 1, 1},
			{"pause", 1, 1, 1, 0},
			{"take", 0, 1, 1, 1}, // the paused one comes back behind
		}},
		{"a newcomer waits behind a waiter even if a slot is free", 1, []step{
			{"take", 1, 1, 1, 0}, {"take", 0, 1, 1, 1}, {"done", 1, 2, 1, 0}, {"take", 1, 2, 2, 0},
		}},
		{"the burst over: back to the initial bound", 2, []step{
			{"take", 1, 2, 1, 0}, {"take", 1, 2, 2, 0}, {"done", 0, 3, 1, 0}, {"done", 0, 2, 0, 0},
			{"take", 1, 2, 1, 0}, {"take", 1, 2, 2, 0}, {"take", 0, 2, 2, 1},
		}},
	} {
		st := slotState{initial: c.initial, limit: c.initial}
		for i, sp := range c.steps {
			var got int
			switch sp.op {
			case "take":
				if st.take() {
					got = 1
				}
			case "done":
				got = st.give(true)
			case "pause":
				got = st.give(false)
			}
			if got != sp.want || st.limit != sp.limit || st.held != sp.held || st.waiting != sp.wait {
				t.Errorf("%s, step %d (%s): got %d, limit %d held %d waiting %d; want %d, %d %d %d",
					c.name, i, sp.op, got, st.limit, st.held, st.waiting, sp.want, sp.limit, sp.held, sp.wait)
			}
		}
	}
}

// busyMost is the most pods whose starts overlapped: a pod is busy from
// its first Create to the end of its last Start (each Start takes d).
func busyMost(rt *fake.Runtime, uids []string, d time.Duration) int {
	type span struct{ from, to time.Time }
	spans := map[string]*span{}
	owner := map[string]string{} // container ID → pod UID
	for _, c := range rt.Containers() {
		owner[c.ID] = c.Labels[runtimeadapter.LabelPodUID]
	}
	for _, c := range rt.Calls() {
		var uid string
		switch c.Method {
		case fake.MethodCreate:
			for _, u := range uids {
				if strings.Contains(c.Arg, "_"+u+"_") {
					uid = u
				}
			}
		case fake.MethodStart:
			uid = owner[c.Arg]
		}
		if uid == "" {
			continue
		}
		s := spans[uid]
		if s == nil {
			s = &span{from: c.Time, to: c.Time}
			spans[uid] = s
		}
		if end := c.Time.Add(d); c.Method == fake.MethodStart && end.After(s.to) {
			s.to = end
		}
	}
	type edge struct {
		at time.Time
		d  int
	}
	var edges []edge
	for _, s := range spans {
		edges = append(edges, edge{s.from, 1}, edge{s.to, -1})
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].at.Equal(edges[j].at) {
			return edges[i].d < edges[j].d // an end before a start at the same instant
		}
		return edges[i].at.Before(edges[j].at)
	})
	most, n := 0, 0
	for _, e := range edges {
		n += e.d
		most = max(most, n)
	}
	return most
}

// Six pods given at once, each Start taking 1 s: with ParallelPodStarts 2
// the first two pods start alone, then (each ended start growing the
// bound by one) the other four together, and all six run; with no bound
// all six start together (the test can fail).
func TestParallelPodStartsBound(t *testing.T) {
	for _, c := range []struct {
		bound, want int
	}{{2, 4}, {-1, 6}} {
		t.Run(fmt.Sprintf("bound %d", c.bound), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const startTakes = time.Second
				rt := fake.New(fake.WithImages("pause:1", "work:1"))
				rt.SetDelay(fake.MethodStart, startTakes)
				h := newHarness(t, rt)
				h.cfg.ParallelPodStarts = c.bound
				h.start()
				var pods []*v1.Pod
				var uids []string
				for i := range 6 {
					p := testPod(fmt.Sprintf("p%d", i), fmt.Sprintf("uid-p%d", i), v1.RestartPolicyAlways, "app")
					pods, uids = append(pods, p), append(uids, string(p.UID))
				}
				h.apply(pods...)
				waitFor(t, 30*time.Second, "every pod's app running", func() bool {
					for _, u := range uids {
						if len(rt.Running(u, "app")) != 1 {
							return false
						}
					}
					return true
				})
				if got := busyMost(rt, uids, startTakes); got != c.want {
					t.Errorf("at most %d pods starting at once, want %d", got, c.want)
				}
				h.stop()
				rt.Close()
			})
		})
	}
}

// A pod waiting for its image's pull holds no start slot: with one slot,
// a second pod starts while the first one's 30 s pull runs, and the first
// runs once its image is there.
func TestPullHoldsNoStartSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.WithImages("pause:1", "work:1"), fake.WithPullable("slow:1"))
		rt.SetDelay(fake.MethodPullImage, 30*time.Second)
		h := newHarness(t, rt)
		h.cfg.ParallelPodStarts = 1
		h.start()
		a := testPod("a", "uid-a", v1.RestartPolicyAlways, "app")
		a.Spec.Containers[0].Image, a.Spec.Containers[0].ImagePullPolicy = "slow:1", v1.PullIfNotPresent
		h.apply(a)
		waitFor(t, 5*time.Second, "a's pull under way", func() bool { return rt.PullCount("slow:1") == 1 })
		t0 := time.Now()
		h.apply(a, testPod("b", "uid-b", v1.RestartPolicyAlways, "app"))
		waitFor(t, 5*time.Second, "b running while a's image is pulled", func() bool { return len(rt.Running("uid-b", "app")) == 1 })
		if len(rt.Running("uid-a", "app")) != 0 {
			t.Fatal("a's app runs before its image is pulled")
		}
		t.Logf("b ran %v after it was given", time.Since(t0))
		waitFor(t, 40*time.Second, "a running once its image is pulled", func() bool { return len(rt.Running("uid-a", "app")) == 1 })
		h.stop()
		rt.Close()
	})
}

// A restart of a container in a running sandbox takes no start slot: with
// one slot, held by a new pod whose sandbox's start hangs, a killed
// container of a running pod is restarted at once (the first exit of
// CrashLoopBackOff).
func TestRestartTakesNoStartSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.WithImages("pause:1", "work:1"))
		h := newHarness(t, rt)
		h.cfg.ParallelPodStarts = 1
		h.start()
		a := testPod("a", "uid-a", v1.RestartPolicyAlways, "app")
		h.apply(a)
		waitFor(t, 5*time.Second, "a running", func() bool { return len(rt.Running("uid-a", "app")) == 1 })
		rt.Hang(fake.MethodStart, "actorlet_POD_b_")
		h.apply(a, testPod("b", "uid-b", v1.RestartPolicyAlways, "app"))
		waitFor(t, 5*time.Second, "b's sandbox start under way", func() bool {
			for _, c := range rt.Containers() {
				if c.Labels[runtimeadapter.LabelPodUID] == "uid-b" && c.Labels[runtimeadapter.LabelContainerName] == runtimeadapter.SandboxName {
					return rt.CallCount(fake.MethodStart) > 0 && slices.ContainsFunc(rt.Calls(), func(call fake.Call) bool {
						return call.Method == fake.MethodStart && call.Arg == c.ID
					})
				}
			}
			return false
		})
		old := rt.Running("uid-a", "app")[0].ID
		if err := rt.Kill(old, 1); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 5*time.Second, "a's app restarted while b holds the only slot", func() bool {
			r := rt.Running("uid-a", "app")
			return len(r) == 1 && r[0].ID != old
		})
		if len(rt.Running("uid-b", "app")) != 0 {
			t.Error("b's app runs while its sandbox's start hangs")
		}
		rt.ClearFaults()
		waitFor(t, 5*time.Second, "b running once its sandbox starts", func() bool { return len(rt.Running("uid-b", "app")) == 1 })
		h.stop()
		rt.Close()
	})
}

// A waiter whose context ends leaves the queue; one granted as its
// context ended gives the slot on to the next.
func TestStartSlotsWaiterGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStartSlots(1)
		if err := s.acquire(context.Background()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		got := make(chan error, 1)
		go func() { got <- s.acquire(ctx) }()
		synctest.Wait()
		time.Sleep(time.Second)
		if err := <-got; err == nil {
			t.Fatal("acquire with an ended context: nil error, want the context's")
		}
		if s.st.waiting != 0 || s.st.held != 1 {
			t.Fatalf("after giving up: held %d waiting %d, want 1, 0", s.st.held, s.st.waiting)
		}
		third := make(chan error, 1)
		go func() { third <- s.acquire(context.Background()) }()
		synctest.Wait()
		s.release(true)
		if err := <-third; err != nil {
			t.Fatal(err)
		}
		if s.st.held != 1 || s.st.waiting != 0 {
			t.Errorf("held %d waiting %d, want 1, 0", s.st.held, s.st.waiting)
		}
	})
}
