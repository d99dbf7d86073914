package actors

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/metrics"
	"github.com/actorlet/actorlet/internal/pleg"
	"github.com/actorlet/actorlet/messages"
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

// plegLists returns the start times of the PLEG's lists (of the whole
// node; a pod actor lists its own pod) at or after since.
func plegLists(rt *fake.Runtime, since time.Time) []time.Time {
	var out []time.Time
	for _, c := range rt.Calls() {
		if c.Method == fake.MethodList && strings.Contains(c.Arg, "pod= ") && !c.Time.Before(since) {
			out = append(out, c.Time)
		}
	}
	return out
}

// gaps returns the time between consecutive times.
func gaps(ts []time.Time) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(ts); i++ {
		out = append(out, ts[i].Sub(ts[i-1]))
	}
	return out
}

// healthCheck returns the node's health check called name (ok false when
// there is none).
func healthCheck(t *testing.T, h *harness, name string) (c messages.HealthCheck, ok bool) {
	t.Helper()
	res, err := h.sys.Root.RequestFuture(h.pid, &messages.GetHealth{}, time.Second).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.(*messages.NodeHealth).Checks {
		if c.Name == name {
			return c, true
		}
	}
	return messages.HealthCheck{}, false
}

// streamState checks actorlet_pleg_event_stream_state and
// actorlet_pleg_event_stream_silences_total.
func streamState(t *testing.T, reg *prometheus.Registry, state string, silences int) {
	t.Helper()
	var b strings.Builder
	b.WriteString("# HELP actorlet_pleg_event_stream_silences_total Number of times a relist found a change the open event stream never reported, and the stream was replaced.\n")
	b.WriteString("# TYPE actorlet_pleg_event_stream_silences_total counter\n")
	fmt.Fprintf(&b, "actorlet_pleg_event_stream_silences_total %d\n", silences)
	b.WriteString("# HELP actorlet_pleg_event_stream_state 1 for the state the runtime's event stream is in (down, healthy, silent, confirming), 0 for the others; absent without an event stream.\n")
	b.WriteString("# TYPE actorlet_pleg_event_stream_state gauge\n")
	for _, s := range []string{"confirming", "down", "healthy", "silent"} {
		v := 0
		if s == state {
			v = 1
		}
		fmt.Fprintf(&b, "actorlet_pleg_event_stream_state{state=%q} %d\n", s, v)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(b.String()),
		"actorlet_pleg_event_stream_state", "actorlet_pleg_event_stream_silences_total"); err != nil {
		t.Error(err)
	}
}

