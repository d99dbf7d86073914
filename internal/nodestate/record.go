package nodestate

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Phase is where a pod is in the node's lifecycle. A pod's record has
// exactly one phase; the transitions are:
//
//	(none), Lingering, Gone  ─desired──────────────────────────▶ Waiting
//	Waiting      ─sent (a listing seen, nothing of its name stopping)─▶ Running
//	Waiting      ─a host port an admitted pod holds──────────────▶ Rejected
//	Running      ─its pod actor gave up──────────────────────────▶ Failed
//	Failed       ─spec changed───────────────────────────────────▶ Running
//	Running, Failed ─not desired─────────────────────────────────▶ Terminating
//	(none)       ─orphan in a listing, every source synced───────▶ Terminating
//	(none)       ─orphan in a listing, a source not synced───────▶ Lingering
//	Lingering    ─every source synced (or a drain), next listing─▶ Terminating
//	Terminating  ─its pod actor gave up──────────────────────────▶ Abandoned
//	Terminating  ─Terminated─────────────────────────────────────▶ Gone
//	Abandoned    ─a listing after the node's removal shows none──▶ Gone
//	Gone         ─a listing observed after its end───────────────▶ (none)
//	Waiting, Rejected ─not desired───────────────────────────────▶ (none)
//	Lingering    ─its containers vanished────────────────────────▶ (none)
//
// A record that would leave no trace goes to Gone instead while it carries
// a gone mark. A Terminating or Abandoned pod desired again under its own
// UID keeps its phase and holds the new spec in Next: it turns Waiting,
// not Gone, when it ends.
type Phase int

const (
	// Waiting: desired, not sent to the router yet: no listing of the
	// runtime has been seen (an older instance of its name may run), or
	// a pod of its namespace/name, or its own UID, is still terminating or
	// lingering (invariant 6).
	Waiting Phase = iota + 1
	// Rejected: desired, refused at admission (a host port held by a
	// running pod); it never runs while it stays desired.
	Rejected
	// Running: desired and sent to the router: its pod actor runs it.
	Running
	// Failed: desired and sent, but its pod actor panicked too often and
	// was stopped; it is sent again when its spec changes.
	Failed
	// Lingering: an orphan (a pod of this node found in the runtime that
	// is not desired) seen before every source has synced: it is left
	// alone, and a pod of its name waits for it.
	Lingering
	// Terminating: a removal was sent to the router (the pod stopped being
	// desired, or is an orphan), until its pod actor says Terminated. A pod
	// of its name waits for it.
	Terminating
	// Abandoned: terminating, but its pod actor failed: the node removes
	// its containers itself, in the pod's order, and it stays here until a
	// listing taken after the node last acted on it shows none.
	Abandoned
	// Gone: terminated; listings observed before GoneAt may still show its
	// containers, so they do not make it an orphan again.
	Gone
)

var phaseNames = [...]string{"", "Waiting", "Rejected", "Running", "Failed", "Lingering", "Terminating", "Abandoned", "Gone"}

func (p Phase) String() string {
	if p > 0 && int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return "Phase(?)"
}

// terminating reports whether p is one of the two phases of a pod whose
// removal is under way.
func (p Phase) terminating() bool { return p == Terminating || p == Abandoned }

// desired reports whether a pod in phase p is (itself) desired.
func (p Phase) desired() bool { return p == Waiting || p == Rejected || p == Running || p == Failed }

// Record is the node's whole view of one pod UID.
type Record struct {
	UID   types.UID
	Name  string // namespace/name
	Phase Phase
	// Pod is the desired pod (Waiting, Rejected, Running, Failed) or the
	// pod being removed (Terminating, Abandoned; nil for an orphan, which
	// the node knows only from its containers' labels).
	Pod *v1.Pod
	// Next is the pod desired again under the UID of a Terminating or
	// Abandoned pod: it waits for the old instance to be gone.
	Next *v1.Pod
	// Status is the pod's last reported status (or its rejection or
	// failure); nil: none. It is the pod actor's own (the report's
	// pointer: one status per pod on the node, not a copy for the node),
	// so it is never changed in place: a change is a new one.
	Status *v1.PodStatus
	// Held: the wait of this Waiting pod (or of Next) was reported.
	Held bool
	// Removing is set while the node's removal of its containers runs
	// (beside Held: one word for both).
	Removing bool
	// AbandonedAt (Abandoned) is when the node last acted on the pod.
	AbandonedAt time.Time
	// GoneAt is when the pod terminated, until a listing observed after
	// it (it may outlive the Gone phase when the UID is desired again).
	GoneAt time.Time
	// requests are the pod's effective cpu and memory requests, kept when
	// it is admitted: what it uses of the node's allocatable resources
	// while it is active.
	requests requests
	// sameName is the next record of the same Name (State.byName's
	// list: a name has one record but while a replacement waits).
	sameName *Record
}

// Desired is the pod wanted under this UID now, or nil.
func (r *Record) Desired() *v1.Pod {
	switch {
	case r.Phase.desired():
		return r.Pod
	case r.Phase.terminating():
		return r.Next
	}
	return nil
}

func nsName(p *v1.Pod) string { return p.Namespace + "/" + p.Name }
