package nodestate

import (
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
	Status *v1.PodStatus // the pod actor's: never changed once reported
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
