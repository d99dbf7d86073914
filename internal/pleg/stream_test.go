package pleg

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/internal/protocol"
	"github.com/actorlet/actorlet/runtimeadapter"
)

const (
	start   = runtimeadapter.EventStart
	die     = runtimeadapter.EventDie
	destroy = runtimeadapter.EventDestroy
	oom     = runtimeadapter.EventOOM
)

var s0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// ms is an offset from s0 in milliseconds.
func ms(n int64) time.Time { return s0.Add(time.Duration(n) * time.Millisecond) }

// step is one thing fed to a StreamWatch, and the state wanted after it.
type step struct {
	do   func(w *StreamWatch)
	what string
	want StreamState
}

func open(at int64, stream uint64, want StreamState) step {
	return step{func(w *StreamWatch) { w.Opened(stream, ms(at)) }, fmt.Sprintf("open stream %d at %dms", stream, at), want}
}

func broken(want StreamState) step {
	return step{func(w *StreamWatch) { w.Broken(fmt.Errorf("connection reset")) }, "stream broken", want}
}

func event(at int64, stream uint64, id string, kind runtimeadapter.EventKind, want StreamState) step {
	return step{func(w *StreamWatch) { w.Event(stream, id, kind, ms(at)) },
		fmt.Sprintf("%s event of %s on stream %d at %dms", kind, id, stream, at), want}
}

// relist: a listing from..until that found changes, each "id kind".
func relist(from, until int64, want StreamState, changes ...string) step {
	var cs []Change
	for _, c := range changes {
		id, kind, _ := strings.Cut(c, " ")
		cs = append(cs, Change{ContainerID: id, Kind: runtimeadapter.EventKind(kind)})
	}
	return step{func(w *StreamWatch) { w.Relisted(ms(from), ms(until), cs) },
		fmt.Sprintf("relist %d..%dms finding %v", from, until, changes), want}
}

func checkAt(at int64, want StreamState) step {
	return step{func(w *StreamWatch) { w.Check(ms(at)) }, fmt.Sprintf("check at %dms", at), want}
}

// armed opens stream 1 at 0 and relists at 0 and 2000 (2 s = the grace
// after the open), so that from the next relist on changes count.
var armed = []step{
	open(0, 1, StreamHealthy),
	relist(0, 10, StreamHealthy, "old start", "older die"), // the first relist: the node's state
	relist(2000, 2010, StreamHealthy),
}

