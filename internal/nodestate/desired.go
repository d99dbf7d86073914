package nodestate

import (
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
)

// reconcile merges the sources' sets (the first source by name wins a
// namespace/name) and moves every record to match: pods no longer desired
// are removed, new and changed ones sent (see send).
func (s *State) reconcile() {
	names := make([]string, 0, len(s.sets))
	for src := range s.sets {
		names = append(names, src)
	}
	sort.Strings(names)
	if s.draining {
		names = nil // stopping every pod: no source counts any more
	}
	want := map[types.UID]*v1.Pod{}
	owner := map[string]types.UID{} // namespace/name → UID
	for _, src := range names {
		for _, p := range s.sets[src] {
			if prev, ok := owner[nsName(p)]; ok && prev != p.UID {
				s.emit(Duplicate{Name: nsName(p), IgnoredSource: src})
				continue
			}
			owner[nsName(p)] = p.UID
			want[p.UID] = p
		}
	}
	for _, r := range s.Records() {
		if want[r.UID] != nil || r.Desired() == nil {
			continue
		}
		switch r.Phase {
		case Running, Failed:
			s.emit(SendRemoval{UID: r.UID, Name: r.Name})
			r.Held = false
			s.setPhase(r, Terminating)
		case Terminating, Abandoned:
			r.Next, r.Held = nil, false
		default: // Waiting, Rejected: never ran
			s.release(r)
		}
	}
	order := make([]*v1.Pod, 0, len(want))
	for _, p := range want {
		order = append(order, p)
	}
	for _, p := range AdmissionOrder(order) {
		s.want(p)
	}
}

// want records p as desired and sends it when it is new or changed.
func (s *State) want(p *v1.Pod) {
	r := s.pods[p.UID]
	switch {
	case r == nil:
		r = s.put(p.UID, nsName(p), Waiting)
	case r.Phase == Lingering || r.Phase == Gone: // desired again: not an orphan
		s.rename(r, nsName(p))
		s.setPhase(r, Waiting)
	case r.Phase.terminating():
		r.Next = p // waits for its own old instance (see blocker)
		s.send(r, p)
		return
	case r.Phase == Running || r.Phase == Failed:
		if equality.Semantic.DeepEqual(r.Pod.Spec, p.Spec) {
			r.Pod = p
			return
		}
		s.setPhase(r, Running) // a changed spec gets a new pod actor
	}
	r.Pod = p
	s.rename(r, nsName(p))
	s.send(r, p)
}

// send tells the router to run p (r's desired pod), unless p must wait:
// before the node has seen a listing of the runtime, or while an older pod
// of the same namespace/name (or p's own UID, removed and desired again)
// is terminating or lingering; it is sent when that changes (sendWaiting).
// A pod not sent yet is admitted first: one that asks for a host port an
// admitted pod holds is rejected (NodePorts), and so is one whose requests
// do not fit in the node's allocatable resources beside those of the
// active pods (OutOfcpu, OutOfmemory).
func (s *State) send(r *Record, p *v1.Pod) {
	if !s.relisted {
		return
	}
	if old := s.blocker(p); old != nil {
		if !r.Held {
			r.Held = true
			s.emit(Held{Pod: p, OldUID: old.UID, OldName: old.Name})
		}
		return
	}
	r.Held = false
	if r.Phase == Rejected {
		return
	}
	if r.Phase == Waiting {
		if msg, clash := portConflict(p, s.admitted(p)); clash {
			s.reject(r, p, "NodePorts", "Node didn't have free ports for the requested pod ports: "+msg)
			return
		}
		if short, ok := s.admitResources(r, p); !ok {
			s.reject(r, p, short.Reason(), short.String())
			return
		}
		s.setPhase(r, Running)
		s.emit(SendSpec{Pod: p, New: true})
		return
	}
	s.emit(SendSpec{Pod: p})
}

// reject refuses p (r's desired pod) at admission: Failed with reason,
// until its spec changes.
func (s *State) reject(r *Record, p *v1.Pod, reason, msg string) {
	s.setPhase(r, Rejected)
	st := rejectedStatus(reason, msg)
	r.Status = &st
	s.emit(Reject{Pod: p, Reason: reason, Message: msg}, Publish{Pod: p, Status: st})
}

// admitted is the pods sent to the router, when p asks for a host port
// (most pods ask for none: no walk over every pod).
func (s *State) admitted(p *v1.Pod) []*v1.Pod {
	if len(hostPorts(p)) == 0 {
		return nil
	}
	var out []*v1.Pod
	for _, ph := range []Phase{Running, Failed} {
		for _, r := range s.byPhase[ph] {
			out = append(out, r.Pod)
		}
	}
	return AdmissionOrder(out)
}

// blocker is a pod p must wait for: one of its namespace/name (or its own
// UID) that is terminating, or an orphan of its name that lingers.
func (s *State) blocker(p *v1.Pod) *Record {
	if r := s.pods[p.UID]; r != nil && r.Phase.terminating() {
		return r
	}
	var found *Record
	for r := s.byName[nsName(p)]; r != nil; r = r.sameName {
		if r.Phase.terminating() || (r.Phase == Lingering && r.UID != p.UID) {
			if found == nil || r.UID < found.UID {
				found = r
			}
		}
	}
	return found
}

// sendWaiting sends the waiting pods that may run now, in admission order.
func (s *State) sendWaiting() {
	if len(s.byPhase[Waiting]) == 0 {
		return
	}
	order := make([]*v1.Pod, 0, len(s.byPhase[Waiting]))
	for _, r := range s.byPhase[Waiting] {
		order = append(order, r.Pod)
	}
	for _, p := range AdmissionOrder(order) {
		if r := s.pods[p.UID]; r != nil && r.Phase == Waiting {
			s.send(r, p)
		}
	}
}
