package actors

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/actorlet/actorlet/internal/protocol"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// relistRig runs the relist actor alone on the fake runtime, its router
// and node replaced by actors that record the runtime's health as the
// relist reports it.
type relistRig struct {
	t   *testing.T
	rt  *fake.Runtime
	sys *actor.ActorSystem
	pid *actor.PID
	ids []string // planted running containers

	mu      sync.Mutex
	healthy []bool // RuntimeState.Healthy, in order
}

// newRelistRig plants n running containers of testNode and starts the
// relist actor with cfg (NodeName and Runtime set here).
func newRelistRig(t *testing.T, n int, cfg Config) *relistRig {
	g := &relistRig{t: t, rt: fake.New(), sys: actor.NewActorSystem()}
	for i := range n {
		meta := runtimeadapter.Meta{Node: testNode, PodUID: fmt.Sprintf("uid-%d", i), PodName: fmt.Sprintf("p%d", i),
			PodNamespace: "default", ContainerName: "app", Type: runtimeadapter.TypeApp, Hash: "h1", GracePeriod: time.Second}
		g.ids = append(g.ids, g.rt.AddContainer(runtimeadapter.Container{Labels: meta.Labels(), Image: "work:1"}))
	}
	record := actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*protocol.RuntimeState); ok {
			g.mu.Lock()
			g.healthy = append(g.healthy, m.Healthy)
			g.mu.Unlock()
		}
	})
	router, node := g.sys.Root.Spawn(record), g.sys.Root.Spawn(record)
	cfg.NodeName, cfg.Runtime = testNode, g.rt
	g.pid = g.sys.Root.Spawn(newRelistProps(cfg.withDefaults(), router, node, nil))
	t.Cleanup(g.stop) // in the bubble, before it ends
	return g
}

// lists returns the start times of the PLEG's List calls, failed or not.
func (g *relistRig) lists() []time.Time {
	var out []time.Time
	for _, c := range g.rt.Calls() {
		if c.Method == fake.MethodList {
			out = append(out, c.Time)
		}
	}
	return out
}

func (g *relistRig) health() []bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]bool(nil), g.healthy...)
}

// stop stops the relist actor and the runtime and lets stragglers end
// (inside the bubble this takes no time).
func (g *relistRig) stop() {
	if err := g.sys.Root.PoisonFuture(g.pid).Wait(); err != nil {
		g.t.Error(err)
	}
	g.rt.Close()
	time.Sleep(5 * time.Second)
}

// While lists fail, events (a burst of deaths and removals), a broken and
// resubscribed event stream and RelistNow do not list before the failure
// backoff's next attempt: lists come 1 s, 2 s, 4 s, 8 s apart, as without
// them. Once lists succeed, an event triggers a list at once again.
func TestRelistFailureBackoffHoldsAgainstEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newRelistRig(t, 14, Config{RelistPeriod: time.Second})
		synctest.Wait() // first lists done, event stream subscribed

		g.rt.InjectError(fake.MethodList, runtimeadapter.ErrUnavailable, -1)
		g.rt.ResetCalls()
		t0 := time.Now()
		if err := g.rt.Kill(g.ids[0], 137); err != nil { // lists at once, and fails
			t.Fatal(err)
		}
		synctest.Wait()
		if got := g.lists(); len(got) != 1 || !got[0].Equal(t0) {
			t.Fatalf("lists %v after a death, want one at once (%v)", got, t0)
		}

		// The outage: an event every 650 ms (deaths and removals: one
		// or two events each), the stream broken once, a RelistNow.
		for i, id := range g.ids[1:12] {
			time.Sleep(650 * time.Millisecond)
			var err error
			if i%2 == 0 {
				err = g.rt.Kill(id, 1)
			} else {
				err = g.rt.RemoveExternally(id)
			}
			if err != nil {
				t.Fatal(err)
			}
			switch i {
			case 3:
				g.rt.BreakEvents(nil)
			case 6:
				g.sys.Root.Send(g.pid, &protocol.RelistNow{})
			}
		}
		time.Sleep(t0.Add(20 * time.Second).Sub(time.Now()))
		synctest.Wait()
		var gaps []time.Duration
		lists := g.lists()
		for i := 1; i < len(lists); i++ {
			gaps = append(gaps, lists[i].Sub(lists[i-1]))
		}
		want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}
		if fmt.Sprint(gaps) != fmt.Sprint(want) {
			t.Fatalf("during 20 s of failing lists and 11 events, lists came %v apart; want %v (the failure backoff)", gaps, want)
		}
		if h := g.health(); fmt.Sprint(h) != "[false]" {
			t.Fatalf("runtime health reported %v, want [false]", h)
		}

		// Lists work again: the backoff's next attempt (16 s after the
		// last) succeeds, and from then on an event lists at once.
		g.rt.InjectError(fake.MethodList, nil, 0)
		time.Sleep(lists[len(lists)-1].Add(16 * time.Second).Sub(time.Now()))
		synctest.Wait()
		if h := g.health(); fmt.Sprint(h) != "[false true]" {
			t.Fatalf("runtime health reported %v after lists work again, want [false true]", h)
		}
		time.Sleep(500 * time.Millisecond) // off the relist beat
		synctest.Wait()
		before, now := len(g.lists()), time.Now()
		if err := g.rt.Kill(g.ids[12], 137); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // no virtual time passes
		lists = g.lists()
		if len(lists) != before+1 || !lists[len(lists)-1].Equal(now) {
			t.Fatalf("%d lists at once after a death once lists work (lists %v, death at %v), want 1", len(lists)-before, lists, now)
		}
		for _, c := range g.rt.Calls() {
			if c.Method == fake.MethodList && c.Time.Equal(now) && c.Err != nil {
				t.Fatalf("the list after the death failed: %v", c.Err)
			}
		}
	})
}

// The inspect of a container named by an event hangs: it delays the
// relist by its deadline (touchedInspectTimeout), not the whole
// ListTimeout, and fails nothing: the listing keeps the list's view of
// that container, and the next relist follows at once.
func TestRelistHungInspectOfTouchedContainerFailsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newRelistRig(t, 2, Config{RelistPeriod: time.Second, ListTimeout: 10 * time.Second})
		synctest.Wait()
		g.rt.Hang(fake.MethodInspect, g.ids[0])
		g.rt.ResetCalls()
		t0 := time.Now()
		for _, id := range g.ids { // two deaths: the first lists, the second waits for it
			if err := g.rt.Kill(id, 1); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(touchedInspectTimeout)
		synctest.Wait()
		var lists []time.Time
		for _, c := range g.rt.Calls() {
			switch c.Method {
			case fake.MethodList:
				if c.Err != nil {
					t.Fatalf("list failed: %v", c.Err)
				}
				lists = append(lists, c.Time)
			case fake.MethodInspect:
				if (c.Err == nil) != (c.Arg != g.ids[0]) {
					t.Errorf("inspect of %s: %v; want only the hung one's to fail", c.Arg, c.Err)
				}
			}
		}
		if len(lists) != 2 || !lists[0].Equal(t0) || lists[1].After(t0.Add(touchedInspectTimeout)) {
			t.Fatalf("lists at %v after deaths at %v, want one at once and one once the hung inspect gave up (%v)",
				lists, t0, touchedInspectTimeout)
		}
		if h := g.health(); len(h) != 0 {
			t.Fatalf("runtime health reported %v while one inspect hangs, want no change (healthy)", h)
		}
	})
}
