package nodestate

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/runtimeadapter"
)

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

// Reject: Pod was refused at admission (reason NodePorts, OutOfcpu or
// OutOfmemory); Message says why (the kubelet's event message; the
// status has it after "Pod was rejected: ").
type Reject struct {
	Pod     *v1.Pod
	Reason  string
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

func (e Reject) String() string {
	return fmt.Sprintf("reject %s (%s): %s", nsName(e.Pod), e.Reason, e.Message)
}
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