// The event stream stays open and delivers nothing. The first death it
// does not report is found by the 5 s safety-net relist; 2 s (the grace
// for its event) after that listing, /healthz's "event stream" check
// fails, the stream is replaced by a new subscription and the PLEG
// relists every 1 s. Once the new stream reports a death (which reaches
// its pod actor at once) and the relist it triggers confirms it, the check
// passes and the safety net is every 5 s again.
func TestSilentEventStreamIsNoticed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		rt := fake.New(fake.AutoImages(true))
		h := newHarness(t, rt)
		h.cfg.Metrics = metrics.New(reg)
		h.start()
		h.apply(testPod("a", "uid-a", v1.RestartPolicyNever, "app"), testPod("b", "uid-b", v1.RestartPolicyNever, "app"))
		waitFor(t, 10*time.Second, "both apps running", func() bool {
			return len(rt.Running("uid-a", "app")) == 1 && len(rt.Running("uid-b", "app")) == 1
		})
		time.Sleep(20 * time.Second)
		synctest.Wait()
		if c, ok := healthCheck(t, h, "event stream"); !ok || !c.OK {
			t.Fatalf("event stream check %+v (present %v) while events flow, want OK", c, ok)
		}
		quiet := time.Now()
		time.Sleep(15 * time.Second)
		synctest.Wait()
		// 15 s hold two or three 5 s gaps: a list may fall on either end of
		// the window (which goroutine runs first at one instant is not fixed).
		if g := gaps(plegLists(rt, quiet)); len(g) < 2 || slices.ContainsFunc(g, func(d time.Duration) bool { return d != 5*time.Second }) {
			t.Fatalf("PLEG lists %v apart while events flow, want every 5s", g)
		}
		streamState(t, reg, "healthy", 0)

		// The stream goes silent; a death 2.5 s off the relist beat.
		rt.SilenceEvents(0)
		subs := rt.CallCount(fake.MethodEvents)
		last := plegLists(rt, quiet)
		time.Sleep(last[len(last)-1].Add(2500 * time.Millisecond).Sub(time.Now()))
		killed := time.Now()
		if err := rt.Kill(rt.Running("uid-a", "app")[0].ID, 137); err != nil {
			t.Fatal(err)
		}
		var noticed time.Time
		waitFor(t, 30*time.Second, "the event stream check to fail", func() bool {
			c, _ := healthCheck(t, h, "event stream")
			noticed = time.Now()
			return !c.OK
		})
		// The relist 2.5 s after the death finds it; its grace ends 2 s later.
		if d := noticed.Sub(killed); d > 4500*time.Millisecond+20*time.Millisecond {
			t.Errorf("silence noticed %s after the unreported death, want within 4.5s (the next 5 s relist + 2 s grace)", d)
		}
		synctest.Wait()
		if n := rt.CallCount(fake.MethodEvents) - subs; n != 1 {
			t.Errorf("%d new subscriptions once the stream was found silent, want 1", n)
		}
		c, _ := healthCheck(t, h, "event stream")
		if !strings.Contains(c.Message, "silent") || !strings.Contains(c.Message, "died") || !strings.Contains(c.Message, "relisting every 1s") {
			t.Errorf("event stream check message %q, want the evidence and the 1 s relist", c.Message)
		}
		streamState(t, reg, "confirming", 1)
		for _, c := range []string{"runtime", "pleg"} {
			if c, _ := healthCheck(t, h, c); !c.OK {
				t.Errorf("%s check failed: %+v", c.Name, c)
			}
		}

		// Resubscribed, unconfirmed: nothing changes, the PLEG relists every 1 s.
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if g := gaps(plegLists(rt, noticed)); len(g) < 9 || slices.ContainsFunc(g, func(d time.Duration) bool { return d != time.Second }) {
			t.Errorf("PLEG lists %v apart while the new stream is unconfirmed, want every 1s", g)
		}
		if c, _ := healthCheck(t, h, "event stream"); c.OK {
			t.Errorf("event stream check passes before the new stream was confirmed: %+v", c)
		}

		// A death the new stream reports: at once, and confirmed.
		time.Sleep(500 * time.Millisecond) // off the 1 s beat
		confirmed := time.Now()
		if err := rt.Kill(rt.Running("uid-b", "app")[0].ID, 137); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // no virtual time passes
		if cs := podStatus(t, h, "b").ContainerStatuses[0]; cs.State.Running != nil {
			t.Errorf("pod b's actor does not know of the death its event reported: %+v", cs.State)
		}
		if c, _ := healthCheck(t, h, "event stream"); !c.OK || !strings.Contains(c.Message, "every 5s") {
			t.Errorf("event stream check %+v after the new stream reported a death a relist confirmed, want OK", c)
		}
		streamState(t, reg, "healthy", 1)
		time.Sleep(20 * time.Second)
		synctest.Wait()
		// (The death's event lists at once, and so does the sandbox's
		// stop that follows under restartPolicy Never.)
		if g := gaps(slices.Compact(plegLists(rt, confirmed))); fmt.Sprint(g) != "[5s 5s 5s 5s]" {
			t.Errorf("PLEG lists %v apart once the stream is confirmed, want every 5s", g)
		}
		h.stop()
		rt.Close()
	})
}

// No false alarm: on a busy node whose event stream works, with
// actorlet's own creates, starts, stops and removals, crashes and their
// restarts, completed work, a pod removed, one added, a kill from outside
// and the GC of exited instances, the stream is never found silent.
func TestBusyNodeEventStreamStaysHealthy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("crash", fake.Behavior{ExitCode: 1, ExitAfter: 2 * time.Second})
		rt.ScriptContainer("done", fake.Behavior{ExitCode: 0, ExitAfter: time.Second})
		h := newHarness(t, rt)
		h.cfg.Metrics = metrics.New(reg)
		h.start()
		web := testPod("web", "uid-web", v1.RestartPolicyAlways, "app", "side")
		pods := []*v1.Pod{web, testPod("crasher", "uid-crash", v1.RestartPolicyAlways, "crash"),
			testPod("job", "uid-job", v1.RestartPolicyOnFailure, "done")}
		h.apply(pods...)
		waitFor(t, 10*time.Second, "the event stream check to pass", func() bool {
			c, _ := healthCheck(t, h, "event stream")
			return c.OK
		})
		for i := range 300 {
			switch i {
			case 30:
				h.apply(pods[1:]...) // web removed
			case 60:
				h.apply(append(pods[1:], testPod("late", "uid-late", v1.RestartPolicyAlways, "app"))...)
			case 90:
				if err := rt.Kill(rt.Running("uid-late", "app")[0].ID, 137); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(time.Second)
			if c, _ := healthCheck(t, h, "event stream"); !c.OK {
				t.Fatalf("after %ds: event stream check failed on a working stream: %s", i+1, c.Message)
			}
		}
		if n := len(h.creates("actorlet_crash_")); n < 4 {
			t.Errorf("%d creates of the crashing container, want a busy node (4 or more)", n)
		}
		if n := len(h.live("uid-web", "app")); n != 0 {
			t.Errorf("removed pod web still has %d app containers", n)
		}
		streamState(t, reg, "healthy", 0)
		h.stop()
		rt.Close()
	})
}

