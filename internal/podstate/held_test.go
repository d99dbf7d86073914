package podstate

import (
	"maps"
	"testing"
	"time"

	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// A packed label set gives back the map it was packed from, whatever mix
// of actorlet's own labels and others it has.
func TestPackLabelsRoundTrip(t *testing.T) {
	pod := testPod("app")
	for _, tc := range []struct {
		name string
		m    map[string]string
	}{
		{"nil", nil},
		{"empty", map[string]string{}},
		{"an app container's", app(pod, "app", 2, runtimeadapter.StateRunning).Labels},
		{"a sandbox's", sandbox(runtimeadapter.StateRunning).Labels},
		{"others only", map[string]string{"maintainer": "x", "org.opencontainers.image.version": "1", "": "empty key"}},
		{"every known label and others", func() map[string]string {
			m := map[string]string{"z": "last", "a": "first", "io.actorlet.future": "v"}
			for i, k := range knownLabels {
				m[k] = string(rune('A' + i))
			}
			return m
		}()},
		{"known labels with empty values", map[string]string{runtimeadapter.LabelPodUID: "", podsync.LabelSidecar: "0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := packLabels(tc.m)
			got := p.unpack()
			if !maps.Equal(got, tc.m) {
				t.Fatalf("unpack(pack(m)) = %v, want %v", got, tc.m)
			}
			if len(tc.m) == 0 && got != nil {
				t.Errorf("an empty set unpacks to %v, want nil", got)
			}
			for i, k := range knownLabels {
				if v := p.known(i); v != tc.m[k] {
					t.Errorf("known(%s) = %q, want %q", k, v, tc.m[k])
				}
			}
		})
	}
}

// A PLEG listing that changes nothing the machine holds (the pod's
// containers, the same instances in the same states) costs no allocation:
// it is the common batch, and a node sends one per pod and transition.
func TestUnchangedListingAllocatesNothing(t *testing.T) {
	pod := testPod("app")
	p := NewPod(cfg(), nil)
	p.Step(Started{}, t0)
	p.Step(SpecChanged{Pod: pod}, t0)
	up := cs(sandbox(runtimeadapter.StateRunning), app(pod, "app", 0, runtimeadapter.StateRunning))
	p.Step(WorkDone{Listing: Listing{Containers: up, From: t0, Until: t0}}, t0)
	if p.Phase() != PhaseIdle {
		t.Fatalf("phase %s, want Idle", p.Phase())
	}
	// The relist's own copy of the same listing, as a new slice and maps.
	again := make([]runtimeadapter.Container, len(up))
	for i, c := range up {
		c.Labels = maps.Clone(c.Labels)
		again[i] = c
	}
	at := t0
	ev := &Listed{Containers: again}
	allocs := testing.AllocsPerRun(1000, func() {
		at = at.Add(time.Millisecond)
		ev.ObservedAt = at
		if effs := p.Step(ev, at); len(effs) != 0 {
			t.Fatalf("an unchanged listing had effects %s", describe(effs))
		}
	})
	if allocs != 0 {
		t.Errorf("an unchanged PLEG listing allocates %.1f times, want 0", allocs)
	}
	// The same through StepListed, the pod actor's way (the event by value).
	allocs = testing.AllocsPerRun(1000, func() {
		at = at.Add(time.Millisecond)
		if effs := p.StepListed(Listed{Containers: again, ObservedAt: at}, at); len(effs) != 0 {
			t.Fatalf("an unchanged listing had effects %s", describe(effs))
		}
	})
	if allocs != 0 {
		t.Errorf("StepListed of an unchanged listing allocates %.1f times, want 0", allocs)
	}
	if !p.view.until.Equal(at) {
		t.Errorf("the listing held spans until %s, want the last listing's %s", p.view.until, at)
	}
	// A changed one is still taken, and asks for a sync.
	dead := cs(sandbox(runtimeadapter.StateRunning), app(pod, "app", 0, runtimeadapter.StateExited))
	if got := describe(p.Step(&Listed{Containers: dead, ObservedAt: at.Add(time.Second)}, at)); got != "RequestSync" {
		t.Errorf("a changed listing: %q, want RequestSync", got)
	}
	if h := p.view.containers[1]; h.State != runtimeadapter.StateExited || h.labels.known(knownContainerName) != "app" {
		t.Errorf("held after the change: %+v", h)
	}
}

// A listing's containers after the first keep only the known label values
// they do not share with the first (the pod's node, UID, name, namespace
// are in each): every container still unpacks to its own map, and its
// known values read the same.
func TestHeldListingSharesPodLabels(t *testing.T) {
	pod := testPod("app", "side")
	odd := app(pod, "side", 1, runtimeadapter.StateRunning)
	odd.Labels = maps.Clone(odd.Labels)
	odd.Labels[runtimeadapter.LabelPodName] = "other" // differs from the first: kept
	odd.Labels["vendor"] = "x"
	listing := cs(sandbox(runtimeadapter.StateRunning), app(pod, "app", 0, runtimeadapter.StateRunning), odd)
	hs := hold(listing)
	back := unhold(hs)
	for i := range listing {
		if !maps.Equal(back[i].Labels, listing[i].Labels) {
			t.Errorf("container %d unpacks to %v, want %v", i, back[i].Labels, listing[i].Labels)
		}
		for j, k := range knownLabels {
			if v := hs[i].labels.knownOn(j, base(hs, i)); v != listing[i].Labels[k] {
				t.Errorf("container %d: %s = %q, want %q", i, k, v, listing[i].Labels[k])
			}
		}
	}
	if hs[0].labels.shared != 0 {
		t.Errorf("the first container shares %016b, want nothing", hs[0].labels.shared)
	}
	if hs[1].labels.shared == 0 || len(hs[1].labels.vals) >= len(packLabels(listing[1].Labels).vals) {
		t.Errorf("the second container keeps %d values (shared %016b), its own pack %d", len(hs[1].labels.vals), hs[1].labels.shared, len(packLabels(listing[1].Labels).vals))
	}
	if hs[2].labels.shared&(1<<2) != 0 {
		t.Error("a pod name that differs from the first container's is shared")
	}
}