func steps(parts ...[]step) []step {
	var out []step
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestStreamWatch(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []step
		// deadline wanted after the last step (ms from s0), -1: none.
		deadline int64
	}{
		{"a new watch is down", []step{checkAt(0, StreamDown)}, -1},
		{"the first relist never counts: it is the node's state, not news",
			[]step{open(0, 1, StreamHealthy), relist(5000, 5010, StreamHealthy, "a start", "b die"), checkAt(60_000, StreamHealthy)}, -1},
		{"changes found right after the open do not count: the listing before started less than grace after it",
			[]step{open(0, 1, StreamHealthy), relist(0, 10, StreamHealthy), relist(1999, 2009, StreamHealthy, "a die"),
				relist(3000, 3010, StreamHealthy, "b die"), checkAt(60_000, StreamHealthy)}, -1},
		{"the listing before started exactly grace after the open: the change counts",
			[]step{open(0, 1, StreamHealthy), relist(0, 10, StreamHealthy), relist(2000, 2010, StreamHealthy),
				relist(7000, 7050, StreamHealthy, "a die"), checkAt(9049, StreamHealthy), checkAt(9050, StreamSilent)}, -1},
		{"a change reported before the relist found it",
			steps(armed, []step{event(6990, 1, "a", die, StreamHealthy), relist(7000, 7050, StreamHealthy, "a die"), checkAt(60_000, StreamHealthy)}), -1},
		{"a change reported long before the relist found it (lists failed meanwhile)",
			steps(armed, []step{event(6990, 1, "a", die, StreamHealthy), relist(40_000, 40_050, StreamHealthy, "a die"), checkAt(60_000, StreamHealthy)}), -1},
		{"a change reported after the relist, 1ns before its deadline (end of the listing + grace)",
			steps(armed, []step{relist(7000, 7050, StreamHealthy, "a die"), event(7000, 1, "a", oom, StreamHealthy),
				step{func(w *StreamWatch) { w.Event(1, "a", die, ms(9050).Add(-time.Nanosecond)) }, "die event 1ns before the deadline", StreamHealthy},
				checkAt(60_000, StreamHealthy)}), -1},
		{"the event at the deadline is late, whether it is fed before the check or after",
			steps(armed, []step{relist(7000, 7050, StreamHealthy, "a die"), event(9050, 1, "a", die, StreamHealthy), checkAt(9050, StreamSilent)}), -1},
		{"a check before the deadline finds nothing; the deadline stays",
			steps(armed, []step{relist(7000, 7050, StreamHealthy, "a die"), step{func(w *StreamWatch) { w.Check(ms(9050).Add(-time.Nanosecond)) }, "check 1ns early", StreamHealthy}}), 9050},
		{"an event of another kind reports nothing",
			steps(armed, []step{event(6990, 1, "a", oom, StreamHealthy), relist(7000, 7050, StreamHealthy, "a die"), checkAt(9050, StreamSilent)}), -1},
		{"an event of another container reports nothing",
			steps(armed, []step{event(6990, 1, "b", die, StreamHealthy), relist(7000, 7050, StreamHealthy, "a die"), checkAt(9050, StreamSilent)}), -1},
		{"a running container that vanished needs its die and its destroy",
			steps(armed, []step{event(6990, 1, "a", die, StreamHealthy), relist(7000, 7050, StreamHealthy, "a die", "a destroy"), checkAt(9050, StreamSilent)}), -1},
		{"the same with both events",
			steps(armed, []step{event(6990, 1, "a", die, StreamHealthy), event(6991, 1, "a", destroy, StreamHealthy),
				relist(7000, 7050, StreamHealthy, "a die", "a destroy"), checkAt(60_000, StreamHealthy)}), -1},
		{"an event reports one change: a second start of the same container needs its own event",
			steps(armed, []step{event(6990, 1, "a", start, StreamHealthy), relist(7000, 7050, StreamHealthy, "a start"),
				event(8000, 1, "a", die, StreamHealthy), relist(8000, 8050, StreamHealthy, "a die"),
				relist(12_000, 12_050, StreamHealthy, "a start"), checkAt(14_049, StreamHealthy), checkAt(14_050, StreamSilent)}), -1},
		{"an event waits for its change until a listing started HeardKeep (30 s) after it; then it is forgotten",
			steps(armed, []step{event(6000, 1, "a", start, StreamHealthy), relist(35_999, 36_010, StreamHealthy),
				relist(37_000, 37_010, StreamHealthy, "a start"), checkAt(90_000, StreamHealthy), // still held at 35999
				event(40_000, 1, "b", start, StreamHealthy), relist(70_000, 70_010, StreamHealthy), // forgotten at 70000
				relist(71_000, 71_010, StreamHealthy, "b start"), checkAt(73_010, StreamSilent)}), -1},
		{"a listing that lags the event by more than grace (Docker's list view on a loaded node) finds it reported",
			steps(armed, []step{event(6000, 1, "a", die, StreamHealthy),
				relist(7000, 9000, StreamHealthy), relist(9500, 10_000, StreamHealthy), // the view still shows a running
				relist(12_000, 12_050, StreamHealthy, "a die"), checkAt(60_000, StreamHealthy)}), -1},
		{"the deadline is the earliest waiting change's",
			steps(armed, []step{relist(7000, 7050, StreamHealthy, "a die"), relist(8000, 8010, StreamHealthy, "b die")}), 9050},
		{"a broken stream: what it missed is no evidence, and the next stream is trusted",
			steps(armed, []step{relist(7000, 7050, StreamHealthy, "a die"), broken(StreamDown), checkAt(9050, StreamDown),
				open(10_000, 2, StreamHealthy), checkAt(60_000, StreamHealthy)}), -1},
		{"changes found while the stream is down do not count, nor those of the first listing after the open",
			steps(armed, []step{broken(StreamDown), relist(7000, 7010, StreamDown, "a die"), open(7500, 2, StreamHealthy),
				relist(8000, 8010, StreamHealthy, "b die"), relist(9499, 9510, StreamHealthy, "c die"), // 1ms short of grace after the open
				relist(10_500, 10_510, StreamHealthy, "d die"), checkAt(60_000, StreamHealthy),
				relist(11_500, 11_510, StreamHealthy, "e die"), checkAt(13_510, StreamSilent)}), -1},
		{"silent, resubscribed, confirmed by a change the new stream reports before the relist",
			steps(armed, []step{relist(7000, 7050, StreamHealthy, "a die"), checkAt(9050, StreamSilent),
				open(9100, 2, StreamConfirming), relist(9100, 9110, StreamConfirming),
				event(9500, 2, "b", start, StreamConfirming), relist(9500, 9510, StreamHealthy, "b start"),
				checkAt(60_000, StreamHealthy)}), -1},
		{"confirmed by a change the relist finds first and the new stream reports in time",
			steps(armed, []step{relist(7000, 7050, StreamHealthy, "a die"), checkAt(9050, StreamSilent),
				open(9100, 2, StreamConfirming), relist(9100, 9110, StreamConfirming, "b start"),
				event(9200, 2, "b", start, StreamHealthy)}), -1},
		{"a change reported after its deadline confirms nothing",
			steps(armed, []step{relist(7000, 7050, StreamHealthy, "a die"), checkAt(9050, StreamSilent),
				open(9100, 2, StreamConfirming), relist(9100, 9110, StreamConfirming, "b start"),
				event(11_110, 2, "b", start, StreamConfirming), checkAt(60_000, StreamConfirming)}), -1},
		{"confirming stays while nothing changes",
			steps(armed, []step{relist(7000, 7050, StreamHealthy, "a die"), checkAt(9050, StreamSilent),
				open(9100, 2, StreamConfirming), relist(10_000, 10_010, StreamConfirming), relist(11_000, 11_010, StreamConfirming),
				checkAt(600_000, StreamConfirming)}), -1},
		{"an event of the silent stream, delivered late, reports its change but confirms nothing",
			steps(armed, []step{relist(7000, 7050, StreamHealthy, "a die"), checkAt(9050, StreamSilent),
				open(9100, 2, StreamConfirming), event(9200, 1, "b", start, StreamConfirming),
				relist(9300, 9310, StreamConfirming, "b start"), checkAt(60_000, StreamConfirming)}), -1},
		{"the new stream misses a change too: silent again",
			steps(armed, []step{relist(7000, 7050, StreamHealthy, "a die"), checkAt(9050, StreamSilent),
				open(9100, 2, StreamConfirming), relist(9100, 9110, StreamConfirming), relist(11_100, 11_110, StreamConfirming),
				relist(12_000, 12_010, StreamConfirming, "b die"), checkAt(14_010, StreamSilent)}), -1},
		{"silent, then the resubscription breaks: the stream that opens next still has to confirm",
			steps(armed, []step{relist(7000, 7050, StreamHealthy, "a die"), checkAt(9050, StreamSilent), broken(StreamDown),
				open(11_000, 3, StreamConfirming)}), -1},
		{"while silent nothing is waited for",
			steps(armed, []step{relist(7000, 7050, StreamHealthy, "a die"), checkAt(9050, StreamSilent),
				relist(9100, 9110, StreamSilent, "b die")}), -1},
		{"after confirmation a break and a new stream need no confirmation",
			steps(armed, []step{relist(7000, 7050, StreamHealthy, "a die"), checkAt(9050, StreamSilent),
				open(9100, 2, StreamConfirming), event(9500, 2, "b", start, StreamConfirming), relist(9500, 9510, StreamHealthy, "b start"),
				broken(StreamDown), open(20_000, 3, StreamHealthy)}), -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := NewStreamWatch(2 * time.Second)
			for i, s := range tc.steps {
				s.do(w)
				if got := w.State(); got != s.want {
					t.Fatalf("step %d (%s): state %s, want %s", i, s.what, got, s.want)
				}
			}
			at, ok := w.Deadline()
			switch {
			case tc.deadline < 0 && ok:
				t.Errorf("deadline %s, want none", at.Sub(s0))
			case tc.deadline >= 0 && (!ok || !at.Equal(ms(tc.deadline))):
				t.Errorf("deadline %s (%v), want %dms", at.Sub(s0), ok, tc.deadline)
			}
		})
	}
}

