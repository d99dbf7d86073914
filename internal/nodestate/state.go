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
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/runtimeadapter"
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
	byName map[string]map[types.UID]*Record
	// waiting holds the Waiting records: the pods to send when what they
	// wait for ends.
	waiting map[types.UID]*Record
	// stopping counts Terminating, Abandoned and Lingering records: a
	// drain is over when none is left.
	stopping int

	// relisted: a listing has been seen. No pod is sent before (an old
	// instance of its name could still run).
	relisted bool
	draining bool
	drainers int // Drain events waiting for a Drained effect

	out []Effect // effects of the step under way
}

// New is the state of node node fed by the named sources.
func New(node string, sources []string) *State {
	return &State{
		node: node, sources: slices.Clone(sources),
		sets: map[string][]*v1.Pod{}, synced: map[string]bool{},
		pods: map[types.UID]*Record{}, byName: map[string]map[types.UID]*Record{},
		waiting: map[types.UID]*Record{},
	}
}

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
	var out []*Record
	for _, r := range s.pods {
		if r.Phase == ph {
			out = append(out, r)
		}
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
	m := s.byName[r.Name]
	if m == nil {
		m = map[types.UID]*Record{}
		s.byName[r.Name] = m
	}
	m[r.UID] = r
}

func (s *State) unindex(r *Record) {
	if m := s.byName[r.Name]; m != nil {
		delete(m, r.UID)
		if len(m) == 0 {
			delete(s.byName, r.Name)
		}
	}
}

// rename changes a record's namespace/name.
func (s *State) rename(r *Record, name string) {
	if r.Name != name {
		s.unindex(r)
		r.Name = name
		s.index(r)
	}
}

func stops(ph Phase) bool { return ph.terminating() || ph == Lingering }

// setPhase moves r to ph, keeping the indexes.
func (s *State) setPhase(r *Record, ph Phase) {
	if stops(r.Phase) {
		s.stopping--
	}
	if r.Phase == Waiting {
		delete(s.waiting, r.UID)
	}
	r.Phase = ph
	if stops(ph) {
		s.stopping++
	}
	if ph == Waiting {
		s.waiting[r.UID] = r
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
	r.Status, r.HasStatus = v1.PodStatus{}, false
	if !r.GoneAt.IsZero() {
		s.setPhase(r, Gone)
		return
	}
	s.setPhase(r, 0)
	s.unindex(r)
	delete(s.pods, r.UID)
}

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
// admitted pod holds is rejected.
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
			s.setPhase(r, Rejected)
			r.Status, r.HasStatus = rejectedStatus(msg), true
			s.emit(Reject{Pod: p, Message: msg}, Publish{Pod: p, Status: r.Status})
			return
		}
		s.setPhase(r, Running)
		s.emit(SendSpec{Pod: p, New: true})
		return
	}
	s.emit(SendSpec{Pod: p})
}

