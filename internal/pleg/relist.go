package pleg

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/internal/protocol"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// Relister remembers the last listing it was given and reports what changed
// since. The zero value is not usable; call New. A Relister is not safe for
// concurrent use: one relist actor owns it.
//
// Only successful listings may be passed to Relist. When a List call fails
// the caller skips Relist, and the snapshot stays exactly as it was, so the
// next successful listing is diffed against the last successful one: a
// failed list never reads as "every container vanished".
type Relister struct {
	// gen numbers Relist calls; an entry whose gen lags after a listing
	// was absent from it. 32 bits: every entry's gen is the current one
	// or the one before it (the rest are deleted by each Relist), so a
	// wrap-around is harmless.
	gen uint32
	// byID is the snapshot, keyed by container ID. Entries are updated in
	// place, and the map is only written when containers appear or vanish.
	byID map[string]*entry
	// order holds the entries in the last listing's order, aligned with its
	// Containers (nil for ignored ones). Runtimes list in a stable order, so
	// the next listing is matched against it sequentially, and a relist
	// without changes does no map lookups at all.
	order []*entry
	// spare is the buffer the next order is built in.
	spare []*entry
	// pending collects one Relist's events; reused between calls.
	pending []pendingEvent
}

// maxKeptPending is the most events whose buffer a Relister keeps
// between relists.
const maxKeptPending = 1024

// entry is the snapshot's record of one container.
type entry struct {
	id     string
	podUID types.UID
	name   string // container name in the pod spec (LabelContainerName)
	state  State
	pos    int32  // index in the order of the listing it was last seen in
	gen    uint32 // Relist call it was last seen in
	// (pos and gen of 32 bits: an entry is 64 B, not 80, per container)
}

type pendingEvent struct {
	uid types.UID
	ev  protocol.PodLifecycleEvent
}

// New returns a Relister with an empty snapshot.
//
// Like the kubelet's PLEG, the first Relist treats every container as
// previously non-existent: it reports ContainerStarted for running
// containers, ContainerDied for exited ones and ContainerChanged for
// unknown ones. A relist actor that restarts therefore replays the state of
// every pod, which the pod actors use to rebuild theirs.
func New() *Relister {
	return &Relister{byID: make(map[string]*entry)}
}

// Len returns the number of containers in the snapshot.
func (r *Relister) Len() int { return len(r.byID) }

// Relist diffs res against the snapshot, makes res the new snapshot and
// returns one PodTransitions per pod that has at least one event, ordered by
// pod UID; nil when nothing changed.
//
// Containers are identified by ID and grouped by the LabelPodUID label; the
// event's ContainerName is the LabelContainerName label (both read when a
// container is first seen). A container without an ID or a pod UID label is
// not actorlet's and is ignored; if an ID occurs twice in res, the later
// occurrences are ignored. Transition gives the events of each container.
// Within a batch, events are ordered by container ID, and a container's own
// events keep their table order (Died before Removed). Containers holds
// every container of the pod in res, in res's order, including those
// without events (empty when the whole pod is gone); ObservedAt is
// res.ObservedAt.
//
// The returned batches are new and owned by the caller, but their
// Containers share Labels maps with res, which must not be mutated
// afterwards. A relist without changes allocates nothing.
func (r *Relister) Relist(res runtimeadapter.ListResult) []protocol.PodTransitions {
	r.gen++
	r.pending = r.pending[:0]

	before := len(r.byID) // snapshot size before this listing
	seen := 0             // snapshot entries found again in res
	next := slices.Grow(r.spare[:0], len(res.Containers))[:len(res.Containers)]
	cursor := 0 // position in r.order where the next container is expected
	for i := range res.Containers {
		c := &res.Containers[i]
		next[i] = nil
		if c.ID == "" {
			continue
		}
		e := r.expect(cursor)
		if e == nil || e.id != c.ID {
			e = r.byID[c.ID]
		}
		switch {
		case e == nil:
			uid := c.Labels[runtimeadapter.LabelPodUID]
			if uid == "" {
				continue
			}
			e = &entry{
				id:     c.ID,
				podUID: types.UID(uid),
				name:   c.Labels[runtimeadapter.LabelContainerName],
				state:  NonExistent,
			}
			r.byID[c.ID] = e
		case e.gen == r.gen:
			continue // duplicate ID within this listing
		default:
			seen++
			cursor = int(e.pos) + 1
		}
		e.gen = r.gen
		e.pos = int32(i)
		if to := StateOf(c.State); to != e.state {
			r.emit(e, to)
			e.state = to
		}
		next[i] = e
	}

	// Anything in the old snapshot not seen again has disappeared. Skip the
	// sweep when every old entry was seen.
	if seen < before {
		for _, e := range r.order {
			if e != nil && e.gen != r.gen {
				r.emit(e, NonExistent)
				delete(r.byID, e.id)
			}
		}
	}
	clear(r.order) // don't keep vanished entries alive in the spare buffer
	r.order, r.spare = next, r.order

	if len(r.pending) == 0 {
		return nil
	}
	return r.batch(res)
}

// expect returns the first entry of the last listing at or after position
// cursor, or nil.
func (r *Relister) expect(cursor int) *entry {
	for ; cursor < len(r.order); cursor++ {
		if e := r.order[cursor]; e != nil {
			return e
		}
	}
	return nil
}

// emit queues the events of e moving to state to.
func (r *Relister) emit(e *entry, to State) {
	p := table[e.state][to]
	for _, t := range p.ev[:p.n] {
		r.pending = append(r.pending, pendingEvent{
			uid: e.podUID,
			ev:  protocol.PodLifecycleEvent{Type: t, ContainerID: e.id, ContainerName: e.name},
		})
	}
}

// batch groups the pending events by pod and attaches each pod's listed
// containers. It runs only when there are events, after r.order has become
// res's order.
func (r *Relister) batch(res runtimeadapter.ListResult) []protocol.PodTransitions {
	// Stable: a container's events keep their table order.
	slices.SortStableFunc(r.pending, func(a, b pendingEvent) int {
		if c := cmp.Compare(a.uid, b.uid); c != 0 {
			return c
		}
		return cmp.Compare(a.ev.ContainerID, b.ev.ContainerID)
	})

	var out []protocol.PodTransitions
	for i := 0; i < len(r.pending); {
		j := i + 1
		for j < len(r.pending) && r.pending[j].uid == r.pending[i].uid {
			j++
		}
		evs := make([]protocol.PodLifecycleEvent, j-i)
		for k := range evs {
			evs[k] = r.pending[i+k].ev
		}
		out = append(out, protocol.PodTransitions{
			UID:        r.pending[i].uid,
			Events:     evs,
			ObservedAt: res.ObservedAt,
			Version:    res.Version,
		})
		i = j
	}
	clear(r.pending) // drop references to IDs and names
	r.pending = r.pending[:0]
	if cap(r.pending) > maxKeptPending {
		// A burst's buffer (every container of a node starting: 56 B an
		// event, ~110-140 B per pod) is not kept for the quiet relists
		// after it.
		r.pending = nil
	}

	// Find each listed container's batch in a map of the batches (its
	// size grows with the changes, not with the pods).
	idx := make(map[types.UID]int, len(out))
	for k := range out {
		idx[out[k].UID] = k
	}
	for i, e := range r.order {
		if e == nil {
			continue
		}
		if k, ok := idx[e.podUID]; ok {
			out[k].Containers = append(out[k].Containers, res.Containers[i])
		}
	}
	return out
}
