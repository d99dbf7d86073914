// Package messages holds every message that crosses an actor boundary in
// actorlet's tree (sources → node → router → pod actors, relist → router,
// pod actors → node). Messages are values or pointers to data that the
// sender never mutates after sending.
package messages

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// DesiredPods is the complete set of pods one source wants, sent each time
// it changes (and at least once, when the source first syncs). A source
// that fails to read keeps its last set and sends nothing.
type DesiredPods struct {
	Source string
	Pods   []*v1.Pod
}

// SourceError reports that a source could not be read (it keeps its last set).
type SourceError struct {
	Source string
	Err    error
}

// PodSpec tells the router (and then the pod actor) to run this pod.
// The pod's UID is its identity; a changed spec under the same UID updates
// containers in place (kill on hash change).
type PodSpec struct {
	Pod *v1.Pod
}

// PodRemoved tells the router (and then the pod actor) the pod is no longer
// desired: stop all its containers and remove them, then report Terminated.
type PodRemoved struct {
	UID types.UID
}

// PodEventType is a PLEG event type, as the kubelet's generic PLEG names them.
type PodEventType string

const (
	ContainerStarted PodEventType = "ContainerStarted"
	ContainerDied    PodEventType = "ContainerDied"
	ContainerRemoved PodEventType = "ContainerRemoved"
	// ContainerChanged: the container went to the unknown state.
	ContainerChanged PodEventType = "ContainerChanged"
)

// PodLifecycleEvent is one container transition.
type PodLifecycleEvent struct {
	Type        PodEventType
	ContainerID string
	// ContainerName is the container's name in the pod spec (label).
	ContainerName string
}

// PodTransitions is the PLEG's batch for one pod UID from one relist: its
// events and the pod's complete set of containers as listed at ObservedAt.
type PodTransitions struct {
	UID        types.UID
	Events     []PodLifecycleEvent
	Containers []runtimeadapter.Container
	ObservedAt time.Time
}

// RelistSnapshot is every managed container of this node from one successful
// relist, handed to the node actor so it can find orphans.
type RelistSnapshot struct {
	Containers []runtimeadapter.Container
	ObservedAt time.Time
}

// RelistFailed reports a failed relist (no transitions were produced).
type RelistFailed struct {
	Err error
	At  time.Time
}

// PodStatusReport is a pod actor's view of its pod after a change.
type PodStatusReport struct {
	UID       types.UID
	Namespace string
	Name      string
	Status    v1.PodStatus
}

// Terminated is sent by a pod actor when every container of its removed pod
// is gone; the router forgets its PID and tells the node.
type Terminated struct {
	UID types.UID
}

// GetPodStatuses asks the node for every known pod's status; the answer is
// a *PodStatuses sent to the requester.
type GetPodStatuses struct{}

// PodStatuses answers GetPodStatuses.
type PodStatuses struct {
	Pods []*v1.Pod // spec and last reported status, copies
}

// SpecRequest is sent by a pod actor to its parent (the router) when it
// starts, including after a supervisor restart, so it rebuilds its spec from
// the router and its containers from the runtime rather than from memory.
// The router answers with the last PodSpec or PodRemoved for the UID.
type SpecRequest struct {
	UID types.UID
}

// PodActorFailed is sent by the router to the node when a pod actor was
// stopped by its supervisor after too many restarts (panics). The pod is
// reported Failed; the node and every other pod go on.
type PodActorFailed struct {
	UID types.UID
}

// RouterStarted is sent by the router to the node each time it starts. A
// router restarted by its supervisor has lost its pod actors, so the node
// sends it every pod again (the pod actors rebuild from the runtime).
type RouterStarted struct{}

// EventType is Kubernetes' event type: Normal or Warning.
type EventType string

const (
	EventNormal  EventType = "Normal"
	EventWarning EventType = "Warning"
)

// Event is something that happened to a pod, with a Kubernetes reason
// (Pulling, Pulled, Created, Started, Killing, BackOff, Unhealthy, Failed,
// FailedSync, ...). Pod actors send them to the node, which keeps a bounded
// list of recent ones, newest last.
type Event struct {
	Time      time.Time
	Type      EventType
	Reason    string
	Namespace string
	Pod       string
	UID       types.UID
	// Container is the container's spec name, empty for pod-level events.
	Container string
	Message   string
}

// GetEvents asks the node for its recent events; the answer is *Events.
type GetEvents struct{}

// Events answers GetEvents, oldest first.
type Events struct {
	Items []Event
}
