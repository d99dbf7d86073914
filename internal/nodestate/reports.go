package nodestate

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// report keeps a pod actor's status of a pod desired or terminating, and
// publishes it for a desired one.
func (s *State) report(uid types.UID, st *v1.PodStatus) {
	r := s.pods[uid]
	if st == nil || r == nil || (r.Desired() == nil && !r.Phase.terminating()) {
		return
	}
	r.Status = st
	if p := r.Desired(); p != nil {
		s.emit(Publish{Pod: p, Status: *st})
	}
}

// statusOf is r's status (empty when none).
func statusOf(r *Record) v1.PodStatus {
	if r.Status == nil {
		return v1.PodStatus{}
	}
	return *r.Status
}

// actorFailed handles a pod actor stopped after too many panics. One that
// was removing its pod may have left containers running: the node removes
// them itself (see sweepAbandoned), and a pod of the same name still waits
// for them. A desired pod is failed until its spec changes: a later
// transition or a router restart does not respawn it.
func (s *State) actorFailed(uid types.UID, now time.Time) {
	r := s.pods[uid]
	if r == nil {
		return
	}
	if r.Phase.terminating() {
		s.setPhase(r, Abandoned)
		r.AbandonedAt = now
		s.emit(Abandon{UID: uid, Name: r.Name})
		return
	}
	p := r.Desired()
	if p == nil {
		return
	}
	if r.Phase == Running {
		s.setPhase(r, Failed)
	}
	st := statusOf(r) // a new status: the one held is the pod actor's
	st.Phase = v1.PodFailed
	st.Reason = "PodActorFailed"
	st.Message = "the pod's actor panicked too often and was stopped; it runs again when its spec changes"
	r.Status = &st
	s.emit(PodFailed{Pod: p, Message: st.Message}, Publish{Pod: p, Status: st})
}

// terminated ends a terminating pod: its last status is published, and
// the pods waiting for it are sent.
func (s *State) terminated(uid types.UID, now time.Time) {
	r := s.pods[uid]
	if r == nil || !r.Phase.terminating() {
		return
	}
	s.markGone(r, now) // listings older than this still show its containers
	if r.Pod != nil {
		s.emit(Publish{Pod: r.Pod, Status: statusOf(r), Removed: true})
	}
	if next := r.Next; next != nil {
		r.Pod, r.Next = next, nil
		r.Status = nil
		s.rename(r, nsName(next))
		s.setPhase(r, Waiting)
	} else {
		s.release(r)
	}
	s.checkDrained()
	s.sendWaiting()
}

// routerRestarted tells a restarted router again what runs and what is
// being removed (its pod actors are gone).
func (s *State) routerRestarted() {
	var run []*v1.Pod
	for _, r := range s.byPhase[Running] {
		run = append(run, r.Pod)
	}
	for _, p := range AdmissionOrder(run) {
		s.emit(SendSpec{Pod: p})
	}
	for _, r := range s.inPhase(Terminating) { // the node removes abandoned pods itself
		s.emit(SendRemoval{UID: r.UID, Name: r.Name, Orphan: r.Pod == nil, Again: true})
	}
}

// checkDrained reports Drained after a Drain once no pod is left running
// or stopping, orphan pods included, and a listing has shown it.
func (s *State) checkDrained() {
	if !s.draining || s.drainers == 0 || s.stopping() > 0 || !s.relisted {
		return
	}
	s.drainers = 0
	s.emit(Drained{})
}

// PodName is the namespace/name of pod uid while it is desired or
// terminating, else "".
func (s *State) PodName(uid types.UID) string {
	r := s.pods[uid]
	switch {
	case r == nil:
		return ""
	case r.Desired() != nil:
		return nsName(r.Desired())
	case r.Phase.terminating():
		return r.Name
	}
	return ""
}
