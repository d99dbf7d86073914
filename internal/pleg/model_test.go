package pleg

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/internal/protocol"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// model is a deliberately naive Relister: it rebuilds a map every time and
// uses Transition directly. Relist must agree with it on every listing.
type model struct {
	old map[string]runtimeadapter.Container
}

func (m *model) relist(res runtimeadapter.ListResult) []protocol.PodTransitions {
	cur := map[string]runtimeadapter.Container{}
	for _, c := range res.Containers {
		if c.ID == "" || c.Labels[runtimeadapter.LabelPodUID] == "" {
			continue
		}
		if _, dup := cur[c.ID]; !dup {
			cur[c.ID] = c
		}
	}
	type key struct{ uid, id string }
	evs := map[key][]protocol.PodEventType{}
	names := map[string]string{}
	for id, c := range cur {
		from := NonExistent
		if o, ok := m.old[id]; ok {
			from = StateOf(o.State)
		}
		if ts := Transition(from, StateOf(c.State)); ts != nil {
			evs[key{c.Labels[runtimeadapter.LabelPodUID], id}] = ts
			names[id] = c.Labels[runtimeadapter.LabelContainerName]
		}
	}
	for id, o := range m.old {
		if _, ok := cur[id]; !ok {
			evs[key{o.Labels[runtimeadapter.LabelPodUID], id}] = Transition(StateOf(o.State), NonExistent)
			names[id] = o.Labels[runtimeadapter.LabelContainerName]
		}
	}
	m.old = cur

	keys := make([]key, 0, len(evs))
	for k := range evs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := strings.Compare(a.uid, b.uid); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	var out []protocol.PodTransitions
	for _, k := range keys {
		if len(out) == 0 || string(out[len(out)-1].UID) != k.uid {
			b := protocol.PodTransitions{UID: types.UID(k.uid), ObservedAt: res.ObservedAt}
			seen := map[string]bool{}
			for _, c := range res.Containers {
				if c.ID != "" && c.Labels[runtimeadapter.LabelPodUID] == k.uid && !seen[c.ID] {
					seen[c.ID] = true
					b.Containers = append(b.Containers, c)
				}
			}
			out = append(out, b)
		}
		for _, t := range evs[k] {
			last := &out[len(out)-1]
			last.Events = append(last.Events, protocol.PodLifecycleEvent{Type: t, ContainerID: k.id, ContainerName: names[k.id]})
		}
	}
	return out
}

func TestRelistMatchesModel(t *testing.T) {
	states := []runtimeadapter.State{running, running, running, exited, unknown}
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 42))
		r, m := New(), &model{}
		// A pool of containers; each listing takes a subset, mostly in a
		// stable order with occasional shuffles, insertions and removals.
		pool := make([]runtimeadapter.Container, 40)
		for i := range pool {
			pool[i] = ctr(fmt.Sprintf("id%02d", i), fmt.Sprintf("pod%d", rng.IntN(6)), fmt.Sprintf("c%d", i%3), states[rng.IntN(len(states))])
		}
		present := make([]bool, len(pool))
		for step := range 30 {
			for i := range pool {
				switch x := rng.IntN(20); {
				case x == 0:
					present[i] = !present[i]
				case x == 1:
					pool[i].State = states[rng.IntN(len(states))]
				}
			}
			var cs []runtimeadapter.Container
			for i, c := range pool {
				if present[i] {
					cs = append(cs, c)
				}
			}
			switch rng.IntN(6) {
			case 0:
				rng.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
			case 1:
				if len(cs) > 0 { // a duplicate
					cs = append(cs, cs[rng.IntN(len(cs))])
				}
			case 2: // ignored entries
				cs = append(cs, runtimeadapter.Container{ID: "stray", State: running}, runtimeadapter.Container{})
			}
			res := listing(0, cs...)
			got, want := r.Relist(res), m.relist(res)
			if !reflect.DeepEqual(summary(got), summary(want)) {
				t.Fatalf("seed %d step %d:\n got  %q\n want %q", seed, step, summary(got), summary(want))
			}
			if r.Len() != len(m.old) {
				t.Fatalf("seed %d step %d: Len() = %d, model has %d", seed, step, r.Len(), len(m.old))
			}
		}
	}
}
