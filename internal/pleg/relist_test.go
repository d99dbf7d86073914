package pleg

import (
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/internal/protocol"
	"github.com/actorlet/actorlet/runtimeadapter"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func ctr(id, uid, name string, s runtimeadapter.State) runtimeadapter.Container {
	return runtimeadapter.Container{
		ID:    id,
		Name:  "actorlet_" + name + "_" + uid,
		State: s,
		Labels: map[string]string{
			runtimeadapter.LabelPodUID:        uid,
			runtimeadapter.LabelContainerName: name,
		},
	}
}

func listing(at time.Duration, cs ...runtimeadapter.Container) runtimeadapter.ListResult {
	return runtimeadapter.ListResult{Containers: cs, ObservedAt: t0.Add(at)}
}

func ev(t protocol.PodEventType, id, name string) protocol.PodLifecycleEvent {
	return protocol.PodLifecycleEvent{Type: t, ContainerID: id, ContainerName: name}
}

// summary renders batches as "uid: events | container ids" for compact
// comparison.
func summary(batches []protocol.PodTransitions) []string {
	var out []string
	for _, b := range batches {
		s := string(b.UID) + ":"
		for _, e := range b.Events {
			s += fmt.Sprintf(" %s(%s/%s)", e.Type, e.ContainerID, e.ContainerName)
		}
		s += " |"
		for _, c := range b.Containers {
			s += " " + c.ID
		}
		out = append(out, s)
	}
	return out
}

func check(t *testing.T, got []protocol.PodTransitions, want ...string) {
	t.Helper()
	if g := summary(got); !reflect.DeepEqual(g, want) {
		t.Errorf("batches:\n got  %q\n want %q", g, want)
	}
}

const (
	running = runtimeadapter.StateRunning
	exited  = runtimeadapter.StateExited
	unknown = runtimeadapter.StateUnknown
)

func TestFirstRelistTreatsEverythingAsNew(t *testing.T) {
	r := New()
	got := r.Relist(listing(0,
		ctr("c1", "pod-a", "web", running),
		ctr("c2", "pod-a", "init", exited),
		ctr("c3", "pod-b", "POD", unknown),
	))
	check(t, got,
		"pod-a: ContainerStarted(c1/web) ContainerDied(c2/init) | c1 c2",
		"pod-b: ContainerChanged(c3/POD) | c3",
	)
	for _, b := range got {
		if !b.ObservedAt.Equal(t0) {
			t.Errorf("ObservedAt = %v, want %v", b.ObservedAt, t0)
		}
	}
	if r.Len() != 3 {
		t.Errorf("Len() = %d, want 3", r.Len())
	}
}

func TestEmptyRelists(t *testing.T) {
	r := New()
	if got := r.Relist(runtimeadapter.ListResult{}); got != nil {
		t.Fatalf("empty first listing: %v", summary(got))
	}
	if got := r.Relist(listing(time.Second)); got != nil {
		t.Fatalf("empty second listing: %v", summary(got))
	}
}

func TestNoChangeProducesNothing(t *testing.T) {
	r := New()
	l := listing(0, ctr("c1", "pod-a", "web", running), ctr("c2", "pod-a", "side", exited))
	r.Relist(l)
	for i := range 3 {
		if got := r.Relist(l); got != nil {
			t.Fatalf("relist %d: %v", i, summary(got))
		}
	}
}

func TestLifecycleOfOneContainer(t *testing.T) {
	r := New()
	steps := []struct {
		list runtimeadapter.ListResult
		want []string
	}{
		{listing(0, ctr("c1", "p", "web", unknown)), []string{"p: ContainerChanged(c1/web) | c1"}},
		{listing(1, ctr("c1", "p", "web", running)), []string{"p: ContainerStarted(c1/web) | c1"}},
		{listing(2, ctr("c1", "p", "web", running)), nil},
		{listing(3, ctr("c1", "p", "web", exited)), []string{"p: ContainerDied(c1/web) | c1"}},
		{listing(4), []string{"p: ContainerRemoved(c1/web) |"}},
		{listing(5), nil},
	}
	for i, s := range steps {
		got := r.Relist(s.list)
		if g := summary(got); !reflect.DeepEqual(g, s.want) {
			t.Fatalf("step %d:\n got  %q\n want %q", i, g, s.want)
		}
	}
	if r.Len() != 0 {
		t.Errorf("Len() = %d after removal, want 0", r.Len())
	}
}

func TestRunningContainerVanishes(t *testing.T) {
	r := New()
	r.Relist(listing(0, ctr("c1", "p", "web", running), ctr("c2", "p", "side", running)))
	got := r.Relist(listing(1, ctr("c2", "p", "side", running)))
	check(t, got, "p: ContainerDied(c1/web) ContainerRemoved(c1/web) | c2")
}

func TestWholePodVanishes(t *testing.T) {
	r := New()
	r.Relist(listing(0,
		ctr("b", "p", "web", running),
		ctr("a", "p", "init", exited),
		ctr("x", "q", "web", running),
	))
	got := r.Relist(listing(1, ctr("x", "q", "web", running)))
	check(t, got, "p: ContainerRemoved(a/init) ContainerDied(b/web) ContainerRemoved(b/web) |")
	if got[0].Containers != nil {
		t.Errorf("Containers = %v, want none", got[0].Containers)
	}
}

// A container created and dead between two relists is first seen exited:
// the kubelet's blind spot, reported as a death.
func TestBlindSpot(t *testing.T) {
	r := New()
	r.Relist(listing(0, ctr("c1", "p", "web", running)))
	got := r.Relist(listing(1, ctr("c1", "p", "web", running), ctr("c2", "p", "job", exited)))
	check(t, got, "p: ContainerDied(c2/job) | c1 c2")

	// Created, died and removed within one period: invisible, as documented.
	if got := r.Relist(listing(2, ctr("c1", "p", "web", running), ctr("c2", "p", "job", exited))); got != nil {
		t.Fatalf("unexpected %v", summary(got))
	}
}

func TestUnknownStates(t *testing.T) {
	r := New()
	r.Relist(listing(0, ctr("c1", "p", "web", running), ctr("c2", "p", "side", exited)))
	// Paused and an unrecognised state both read as unknown.
	got := r.Relist(listing(1, ctr("c1", "p", "web", unknown), ctr("c2", "p", "side", "weird")))
	check(t, got, "p: ContainerChanged(c1/web) ContainerChanged(c2/side) | c1 c2")
	// Unknown → running, unknown → gone.
	got = r.Relist(listing(2, ctr("c1", "p", "web", running)))
	check(t, got, "p: ContainerStarted(c1/web) ContainerRemoved(c2/side) | c1")
	// Running → unknown → exited.
	r.Relist(listing(3, ctr("c1", "p", "web", unknown)))
	got = r.Relist(listing(4, ctr("c1", "p", "web", exited)))
	check(t, got, "p: ContainerDied(c1/web) | c1")
}

func TestMultiPodBatchingAndOrdering(t *testing.T) {
	r := New()
	r.Relist(listing(0,
		ctr("c9", "pod-z", "web", running),
		ctr("c5", "pod-a", "web", running),
		ctr("c3", "pod-m", "web", running),
		ctr("c1", "pod-a", "side", running),
	))
	// pod-m unchanged; pod-z and pod-a change, listed in no particular order.
	got := r.Relist(listing(time.Second,
		ctr("c7", "pod-a", "late", running),
		ctr("c3", "pod-m", "web", running),
		ctr("c9", "pod-z", "web", exited),
		ctr("c5", "pod-a", "web", exited),
		ctr("c2", "pod-a", "init", exited),
	))
	check(t, got,
		// Events by container ID; c1 gone (Died, Removed); Containers in listing order.
		"pod-a: ContainerDied(c1/side) ContainerRemoved(c1/side) ContainerDied(c2/init) ContainerDied(c5/web) ContainerStarted(c7/late) | c7 c5 c2",
		"pod-z: ContainerDied(c9/web) | c9",
	)
	for _, b := range got {
		if !b.ObservedAt.Equal(t0.Add(time.Second)) {
			t.Errorf("%s: ObservedAt = %v", b.UID, b.ObservedAt)
		}
	}
	// Containers are the listed values.
	if c := got[1].Containers[0]; c.State != exited || c.Labels[runtimeadapter.LabelContainerName] != "web" {
		t.Errorf("container not copied from listing: %+v", c)
	}
}

func TestDeterministicOutput(t *testing.T) {
	build := func() []protocol.PodTransitions {
		r := New()
		var cs []runtimeadapter.Container
		for i := range 50 {
			cs = append(cs, ctr(fmt.Sprintf("c%02d", i), fmt.Sprintf("pod-%d", i%7), "web", running))
		}
		return r.Relist(listing(0, cs...))
	}
	first := build()
	for range 20 {
		if got := build(); !reflect.DeepEqual(got, first) {
			t.Fatalf("output differs between runs")
		}
	}
	for i := 1; i < len(first); i++ {
		if first[i-1].UID >= first[i].UID {
			t.Fatalf("batches not sorted by UID: %s before %s", first[i-1].UID, first[i].UID)
		}
	}
}

func TestIgnoresUnlabelledAndDuplicates(t *testing.T) {
	r := New()
	noUID := runtimeadapter.Container{ID: "x", State: running, Labels: map[string]string{}}
	noLabels := runtimeadapter.Container{ID: "y", State: running}
	noID := ctr("", "p", "web", running)
	got := r.Relist(listing(0, noUID, noLabels, noID, ctr("c1", "p", "web", running), ctr("c1", "p", "web", exited)))
	if len(got) != 1 || len(got[0].Events) != 1 || got[0].Events[0] != ev(started, "c1", "web") {
		t.Fatalf("got %q", summary(got))
	}
	if r.Len() != 1 {
		t.Errorf("Len() = %d, want 1", r.Len())
	}
}

// When a List fails the caller does not call Relist; the next successful
// listing is diffed against the last successful one.
func TestSkippedListingKeepsSnapshot(t *testing.T) {
	r := New()
	r.Relist(listing(0, ctr("c1", "p", "web", running)))
	// (a failed List here: Relist not called)
	got := r.Relist(listing(2*time.Second, ctr("c1", "p", "web", exited)))
	check(t, got, "p: ContainerDied(c1/web) | c1")
}

func TestBatchesAreIndependentOfLaterRelists(t *testing.T) {
	r := New()
	first := r.Relist(listing(0, ctr("c1", "p", "web", running), ctr("c2", "q", "web", running)))
	want := summary(first)
	r.Relist(listing(1, ctr("c1", "p", "web", exited)))
	r.Relist(listing(2, ctr("c3", "r", "web", running)))
	if got := summary(first); !reflect.DeepEqual(got, want) {
		t.Fatalf("earlier batches changed:\n got  %q\n want %q", got, want)
	}
}

func TestUIDType(t *testing.T) {
	r := New()
	got := r.Relist(listing(0, ctr("c1", "6f1c-uid", "web", running)))
	if got[0].UID != types.UID("6f1c-uid") {
		t.Fatalf("UID = %q", got[0].UID)
	}
}

func TestRelistNoChangeDoesNotAllocate(t *testing.T) {
	r := New()
	l := benchListing(200, 3)
	r.Relist(l)
	if n := testing.AllocsPerRun(50, func() { r.Relist(l) }); n != 0 {
		t.Fatalf("no-change relist allocated %v times, want 0", n)
	}
}

// The buffer of a burst's events (every container starting at once) is
// not kept after it; a small one is, and a relist without changes still
// allocates nothing.
func TestRelistDropsBurstBuffer(t *testing.T) {
	r := New()
	l := benchListing(1000, 3) // 3000 containers: 3000 ContainerStarted
	if n := len(r.Relist(l)); n != 1000 {
		t.Fatalf("%d batches, want 1000", n)
	}
	if c := cap(r.pending); c > maxKeptPending {
		t.Errorf("a burst's event buffer of capacity %d kept, want at most %d", c, maxKeptPending)
	}
	small := New()
	small.Relist(benchListing(2, 2))
	if cap(small.pending) == 0 {
		t.Error("a small event buffer was dropped")
	}
	if n := testing.AllocsPerRun(50, func() { r.Relist(l) }); n != 0 {
		t.Fatalf("no-change relist allocated %v times, want 0", n)
	}
}

// A snapshot entry is one 64-B allocation per container (a field that
// moves it to the next size class costs 16 B per container of a node).
func TestSnapshotEntrySize(t *testing.T) {
	if n := unsafe.Sizeof(entry{}); n > 64 {
		t.Errorf("snapshot entry is %d B, over its 64-B size class", n)
	}
}

// Relist generations wrap around without losing a container: an entry's
// gen is only ever compared with the current one.
func TestRelistGenerationWraps(t *testing.T) {
	r := New()
	l := benchListing(3, 2)
	r.Relist(l)
	r.gen = math.MaxUint32 - 1
	for range 4 {
		if b := r.Relist(l); b != nil {
			t.Fatalf("an unchanged listing across the wrap gave %v", summary(b))
		}
	}
	if r.Len() != 6 {
		t.Errorf("snapshot holds %d containers, want 6", r.Len())
	}
}
