package nodestate

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// Event is something the node heard; Step takes one.
type Event interface{ event() }

// SourceSet is a source's new set of pods. Synced marks the source as
// synced (a full set read from it); an edit of the host source's set by one
// ApplyPod or DeletePod does not.
type SourceSet struct {
	Source string
	Pods   []*v1.Pod
	Synced bool
}

// Drain: desire no pod any more, orphans included (StopAllPods). Reply
// asks for a Drained effect once nothing is left running or stopping.
type Drain struct{ Reply bool }

// Listing is a successful listing of the runtime, observed at ObservedAt.
type Listing struct {
	Containers []runtimeadapter.Container
	ObservedAt time.Time
}

// StatusReport is a pod actor's status of its pod.
type StatusReport struct {
	UID    types.UID
	Status v1.PodStatus
}

// ActorFailed: a pod actor panicked too often and was stopped.
type ActorFailed struct{ UID types.UID }

// Terminated: a pod actor removed its pod and stopped.
type Terminated struct{ UID types.UID }

// RemovalDone: the node's own removal of an abandoned pod's containers
// (a RemoveContainers effect) ended at At, having worked or not.
type RemovalDone struct {
	UID types.UID
	At  time.Time
}

// RouterRestarted: the router restarted, its pod actors are gone.
type RouterRestarted struct{}

func (SourceSet) event()       {}
func (Drain) event()           {}
func (Listing) event()         {}
func (StatusReport) event()    {}
func (ActorFailed) event()     {}
func (Terminated) event()      {}
func (RemovalDone) event()     {}
func (RouterRestarted) event() {}

// Effect is something the shell must do; Step returns them in order.
type Effect interface{ String() string }

// SendSpec: tell the router to run Pod. New: the pod was just admitted.
type SendSpec struct {
	Pod *v1.Pod
	New bool
}

// SendRemoval: tell the router to remove pod UID, named Name
// (namespace/name). Orphan: a pod found in the runtime, not one that
// stopped being desired. Again: told again to a restarted router.
type SendRemoval struct {
	UID    types.UID
	Name   string
	Orphan bool
	Again  bool
}

// RemoveContainers: remove an abandoned pod's containers, in the pod's
// order, off the mailbox, then step a RemovalDone.
type RemoveContainers struct {
	UID        types.UID
	Name       string
	Containers []runtimeadapter.Container
}

// Publish: tell subscribers a pod's status; Removed for its last one.
type Publish struct {
	Pod     *v1.Pod
	Status  v1.PodStatus
	Removed bool
}

// Reject: Pod was refused at admission (reason NodePorts).
type Reject struct {
	Pod     *v1.Pod
	Message string
}

// PodFailed: the pod actor of desired Pod gave up (reason PodActorFailed).
type PodFailed struct {
	Pod     *v1.Pod
	Message string
}

// Held: Pod waits for the old pod OldUID of its name (or its own UID) to
// stop; reported once per wait.
type Held struct {
	Pod     *v1.Pod
	OldUID  types.UID
	OldName string
}

// Duplicate: two sources define pod Name; the set of IgnoredSource loses.
type Duplicate struct {
	Name          string
	IgnoredSource string
}

// Lingers: an orphan pod found before every source has synced is left
// alone until they have (reported once).
type Lingers struct {
	UID  types.UID
	Name string
}

// Abandon: the pod actor of a terminating pod failed; the node removes
// its containers itself from the next listing on.
type Abandon struct {
	UID  types.UID
	Name string
}

// AbandonedGone: a listing shows an abandoned pod's containers gone.
type AbandonedGone struct {
	UID  types.UID
	Name string
}

// Drained: nothing is left running or stopping after a Drain.
type Drained struct{}

func (e SendSpec) String() string {
	if e.New {
		return fmt.Sprintf("add %s(%s)", nsName(e.Pod), e.Pod.UID)
	}
	return fmt.Sprintf("spec %s(%s)", nsName(e.Pod), e.Pod.UID)
}

func (e SendRemoval) String() string {
	what := "remove"
	if e.Orphan {
		what += " orphan"
	}
	return fmt.Sprintf("%s %s(%s)", what, e.Name, e.UID)
}

func (e RemoveContainers) String() string {
	return fmt.Sprintf("remove containers of %s(%s): %d", e.Name, e.UID, len(e.Containers))
}

func (e Publish) String() string {
	name := "?"
	if e.Pod != nil {
		name = nsName(e.Pod) + "(" + string(e.Pod.UID) + ")"
	}
	s := fmt.Sprintf("publish %s %s", name, e.Status.Phase)
	if e.Status.Reason != "" {
		s += "/" + e.Status.Reason
	}
	if e.Removed {
		s += " removed"
	}
	return s
}

func (e Reject) String() string { return fmt.Sprintf("reject %s: %s", nsName(e.Pod), e.Message) }
func (e PodFailed) String() string {
	return fmt.Sprintf("failed %s(%s)", nsName(e.Pod), e.Pod.UID)
}
func (e Held) String() string {
	return fmt.Sprintf("hold %s(%s) for %s(%s)", nsName(e.Pod), e.Pod.UID, e.OldName, e.OldUID)
}
func (e Duplicate) String() string { return fmt.Sprintf("duplicate %s in %s", e.Name, e.IgnoredSource) }
func (e Lingers) String() string   { return fmt.Sprintf("linger %s(%s)", e.Name, e.UID) }
func (e Abandon) String() string   { return fmt.Sprintf("abandon %s(%s)", e.Name, e.UID) }
func (e AbandonedGone) String() string {
	return fmt.Sprintf("abandoned gone %s(%s)", e.Name, e.UID)
}
func (Drained) String() string { return "drained" }
