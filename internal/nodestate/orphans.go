package nodestate

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/runtimeadapter"
)

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
	for _, r := range s.marked {
		if observedAt.After(r.GoneAt) {
			s.markGone(r, time.Time{}) // this listing is newer than the pod's end: trust it
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
	for _, r := range s.byPhase[Lingering] {
		if _, ok := orphans[r.UID]; !ok {
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