// The resubscribed stream is silent too: the next change it misses is
// found the same way, and the stream replaced again.
func TestResubscribedStreamSilentToo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		rt := fake.New(fake.AutoImages(true))
		h := newHarness(t, rt)
		h.cfg.Metrics = metrics.New(reg)
		h.start()
		h.apply(testPod("a", "uid-a", v1.RestartPolicyNever, "app"), testPod("b", "uid-b", v1.RestartPolicyNever, "app"),
			testPod("c", "uid-c", v1.RestartPolicyNever, "app"))
		waitFor(t, 10*time.Second, "apps running", func() bool { return len(rt.Running("uid-c", "app")) == 1 })
		time.Sleep(10 * time.Second)
		synctest.Wait()
		rt.SilenceEvents(1) // this stream and the next
		subs := rt.CallCount(fake.MethodEvents)
		for i, uid := range []string{"uid-a", "uid-b"} {
			if err := rt.Kill(rt.Running(uid, "app")[0].ID, 137); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 10*time.Second, fmt.Sprintf("silence %d noticed", i+1), func() bool {
				return rt.CallCount(fake.MethodEvents)-subs == i+1
			})
			time.Sleep(3 * time.Second) // armed: grace after the open, and a listing since
			if c, _ := healthCheck(t, h, "event stream"); c.OK {
				t.Fatalf("event stream check passes after silence %d: %+v", i+1, c)
			}
		}
		// The third stream flows.
		if err := rt.Kill(rt.Running("uid-c", "app")[0].ID, 137); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if c, _ := healthCheck(t, h, "event stream"); !c.OK {
			t.Fatalf("event stream check %+v after the third stream reported a death, want OK", c)
		}
		streamState(t, reg, "healthy", 2)
		h.stop()
		rt.Close()
	})
}

// A subscription the runtime does not answer is given up after
// ListTimeout and retried with backoff; /healthz says the stream is down
// meanwhile and the PLEG relists every 1 s. A stream that opens is
// trusted; one that breaks is down until its successor opens, which is
// trusted at once (nothing says it missed anything).
func TestEventStreamDownShowsAndRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.Hang(fake.MethodEvents, "")
		h := newHarness(t, rt)
		h.start()
		h.apply(testPod("a", "uid-a", v1.RestartPolicyAlways, "app"))
		time.Sleep(DefaultListTimeout + 500*time.Millisecond)
		synctest.Wait()
		c, ok := healthCheck(t, h, "event stream")
		if !ok || c.OK || !strings.Contains(c.Message, "not open after 10s") {
			t.Fatalf("event stream check %+v while the subscription hangs, want failing: not open after 10s", c)
		}
		if g := gaps(plegLists(rt, time.Now().Add(-5*time.Second))); len(g) < 4 || slices.ContainsFunc(g, func(d time.Duration) bool { return d > time.Second }) {
			t.Errorf("PLEG lists %v apart while the stream is down, want every 1s", g)
		}
		rt.ClearFaults()
		waitFor(t, 30*time.Second, "the stream to open", func() bool {
			c, _ := healthCheck(t, h, "event stream")
			return c.OK
		})
		if n := rt.CallCount(fake.MethodEvents); n < 2 {
			t.Errorf("%d subscriptions, want the hung one and the one that opened (and any retry between)", n)
		}

		rt.BreakEvents(nil)
		synctest.Wait()
		if c, _ := healthCheck(t, h, "event stream"); c.OK || !strings.Contains(c.Message, "down") {
			t.Errorf("event stream check %+v after the stream broke, want down", c)
		}
		waitFor(t, 5*time.Second, "the stream to open again", func() bool {
			c, _ := healthCheck(t, h, "event stream")
			return c.OK && strings.HasPrefix(c.Message, "healthy")
		})
		h.stop()
		rt.Close()
	})
}

// The metric's state label values are the watch's state names.
func TestEventStreamStateNamesMatchTheMetric(t *testing.T) {
	var names []string
	for _, s := range pleg.StreamStates {
		names = append(names, s.String())
	}
	if !slices.Equal(names, metrics.EventStreamStates) {
		t.Errorf("pleg states %v, metric states %v", names, metrics.EventStreamStates)
	}
}