// Check reports whether it found the stream silent, and the evidence is
// the change whose deadline came first.
func TestStreamWatchEvidence(t *testing.T) {
	w := NewStreamWatch(0)
	if w.Grace() != DefaultStreamGrace || DefaultStreamGrace != 2*time.Second {
		t.Fatalf("grace %s (default %s), want 2s", w.Grace(), DefaultStreamGrace)
	}
	if r := w.Reason(); r != "event stream not open yet" {
		t.Errorf("reason %q", r)
	}
	for _, s := range armed {
		s.do(w)
	}
	if r := w.Reason(); r != "" {
		t.Errorf("healthy: reason %q, want none", r)
	}
	w.Relisted(ms(7000), ms(7050), []Change{{"bbbbbbbbbbbbbbbbbbbb", die}})
	w.Relisted(ms(7060), ms(7070), []Change{{"aaaaaaaaaaaaaaaaaaaa", start}})
	if w.Check(ms(9060)) != true || w.Check(ms(9070)) != false {
		t.Fatal("Check: want true once, then false (already silent)")
	}
	m := w.Missed()
	if m.ContainerID != "bbbbbbbbbbbbbbbbbbbb" || m.Kind != die || !m.ListedAt.Equal(ms(7000)) || !m.By.Equal(ms(9050)) {
		t.Errorf("evidence %+v, want b's die listed at 7000ms, due by 9050ms", m)
	}
	want := "event stream silent: the relist listed at 12:00:07.000 found container bbbbbbbbbbbb died, and no die event came by 12:00:09.050"
	if r := w.Reason(); r != want {
		t.Errorf("silent: reason\n%q, want\n%q", r, want)
	}
	w.Opened(2, ms(9100))
	if r := w.Reason(); !strings.Contains(r, "resubscribed after it was silent") || !strings.Contains(r, "bbbbbbbbbbbb died") {
		t.Errorf("confirming: reason %q", r)
	}
	w.Broken(fmt.Errorf("EOF"))
	if r := w.Reason(); r != "event stream down: EOF" || w.Err() == nil {
		t.Errorf("down: reason %q, err %v", r, w.Err())
	}
	if w.Check(ms(60_000)) {
		t.Error("Check found a down stream silent")
	}
}

