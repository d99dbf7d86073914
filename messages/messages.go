// Package messages holds the messages a host service exchanges with an
// embedded node (package node): the requests it sends (ApplyPod,
// SetHostPods, DeletePod, GetPodStatuses, GetEvents, GetHealth,
// StopAllPods, Subscribe, Unsubscribe), their answers, and the
// PodStatusChanged a subscriber receives. Package node has a typed helper
// for each request. The messages the actor tree sends itself (sources →
// node → router → pod actors, relist → router, pod actors → node) are
// internal (internal/protocol). Messages are values or pointers to data
// that the sender never mutates after sending.
package messages

import (
	"errors"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ErrPodNotFound: no such pod.
var ErrPodNotFound = errors.New("pod not found")

// GetPodStatuses asks the node for every known pod's status; the answer is
// a *PodStatuses sent to the requester.
type GetPodStatuses struct{}

// PodStatuses answers GetPodStatuses.
type PodStatuses struct {
	Pods []*v1.Pod // spec and last reported status, copies
}

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

// GetHealth asks the node for its health checks; the answer is *NodeHealth.
type GetHealth struct{}

// HealthCheck is one named check. Pod is set for per-pod checks.
type HealthCheck struct {
	Name    string
	OK      bool
	Message string
	Pod     string
}

// NodeHealth answers GetHealth.
type NodeHealth struct {
	Checks []HealthCheck
}

// ApplyPod asks the node to run a pod fed by the host service that embeds
// actorlet (the "host" source), or to update it (same namespace/name). The
// pod is defaulted and validated as a manifest would be; its UID, when
// empty, is derived from the node name, namespace/name and content. The
// node answers *ApplyPodResult.
type ApplyPod struct {
	Pod *v1.Pod
}

// ApplyPodResult answers ApplyPod: the UID the pod runs under, warnings
// about fields actorlet ignores, or the validation error (naming fields).
type ApplyPodResult struct {
	UID      types.UID
	Warnings []string
	Err      error
}

// SetHostPods replaces the whole set of host-fed pods and marks the host
// source synced: with the Options that declare a host source, orphans are
// not killed before the first SetHostPods. Answered by *ApplyPodResult per
// pod in a *SetHostPodsResult.
type SetHostPods struct {
	Pods []*v1.Pod
}

// SetHostPodsResult answers SetHostPods; Results[i] is for Pods[i]. Pods
// that fail validation are left out of the set.
type SetHostPodsResult struct {
	Results []ApplyPodResult
}

// DeletePod removes a host-fed pod by namespace and name. The node answers
// *DeletePodResult; Err wraps ErrPodNotFound when no host-fed pod has that
// name.
type DeletePod struct {
	Namespace, Name string
}

// DeletePodResult answers DeletePod.
type DeletePodResult struct {
	Err error
}

// Subscribe adds PID to the node's status subscribers: it receives a
// *PodStatusChanged for every status change of every pod, and for every
// pod removal, until Unsubscribe or until it stops.
type Subscribe struct {
	PID *actor.PID
}

// Unsubscribe removes a subscriber.
type Unsubscribe struct {
	PID *actor.PID
}

// PodStatusChanged tells a subscriber a pod's new status. Pod is a copy
// (spec and status); Removed is set once the removed pod is fully stopped.
type PodStatusChanged struct {
	Pod     *v1.Pod
	Removed bool
}

// StopAllPods asks the node to stop and remove every pod it runs and to
// ignore its sources from then on (actorlet run --stop-pods-on-exit). The
// node answers *AllPodsStopped once every pod's containers are gone.
type StopAllPods struct{}

// AllPodsStopped answers StopAllPods.
type AllPodsStopped struct{}
