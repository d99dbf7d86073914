// Package nodestate is the pure core of the node actor: one record per pod
// UID with an explicit lifecycle (see Phase), the sources' sets merged into
// the desired pods, admission (host ports, in a fixed order), orphan pods
// found in listings of the runtime, and the wait of a replacement for the
// old instance of its namespace/name (invariant 6).
//
// It is driven raft RawNode style: Step takes an event and the time and
// returns the effects for the node actor to carry out (send a spec or a
// removal to the router, remove an abandoned pod's containers, publish a
// status, report...). It does no I/O, reads no clock, takes no lock and
// starts no goroutine.
package nodestate

import (
	"fmt"
	"slices"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// State is the node's view of its pods.
type State struct {
	node    string
	sources []string // every configured source; all must sync before orphans go

	sets   map[string][]*v1.Pod // last good set per source
	synced map[string]bool

	pods map[types.UID]*Record
	// byName indexes every record by namespace/name: the pods a
	// replacement may have to wait for (invariant 6).
	// Most names have one record: the map holds the first, each record
	// the next (Record.sameName), in the order indexed.
	byName map[string]*Record
	// byPhase indexes every record by its phase: the Waiting pods to send
	// when what they wait for ends, the Running ones a host port may clash
	// with, the stopping ones a drain waits for...
	byPhase [Gone + 1]map[types.UID]*Record
	// marked holds the records with a gone mark (GoneAt), which each
	// listing checks.
	marked map[types.UID]*Record

	// relisted: a listing has been seen. No pod is sent before (an old
	// instance of its name could still run).
	relisted bool
	draining bool
	drainers int // Drain events waiting for a Drained effect

	out []Effect // effects of the step under way

	// allocatable is what the pods' requests are admitted against (none:
	// no check).
	allocatable v1.ResourceList
}

// New is the state of node node fed by the named sources.
func New(node string, sources []string) *State {
	return &State{
		node: node, sources: slices.Clone(sources),
		sets: map[string][]*v1.Pod{}, synced: map[string]bool{},
		pods: map[types.UID]*Record{}, byName: map[string]*Record{},
		marked: map[types.UID]*Record{},
	}
}

// SetAllocatable sets the node's allocatable resources, which the
// requests of pods admitted from now on must fit in (cpu and memory; nil:
// no check).
func (s *State) SetAllocatable(alloc v1.ResourceList) { s.allocatable = alloc }

// Step applies one event at time now and returns what to do, in order.
func (s *State) Step(now time.Time, e Event) []Effect {
	s.out = nil
	switch e := e.(type) {
	case SourceSet:
		s.sets[e.Source] = e.Pods
		if e.Synced {
			s.synced[e.Source] = true
		}
		s.reconcile()
	case Drain:
		s.draining = true
		if e.Reply {
			s.drainers++
		}
		s.reconcile()
		s.checkDrained()
	case Listing:
		first := !s.relisted
		s.relisted = true
		s.sweep(e.Containers, e.ObservedAt, now)
		if first {
			s.sendWaiting() // what runs is known now
		}
	case StatusReport:
		s.report(e.UID, e.Status)
	case ActorFailed:
		s.actorFailed(e.UID, now)
	case Terminated:
		s.terminated(e.UID, now)
	case RemovalDone:
		if r := s.pods[e.UID]; r != nil {
			r.Removing = false
			if r.Phase == Abandoned {
				r.AbandonedAt = e.At // only a listing taken after this shows what is left
			}
		}
	case RouterRestarted:
		s.routerRestarted()
	default:
		panic(fmt.Sprintf("nodestate: unknown event %T", e))
	}
	out := s.out
	s.out = nil
	return out
}

func (s *State) emit(e ...Effect) { s.out = append(s.out, e...) }

// Record is the record of uid, or nil. The shell only reads it.
func (s *State) Record(uid types.UID) *Record { return s.pods[uid] }

// Records is every record, by UID.
func (s *State) Records() []*Record {
	out := make([]*Record, 0, len(s.pods))
	for _, r := range s.pods {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UID < out[j].UID })
	return out
}

// inPhase is the records in phase ph, by UID.
func (s *State) inPhase(ph Phase) []*Record {
	out := make([]*Record, 0, len(s.byPhase[ph]))
	for _, r := range s.byPhase[ph] {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UID < out[j].UID })
	return out
}

// Set is source's last set.
func (s *State) Set(source string) []*v1.Pod { return s.sets[source] }

// Synced reports whether source has synced.
func (s *State) Synced(source string) bool { return s.synced[source] }

// Relisted reports whether a listing of the runtime has been seen.
func (s *State) Relisted() bool { return s.relisted }

func (s *State) allSynced() bool {
	for _, src := range s.sources {
		if !s.synced[src] {
			return false
		}
	}
	return true
}

// put adds a record in phase ph.
func (s *State) put(uid types.UID, name string, ph Phase) *Record {
	r := &Record{UID: uid, Name: name}
	s.pods[uid] = r
	s.index(r)
	s.setPhase(r, ph)
	return r
}

func (s *State) index(r *Record) {
	r.sameName = nil
	first := s.byName[r.Name]
	if first == nil {
		s.byName[r.Name] = r
		return
	}
	last := first
	for last.sameName != nil {
		last = last.sameName
	}
	last.sameName = r
}

func (s *State) unindex(r *Record) {
	first := s.byName[r.Name]
	switch {
	case first == r:
		if r.sameName == nil {
			delete(s.byName, r.Name)
		} else {
			s.byName[r.Name] = r.sameName
		}
	case first != nil:
		for x := first; x.sameName != nil; x = x.sameName {
			if x.sameName == r {
				x.sameName = r.sameName
				break
			}
		}
	}
	r.sameName = nil
}

// rename changes a record's namespace/name.
func (s *State) rename(r *Record, name string) {
	if r.Name != name {
		s.unindex(r)
		r.Name = name
		s.index(r)
	}
}

// stopping is how many pods are being removed or linger: a drain is
// over when none is left.
func (s *State) stopping() int {
	return len(s.byPhase[Terminating]) + len(s.byPhase[Abandoned]) + len(s.byPhase[Lingering])
}

// markGone sets or (with a zero at) clears r's gone mark.
func (s *State) markGone(r *Record, at time.Time) {
	r.GoneAt = at
	if at.IsZero() {
		delete(s.marked, r.UID)
	} else {
		s.marked[r.UID] = r
	}
}

// setPhase moves r to ph, keeping the indexes.
func (s *State) setPhase(r *Record, ph Phase) {
	if r.Phase != 0 {
		delete(s.byPhase[r.Phase], r.UID)
	}
	r.Phase = ph
	if ph != 0 {
		if s.byPhase[ph] == nil {
			s.byPhase[ph] = map[types.UID]*Record{}
		}
		s.byPhase[ph][r.UID] = r
	}
	if ph != Abandoned {
		r.AbandonedAt, r.Removing = time.Time{}, false
	}
}

// release ends the phase of a record that is no longer desired, running
// nor stopping: it stays Gone while it carries a gone mark, else it is
// dropped.
func (s *State) release(r *Record) {
	r.Pod, r.Next, r.Held = nil, nil, false
	r.Status = nil
	if !r.GoneAt.IsZero() {
		s.setPhase(r, Gone)
		return
	}
	s.setPhase(r, 0)
	s.unindex(r)
	delete(s.marked, r.UID)
	delete(s.pods, r.UID)
}
