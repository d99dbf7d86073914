// Package protocol holds the messages actorlet's actor tree sends itself
// (sources → node → router → pod actors, relist → router, pod actors →
// node). They are no part of the embedding API: a host service talks to a
// node with package messages. Messages are values or pointers to data
// that the sender never mutates after sending.
package protocol

import (
	"github.com/actorlet/actorlet/internal/podsync"

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
	// ConfigMaps and Secrets are the source's whole sets (see
	// sources.Update).
	ConfigMaps []*v1.ConfigMap
	Secrets    []*v1.Secret
}

// SourceError reports that a source could not be read (it keeps its last set).
type SourceError struct {
	Source string
	Err    error
}

// PodSpec tells the router (and then the pod actor) to run this pod.
// The pod's UID is its identity; a changed spec under the same UID updates
// containers in place (kill on hash change).
//
// Objects are the ConfigMaps and Secrets of the pod's namespace it refers
// to that exist: the node sends the spec again, unchanged, with new
// Objects when they change (the pod actor rewrites the pod's configMap
// and secret volumes; env is fixed at each container's creation).
type PodSpec struct {
	Pod     *v1.Pod
	Objects podsync.Objects
}

// PodRemoved tells the router (and then the pod actor) the pod is no longer
// desired: stop all its containers (apps first, then the sandbox, each
// with the grace period on its labels) and remove them, then report
// Terminated. The router spawns a pod actor for a UID it has none for
// (an orphan pod found in the runtime, a pod whose actor failed or was
// lost with a router restart): Terminated means its containers are gone.
// Namespace and Name, when known, name the pod in logs and events.
type PodRemoved struct {
	UID             types.UID
	Namespace, Name string
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
// A pod actor plans on Containers; Events say what changed, for logs (see
// package internal/pleg).
type PodTransitions struct {
	UID        types.UID
	Events     []PodLifecycleEvent
	Containers []runtimeadapter.Container
	ObservedAt time.Time
	Version    uint64 // the runtime's state version, when it has one
	// ListedFrom and ListedUntil bound when the listing was taken: the
	// relist's List call started at ListedFrom and returned (its
	// inspections included) at ListedUntil. A pod actor orders listings
	// without a Version by them. Zero: both are ObservedAt.
	ListedFrom, ListedUntil time.Time
}

// RelistTransitions is one relist's batches, every pod's in one message
// from the relist actor to the router (one send and one receive per
// relist on that hop, not one per pod); the router hands each pod actor
// a pointer to its element. Nobody changes it once sent.
type RelistTransitions struct {
	Pods []PodTransitions
}

// ContainerExited is the runtime's word that a container exited (Docker's
// die event), sent by the relist actor to the container's pod actor at
// once, ahead of the relist that the event also triggers: the pod actor
// marks the container exited in what it holds and syncs, saving the list
// and the inspection (which on Docker waits for the daemon to finish
// handling the exit). The relist's listing follows and corrects the
// details (exact FinishedAt, reason).
type ContainerExited struct {
	UID         types.UID
	ContainerID string
	ExitCode    int // -1: unknown
	At          time.Time
}

// RelistSnapshot is every managed container of this node from one successful
// relist, handed to the node actor so it can find orphans.
type RelistSnapshot struct {
	Containers []runtimeadapter.Container
	ObservedAt time.Time
}

// EventStreamState is the PLEG's view of the runtime's event stream, sent
// by the relist actor to the node each time it changes, for /healthz. A
// relist actor that follows no event stream never sends it.
type EventStreamState struct {
	// State is "down", "healthy", "silent" or "confirming" (see
	// internal/pleg's StreamState); OK only when healthy.
	State   string
	OK      bool
	Message string
	Since   time.Time
}

// ExitPathState is the fastest path by which a container's death reaches
// its pod actor now, sent by the relist actor to the node at start and on
// each change, for /healthz: "containerd" (the runtime's containerd's task
// exit), "runtime-events" (the runtime's die event) or "relist".
type ExitPathState struct {
	Path    string
	Message string
	Since   time.Time
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
	// Status is the pod machine's own, shared with the node, which keeps
	// it: nobody changes it once sent.
	Status *v1.PodStatus
}

// Terminated is sent by a pod actor when every container of its removed pod
// is gone; the router forgets its PID and tells the node.
type Terminated struct {
	UID types.UID
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

// PodSyncing is sent by a pod actor to the node when one of its syncs
// starts (Since set) and when it ends (Since zero), so the node's health
// shows a pod stuck in a sync as that pod, not as the node.
type PodSyncing struct {
	UID   types.UID
	Since time.Time
}

// RelistNow asks the relist actor (the PLEG) to list at once, e.g. after
// the desired set changed, so orphans are found without waiting a period.
type RelistNow struct{}

// RuntimeState is the PLEG's word on the runtime, sent to the router (and
// by it to every pod actor) when it changes: while lists fail, pod actors
// start no sync, so actorlet creates and kills nothing on stale knowledge.
type RuntimeState struct {
	Healthy bool
	Err     error
}
