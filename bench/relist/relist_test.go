package relist

import (
	"reflect"
	"testing"

	"github.com/actorlet/actorlet/internal/pleg"
	"github.com/actorlet/actorlet/runtimeadapter"
)

func TestInputs(t *testing.T) {
	for _, s := range Scenarios {
		in := NewInputs(1000, s)
		want := map[string]int{"no change": 0, "1 changed": 1, "1% changed": 30}[s.Name]
		if in.Changed != want {
			t.Errorf("%s: %d changed, want %d", s.Name, in.Changed, want)
		}
		if &in.A.Containers[0] == &in.B.Containers[0] || in.A.Containers[0].ID == "" {
			t.Errorf("%s: listings share memory", s.Name)
		}
	}
}

// The baseline and the Relister agree on a pod that vanishes and one that
// appears (the benchmark's inputs only flip states).
func TestBaselineAppearAndVanish(t *testing.T) {
	a, b := Listing(3), Listing(3)
	b.Containers = b.Containers[PerPod:] // pod 0 gone
	r, g := pleg.New(), NewBaseline()
	for step, res := range []runtimeadapter.ListResult{a, b, a} {
		got, want := r.Relist(res), g.Relist(res)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d: relister %+v, baseline %+v", step, got, want)
		}
		if step > 0 && len(got) != 1 {
			t.Fatalf("step %d: %d batches, want 1", step, len(got))
		}
	}
	if g.Len() != 3 || r.Len() != 9 {
		t.Errorf("Len: baseline %d pods, relister %d containers", g.Len(), r.Len())
	}
}

func TestMeasure(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a benchmark")
	}
	in := NewInputs(100, Scenarios[2])
	for _, impl := range Impls {
		if r, ok := Measure(impl, in); !ok || r.NsPerOp <= 0 {
			t.Errorf("%s: %+v %v", impl.Name, r, ok)
		}
	}
}
