package podstate

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/internal/probe"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/supervision"
)

// Event is what happened to a pod: an input of Step.
type Event interface{ event() }

// Events.
type (
	// Started: the actor started (or restarted, remembering nothing).
	Started struct{}
	// SpecChanged: the pod's spec (from the router), with the ConfigMaps
	// and Secrets it refers to that exist (sent again, with the same spec,
	// when they change).
	SpecChanged struct {
		Pod     *v1.Pod
		Objects podsync.Objects
	}
	// Removed: the pod is no longer desired; Namespace and Name name an
	// orphan the machine has no spec of.
	Removed struct{ Namespace, Name string }
	// RuntimeHealth: the PLEG's lists fail (or work again).
	RuntimeHealth struct{ Healthy bool }
	// Listed: the PLEG's listing of the pod's containers, taken between
	// From and Until (zero: at ObservedAt), at the runtime's state
	// Version (0: none). The PLEG's events (ContainerStarted, Died …) are
	// not part of it: the listing holds every change they name, and the
	// machine plans on listings. Step takes it by pointer (*Listed), so
	// that the shell can hand over the PLEG's batches without an
	// allocation each; the machine keeps nothing of the struct itself
	// (the Containers slice it may keep is never changed).
	Listed struct {
		Containers              []runtimeadapter.Container
		From, Until, ObservedAt time.Time
		Version                 uint64
	}
	// Died: the runtime's die event of a container, before a relist.
	Died struct {
		ContainerID string
		ExitCode    int // < 0: not known
		At          time.Time
	}
	// SyncRequested answers RequestSync.
	SyncRequested struct{}
	// WorkDone is the executor's outcome (of a List or a Run).
	WorkDone struct {
		Listing Listing
		ListErr error
		Errs    []error              // the plan's errors
		Waits   map[string]StartWait // container → why its start attempt failed
		Started []string             // containers started
	}
	// TimerFired: the timer last set (SetTimer) went off.
	TimerFired struct{}
	// ProbeChanged: a probe of Container said something new.
	ProbeChanged struct {
		Container string
		Change    probe.Change
	}
)

func (Started) event()       {}
func (SpecChanged) event()   {}
func (Removed) event()       {}
func (RuntimeHealth) event() {}
func (*Listed) event()       {}
func (Died) event()          {}
func (SyncRequested) event() {}
func (WorkDone) event()      {}
func (TimerFired) event()    {}
func (ProbeChanged) event()  {}

// Listing is the executor's list of the pod's containers, taken between
// From and Until (the List call's start and return). Received is the
// List or Run effect's: it tells whether a PLEG listing came meanwhile.
type Listing struct {
	Containers  []runtimeadapter.Container
	From, Until time.Time
	Version     uint64
	Received    uint64
}

// Effect is what the actor must do: an output of Step.
type Effect interface{ effect() }

// Effects.
type (
	// List: list the pod's containers off the actor; answer WorkDone
	// with the listing (Listing.Received = Received).
	List struct{ Received uint64 }
	// Run: carry out Plan off the actor, then list; answer WorkDone.
	Run struct {
		Plan podsync.Plan
		Pod  *v1.Pod // nil: the pod is removed
		// HookPod is the spec hooks come from (also for a removed pod);
		// RemovedAs names an orphan (no spec), for errors.
		HookPod   *v1.Pod
		RemovedAs string
		PodStart  time.Time // kept in the sandbox's labels
		// Objects are the pod's ConfigMaps and Secrets: its env and
		// configMap, secret and projected volumes resolve them.
		Objects podsync.Objects
		// Refresh: the objects changed; write the pod's volumes of them
		// again (the plan may be empty).
		Refresh      bool
		KillMessages map[string]string // container ID → the Killing event's message (a failed probe)
		Received     uint64
	}
	// AbortStarts: the running executor creates and starts nothing more
	// (the pod was removed or its spec changed); its stops go on.
	AbortStarts struct{}
	// SetTimer: one timer, at At, replacing any other; answer TimerFired.
	SetTimer struct{ At time.Time }
	// RequestSync: answer SyncRequested after the events already queued.
	RequestSync struct{}
	// Report the pod's status to the node. PodStarted: every container
	// runs for the first time, StartedIn after the pod's start.
	Report struct {
		Namespace, Name string
		// Status is the machine's last status: never changed once
		// reported (the next report is a new one), so that the node may
		// keep it instead of a copy.
		Status     *v1.PodStatus
		PodStarted bool
		StartedIn  time.Duration
	}
	// Emit a pod event.
	Emit struct {
		Warning                    bool
		Reason, Container, Message string
	}
	// Persist the pod's container history (supervision.History).
	Persist struct {
		Records supervision.Records
	}
	// SpawnProbes: replace the probe children with those of Pod.
	SpawnProbes struct{ Pod *v1.Pod }
	// StopProbes: stop every probe child.
	StopProbes struct{}
	// ProbeTargets: tell each probe child its container's instance (by
	// container name; none: no instance).
	ProbeTargets struct{ Targets map[string]ProbeTarget }
	// Syncing: a sync began at Since (zero: the executor's work ended).
	Syncing struct{ Since time.Time }
	// SyncTook: a sync's duration, for the metrics.
	SyncTook struct{ Duration time.Duration }
	// SyncFailed: the executor's work failed; it is tried again in
	// RetryIn.
	SyncFailed struct {
		Errs    []error
		RetryIn time.Duration
	}
	// Terminate: the pod was removed and none of its containers is left:
	// forget its history, remove its directory, tell the router.
	Terminate struct{}
)

func (List) effect()         {}
func (Run) effect()          {}
func (AbortStarts) effect()  {}
func (SetTimer) effect()     {}
func (RequestSync) effect()  {}
func (Report) effect()       {}
func (Emit) effect()         {}
func (Persist) effect()      {}
func (SpawnProbes) effect()  {}
func (StopProbes) effect()   {}
func (ProbeTargets) effect() {}
func (Syncing) effect()      {}
func (SyncTook) effect()     {}
func (SyncFailed) effect()   {}
func (Terminate) effect()    {}

type effects []Effect

func (e *effects) add(x Effect) { *e = append(*e, x) }
