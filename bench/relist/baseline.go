// Package relist benchmarks actorlet's PLEG core (internal/pleg.Relister)
// against a baseline: a straightforward relist that rebuilds its maps on
// every listing, as the kubelet's generic PLEG (pkg/kubelet/pleg/generic.go)
// does. Both produce the same batches (protocol.PodTransitions) from the same
// listings; see Baseline and the equivalence test in internal/pleg.
package relist

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/internal/pleg"
	"github.com/actorlet/actorlet/internal/protocol"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// Baseline is the kubelet generic PLEG's relist, transliterated to
// actorlet's types and transition table. On every listing it:
//
//  1. groups the listing into pods: a new map of pod UID → pod, each pod a
//     new slice of its containers (the kubelet's runtime.GetPods does this
//     for the PLEG);
//  2. records each pod as "current" in its pod records (a map of UID →
//     {old, current}), finds each container's old state by a linear search
//     of the old pod's containers (Pod.FindContainerByID), and collects the
//     events of every change in a new map of pod UID → events;
//  3. walks every pod record to find pods that vanished, then makes every
//     current pod the old one (podRecords.updateAll);
//  4. turns the events into actorlet's batches: one per pod, sorted by pod
//     UID, events by container ID, with the pod's listed containers.
//
// Step 4 does what the Relister's contract asks (the kubelet instead sends
// its events to a channel unordered), so that both sides do the same job.
// Duplicated container IDs within one listing are not filtered (the
// kubelet does not either); listings used to compare the two have none.
type Baseline struct {
	records map[types.UID]*podRecord
}

type podRecord struct {
	old, current *kpod
}

// kpod is one pod of one listing. Containers are copied out of the
// listing (id, name, state and their index in it), as the kubelet's
// runtime builds new Pod and Container objects on every GetPods.
type kpod struct {
	uid        types.UID
	containers []kcontainer
}

type kcontainer struct {
	id, name string
	state    pleg.State
	index    int // in the listing
}

// NewBaseline returns a baseline relister with no pod records.
func NewBaseline() *Baseline {
	return &Baseline{records: map[types.UID]*podRecord{}}
}

type bev struct {
	id, name string
	t        protocol.PodEventType
}

// Relist diffs res against the last listing and returns the batches, as
// pleg.Relister.Relist does.
func (g *Baseline) Relist(res runtimeadapter.ListResult) []protocol.PodTransitions {
	// 1. GetPods: group the listing by pod.
	pods := map[types.UID]*kpod{}
	var order []*kpod
	for i := range res.Containers {
		c := &res.Containers[i]
		uid := types.UID(c.Labels[runtimeadapter.LabelPodUID])
		if c.ID == "" || uid == "" {
			continue
		}
		p := pods[uid]
		if p == nil {
			p = &kpod{uid: uid}
			pods[uid] = p
			order = append(order, p)
		}
		p.containers = append(p.containers, kcontainer{
			id: c.ID, name: c.Labels[runtimeadapter.LabelContainerName], state: pleg.StateOf(c.State), index: i,
		})
	}

	// 2. Visible pods against their records.
	events := map[types.UID][]bev{}
	for _, p := range order {
		r := g.records[p.uid]
		if r == nil {
			r = &podRecord{}
			g.records[p.uid] = r
		}
		r.current = p
		old := r.old
		for _, c := range p.containers {
			for _, t := range pleg.Transition(stateIn(old, c.id), c.state) {
				events[p.uid] = append(events[p.uid], bev{id: c.id, name: c.name, t: t})
			}
		}
		if old == nil {
			continue
		}
		for _, o := range old.containers {
			if stateIn(p, o.id) != pleg.NonExistent {
				continue
			}
			for _, t := range pleg.Transition(o.state, pleg.NonExistent) {
				events[p.uid] = append(events[p.uid], bev{id: o.id, name: o.name, t: t})
			}
		}
	}
	// 3. Pods no longer visible, then updateAll.
	for uid, r := range g.records {
		if r.current != nil {
			continue
		}
		for _, o := range r.old.containers {
			for _, t := range pleg.Transition(o.state, pleg.NonExistent) {
				events[uid] = append(events[uid], bev{id: o.id, name: o.name, t: t})
			}
		}
	}
	for uid, r := range g.records {
		if r.current == nil {
			delete(g.records, uid)
			continue
		}
		r.old, r.current = r.current, nil
	}

	// 4. Batches.
	if len(events) == 0 {
		return nil
	}
	uids := make([]types.UID, 0, len(events))
	for uid := range events {
		uids = append(uids, uid)
	}
	slices.Sort(uids)
	out := make([]protocol.PodTransitions, 0, len(uids))
	for _, uid := range uids {
		evs := events[uid]
		slices.SortStableFunc(evs, func(a, b bev) int { return cmp.Compare(a.id, b.id) })
		b := protocol.PodTransitions{UID: uid, ObservedAt: res.ObservedAt, Events: make([]protocol.PodLifecycleEvent, len(evs))}
		for i, e := range evs {
			b.Events[i] = protocol.PodLifecycleEvent{Type: e.t, ContainerID: e.id, ContainerName: e.name}
		}
		if p := pods[uid]; p != nil {
			for _, c := range p.containers {
				b.Containers = append(b.Containers, res.Containers[c.index])
			}
		}
		out = append(out, b)
	}
	return out
}

// stateIn is getContainerState: the container's state in pod p, found by
// a linear search, or NonExistent.
func stateIn(p *kpod, id string) pleg.State {
	if p == nil {
		return pleg.NonExistent
	}
	for i := range p.containers {
		if p.containers[i].id == id {
			return p.containers[i].state
		}
	}
	return pleg.NonExistent
}

// Len returns the number of pods in the records.
func (g *Baseline) Len() int { return len(g.records) }