func TestEventKindOfAndChangesOf(t *testing.T) {
	for _, tc := range []struct {
		t    protocol.PodEventType
		kind runtimeadapter.EventKind
		ok   bool
	}{
		{protocol.ContainerStarted, start, true},
		{protocol.ContainerDied, die, true},
		{protocol.ContainerRemoved, destroy, true},
		{protocol.ContainerChanged, "", false},
	} {
		if k, ok := EventKindOf(tc.t); k != tc.kind || ok != tc.ok {
			t.Errorf("EventKindOf(%s) = %q, %v; want %q, %v", tc.t, k, ok, tc.kind, tc.ok)
		}
	}

	// From a real relist: the first listing, then a death, a removal of a
	// running container (died and removed), a created container (changed:
	// no event reports it) and a start.
	r := New()
	ls := func(cs ...runtimeadapter.Container) runtimeadapter.ListResult {
		return runtimeadapter.ListResult{Containers: cs}
	}
	c := func(id, uid string, s runtimeadapter.State) runtimeadapter.Container {
		return runtimeadapter.Container{ID: id, State: s, Labels: map[string]string{runtimeadapter.LabelPodUID: uid, runtimeadapter.LabelContainerName: id}}
	}
	r.Relist(ls(c("a", "p1", runtimeadapter.StateRunning), c("b", "p2", runtimeadapter.StateRunning), c("d", "p2", runtimeadapter.StateUnknown)))
	got := ChangesOf(r.Relist(ls(c("a", "p1", runtimeadapter.StateExited), c("c", "p2", runtimeadapter.StateUnknown),
		c("d", "p2", runtimeadapter.StateRunning))))
	want := []Change{{"a", die}, {"b", die}, {"b", destroy}, {"d", start}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ChangesOf = %v, want %v", got, want)
	}
}

func TestStreamStateNames(t *testing.T) {
	var names []string
	for _, s := range StreamStates {
		names = append(names, s.String())
	}
	if fmt.Sprint(names) != "[down healthy silent confirming]" || StreamState(9).String() != "invalid" {
		t.Errorf("names %v", names)
	}
}

// A map that held a burst is made anew once emptied (a Go map keeps its
// buckets: 10,000 pods' start events would stay ~120-240 B per pod).
func TestStreamWatchDropsEmptiedMaps(t *testing.T) {
	w := NewStreamWatch(time.Second)
	t0 := time.Unix(1000, 0)
	w.Opened(1, t0)
	var changes []Change
	for i := range 1000 {
		id := fmt.Sprintf("c%d", i)
		w.Event(1, id, runtimeadapter.EventStart, t0.Add(time.Millisecond))
		changes = append(changes, Change{ContainerID: id, Kind: runtimeadapter.EventStart})
	}
	before := reflect.ValueOf(w.heard).UnsafePointer()
	w.Relisted(t0.Add(time.Second), t0.Add(2*time.Second), changes)
	if len(w.heard) != 0 {
		t.Fatalf("%d events still heard, want 0", len(w.heard))
	}
	if reflect.ValueOf(w.heard).UnsafePointer() == before {
		t.Error("the emptied heard map was kept with its buckets")
	}
	// Emptied by expiry too, and an empty map is not made again each relist.
	w.Event(1, "late", runtimeadapter.EventStart, t0.Add(3*time.Second))
	w.Relisted(t0.Add(time.Hour), t0.Add(time.Hour), nil)
	kept := reflect.ValueOf(w.heard).UnsafePointer()
	w.Relisted(t0.Add(2*time.Hour), t0.Add(2*time.Hour), nil)
	if len(w.heard) != 0 || reflect.ValueOf(w.heard).UnsafePointer() != kept {
		t.Errorf("heard: %d entries; made anew while already empty: %v", len(w.heard), reflect.ValueOf(w.heard).UnsafePointer() != kept)
	}
}