// admitted is the pods sent to the router, when p asks for a host port
// (most pods ask for none: no walk over every pod).
func (s *State) admitted(p *v1.Pod) []*v1.Pod {
	if len(hostPorts(p)) == 0 {
		return nil
	}
	var out []*v1.Pod
	for _, r := range s.pods {
		if r.Phase == Running || r.Phase == Failed {
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
	for uid, r := range s.byName[nsName(p)] {
		if r.Phase.terminating() || (r.Phase == Lingering && uid != p.UID) {
			if found == nil || uid < found.UID {
				found = r
			}
		}
	}
	return found
}

// sendWaiting sends the waiting pods that may run now, in admission order.
func (s *State) sendWaiting() {
	if len(s.waiting) == 0 {
		return
	}
	order := make([]*v1.Pod, 0, len(s.waiting))
	for _, r := range s.waiting {
		order = append(order, r.Pod)
	}
	for _, p := range AdmissionOrder(order) {
		if r := s.pods[p.UID]; r != nil && r.Phase == Waiting {
			s.send(r, p)
		}
	}
}

// report keeps a pod actor's status of a pod desired or terminating, and
// publishes it for a desired one.
func (s *State) report(uid types.UID, st v1.PodStatus) {
	r := s.pods[uid]
	if r == nil || (r.Desired() == nil && !r.Phase.terminating()) {
		return
	}
	r.Status, r.HasStatus = st, true
	if p := r.Desired(); p != nil {
		s.emit(Publish{Pod: p, Status: st})
	}
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
	r.Status.Phase = v1.PodFailed
	r.Status.Reason = "PodActorFailed"
	r.Status.Message = "the pod's actor panicked too often and was stopped; it runs again when its spec changes"
	r.HasStatus = true
	s.emit(PodFailed{Pod: p, Message: r.Status.Message}, Publish{Pod: p, Status: r.Status})
}

// terminated ends a terminating pod: its last status is published, and
// the pods waiting for it are sent.
func (s *State) terminated(uid types.UID, now time.Time) {
	r := s.pods[uid]
	if r == nil || !r.Phase.terminating() {
		return
	}
	r.GoneAt = now // listings older than this still show its containers
	if r.Pod != nil {
		s.emit(Publish{Pod: r.Pod, Status: r.Status, Removed: true})
	}
	if next := r.Next; next != nil {
		r.Pod, r.Next = next, nil
		r.Status, r.HasStatus = v1.PodStatus{}, false
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
	for _, r := range s.pods {
		if r.Phase == Running {
			run = append(run, r.Pod)
		}
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
	if !s.draining || s.drainers == 0 || s.stopping > 0 || !s.relisted {
		return
	}
	s.drainers = 0
	s.emit(Drained{})
}

// sweep finds orphan pods in a listing of the runtime: pods of this node
// (by their containers' labels) that are neither desired nor being
// removed nor just gone. Each is removed as a pod, by a pod actor in the
// removed state (apps within their grace period first, then the sandbox,
// then every container removed), and is Terminating under its
// namespace/name until its Terminated, so that a pod of the same name
// waits for it (invariant 6). That happens only once every source has
// synced (a source not yet read is not "empty"); until then the orphan
// pods linger, and a pod of their name waits for them too. Containers
// without actorlet's labels for this node are never touched.
func (s *State) sweep(cs []runtimeadapter.Container, observedAt, now time.Time) {
	for _, r := range s.pods {
		if !r.GoneAt.IsZero() && observedAt.After(r.GoneAt) {
			r.GoneAt = time.Time{} // this listing is newer than the pod's end: trust it
			if r.Phase == Gone {
				s.release(r)
			}
		}
	}
	orphans := map[types.UID]string{}
	abandoned := map[types.UID][]runtimeadapter.Container{}
	for _, c := range cs {
		meta, err := runtimeadapter.ParseMeta(c.Labels)
		if err != nil || meta.Node != s.node {
			continue
		}
		uid := types.UID(meta.PodUID)
		r := s.pods[uid]
		if r != nil && r.Phase == Abandoned {
			abandoned[uid] = append(abandoned[uid], c)
		}
		if r != nil && r.Phase != Lingering {
			continue // desired, terminating or just gone
		}
		orphans[uid] = meta.PodNamespace + "/" + meta.PodName
	}
	released := false
	for _, r := range s.pods {
		if _, ok := orphans[r.UID]; r.Phase == Lingering && !ok {
			s.release(r) // gone meanwhile (removed from outside)
			released = true
		}
	}
	removeNow := s.allSynced() || s.draining
	uids := make([]types.UID, 0, len(orphans))
	for uid := range orphans {
		uids = append(uids, uid)
	}
	slices.Sort(uids)
	for _, uid := range uids {
		name := orphans[uid]
		r := s.pods[uid]
		if r == nil {
			r = s.put(uid, name, Lingering)
			if !removeNow {
				s.emit(Lingers{UID: uid, Name: name})
			}
		}
		s.rename(r, name)
	}
	if removeNow {
		for _, r := range s.inPhase(Lingering) {
			s.setPhase(r, Terminating)
			s.emit(SendRemoval{UID: r.UID, Name: r.Name, Orphan: true})
		}
	}
	s.sweepAbandoned(abandoned, observedAt, now)
	if released {
		s.sendWaiting()
	}
	s.checkDrained()
}

// sweepAbandoned removes the containers of the pods whose pod actor failed
// while removing them; such a pod is terminated once a listing taken after
// the node last acted on it shows none of its containers.
func (s *State) sweepAbandoned(byUID map[types.UID][]runtimeadapter.Container, observedAt, now time.Time) {
	for _, r := range s.inPhase(Abandoned) {
		if r.Removing {
			continue
		}
		cs := byUID[r.UID]
		if len(cs) == 0 {
			if observedAt.After(r.AbandonedAt) {
				s.emit(AbandonedGone{UID: r.UID, Name: r.Name})
				s.terminated(r.UID, now)
			}
			continue
		}
		r.Removing = true
		s.emit(RemoveContainers{UID: r.UID, Name: r.Name, Containers: cs})
	}
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
