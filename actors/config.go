// Package actors holds actorlet's actors: node, router, relist (the PLEG)
// and one pod actor per pod UID. Each is a thin shell: it translates
// messages, asks a pure function (internal/podsync, internal/pleg) what to
// do, and runs slow runtime calls off its mailbox, reporting back as
// messages.
package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	"k8s.io/utils/clock"

	"github.com/actorlet/actorlet/internal/dispatch"
	"github.com/actorlet/actorlet/internal/images"
	"github.com/actorlet/actorlet/internal/manifest"
	"github.com/actorlet/actorlet/internal/metrics"
	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/supervision"
)

// Defaults, with the source of each number.
const (
	// DefaultRelistPeriod is the PLEG's relist period (1 s, as the kubelet).
	DefaultRelistPeriod = time.Second
	// DefaultEventRelistPeriod is the safety-net relist period while the
	// runtime's event stream is healthy.
	DefaultEventRelistPeriod = 5 * time.Second
	// DefaultListTimeout bounds one list call, its inspections included
	// (seconds, not the 2 min of slow calls: a stuck list must not stall
	// the PLEG). Each inspection has a shorter deadline of its own (the
	// Docker adapter's DefaultInspectTimeout, 3 s; 2 s for the containers
	// events named), so one hung inspect fails nothing.
	DefaultListTimeout = 10 * time.Second
	// DefaultRuntimeTimeout bounds one create/start/remove call (2 min, as
	// the kubelet's --runtime-request-timeout).
	DefaultRuntimeTimeout = 2 * time.Minute
	// syncRetryInitial and syncRetryMax bound the retry of a pod sync that
	// failed (a runtime error), doubling in between.
	syncRetryInitial = time.Second
	syncRetryMax     = time.Minute
	// gcPeriod: how often a pod actor removes exited instances nobody
	// needs (every minute, as the kubelet's container GC); the newest
	// exited instance of each container is kept for `logs --previous`.
	gcPeriod = time.Minute
	// failedStartRetry and failedStartJitter: a container whose start
	// attempt failed before it ran (CreateContainerError,
	// CreateContainerConfigError, ErrImageNeverPull, ImageInspectError) is
	// tried again after 10 s plus up to 50 %: the kubelet's pod worker
	// requeues a failed sync so (backOffPeriod, workerBackOffPeriodJitterFactor).
	// The same delay turns a failed pull's ErrImagePull into
	// ImagePullBackOff while the image's back-off still holds.
	failedStartRetry  = 10 * time.Second
	failedStartJitter = 0.5
)

// Config is what the actor tree needs from its host.
type Config struct {
	NodeName string
	Runtime  runtimeadapter.Runtime
	// PodInfraImage is the sandbox image (must exist, or be pullable).
	PodInfraImage string
	RelistPeriod  time.Duration
	// EventRelistPeriod is the relist period while the runtime's event
	// stream is healthy (default DefaultEventRelistPeriod, 5 s; negative:
	// never subscribe to events, relist only). While it is down, silent or
	// not yet confirmed the PLEG relists every RelistPeriod.
	EventRelistPeriod time.Duration
	Backoff           supervision.BackoffPolicy
	// Standby keeps the next instance of each restartable app container
	// created ahead of its restart, so a restart is one start call
	// (`actorlet run --standby-containers`).
	Standby bool
	// MaxPodRestarts within PodRestartWindow bound pod actor restarts
	// after panics (defaults 5 in 1 min).
	MaxPodRestarts   int
	PodRestartWindow time.Duration
	ListTimeout      time.Duration
	RuntimeTimeout   time.Duration
	// RelistThreshold: see DefaultRelistThreshold (3 min).
	RelistThreshold time.Duration
	// HostSource declares that the embedding service feeds pods with
	// SetHostPods/ApplyPod/DeletePod: orphans then wait for its first
	// SetHostPods, as they wait for every other source's first sync.
	HostSource bool
	// MaxEvents: see DefaultMaxEvents (1000).
	MaxEvents int
	Logger    *zap.Logger
	// Metrics records actorlet's Prometheus metrics (nil: none).
	Metrics *metrics.Metrics
	// Clock drives every timer and timestamp of the actors (relist,
	// CrashLoopBackOff, retries, GC, events, health). Default: the real
	// clock, which testing/synctest also controls; k8s.io/utils/clock's
	// FakeClock lets a test step time by hand.
	Clock clock.WithDelayedExecution
	// Images pulls container images by their imagePullPolicy with
	// ImagePullBackOff, one pull per image at a time. NodeProps makes one
	// when the runtime implements runtimeadapter.ImageService; without it
	// images are only made present (Runtime.EnsureImage).
	Images *images.Manager
	// progress routes the image manager's pull progress to the pods
	// waiting for the image (set by NodeProps with the manager it makes).
	progress *pullProgress
	// Spec says where pod directories (emptyDir volumes) live and what the
	// operator allows (privileged containers, hostPath volumes); Spec.RootDir
	// defaults to podsync.DefaultRootDir. Host-fed pods are validated with
	// the same permissions.
	Spec podsync.SpecOptions
	// ParallelPodStarts bounds the new pods being started at once at the
	// beginning of a burst (default DefaultParallelPodStarts; negative:
	// no bound); see startSlots.
	ParallelPodStarts int
	// starts holds the slots of ParallelPodStarts (set by NodeProps).
	starts *startSlots
	// order puts the apps started beside their sandbox before those
	// sandboxes' starts (set by NodeProps; see startOrder).
	order *startOrder
	// History keeps each container's last exit and CrashLoopBackOff
	// outside the pod actors, so a restarted pod actor (or, with a state
	// file, a restarted agent) does not run completed work again and goes
	// on with the same restart counts and curve. Default: in memory.
	History *supervision.History
}

// withDefaults fills zero fields.
func (c Config) withDefaults() Config {
	if c.RelistPeriod <= 0 {
		c.RelistPeriod = DefaultRelistPeriod
	}
	if c.EventRelistPeriod == 0 {
		c.EventRelistPeriod = DefaultEventRelistPeriod
	}
	if c.MaxPodRestarts <= 0 {
		c.MaxPodRestarts = supervision.DefaultMaxRestarts
	}
	if c.PodRestartWindow <= 0 {
		c.PodRestartWindow = supervision.DefaultRestartWindow
	}
	if c.ListTimeout <= 0 {
		c.ListTimeout = DefaultListTimeout
	}
	if c.RuntimeTimeout <= 0 {
		c.RuntimeTimeout = DefaultRuntimeTimeout
	}
	if c.RelistThreshold <= 0 {
		c.RelistThreshold = DefaultRelistThreshold
	}
	if c.ParallelPodStarts == 0 {
		c.ParallelPodStarts = DefaultParallelPodStarts
	}
	if c.MaxEvents <= 0 {
		c.MaxEvents = DefaultMaxEvents
	}
	if c.Spec.RootDir == "" {
		c.Spec.RootDir = podsync.DefaultRootDir
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	return c
}

// mailbox returns the props option of the node's own actors (node,
// router, relist): dispatch.Mailbox, which counts the kind's messages
// when metrics are on. Unlike protoactor's default mailbox, whose ring
// only grows, it drops a queue grown by a burst (10,000 pods' status
// reports at start: ~130 B per pod kept for good on the default) once
// drained, and posts without allocating.
func (c Config) mailbox(kind string) []actor.PropsOption {
	if c.Metrics == nil {
		return []actor.PropsOption{actor.WithMailbox(dispatch.Mailbox())}
	}
	return []actor.PropsOption{actor.WithMailbox(dispatch.Mailbox(c.Metrics.MailboxMiddleware(kind)))}
}

// validation is what manifests and host-fed pods may ask for.
func (c Config) validation() manifest.ValidationOptions {
	return manifest.ValidationOptions{AllowPrivileged: c.Spec.AllowPrivileged, AllowHostPath: c.Spec.AllowHostPath}
}

// capability finds an optional interface (Execer, ImageService, ...) on a
// runtime, looking through wrappers that Unwrap (the metrics decorator).
func capability[T any](rt runtimeadapter.Runtime) (T, bool) {
	for rt != nil {
		if v, ok := rt.(T); ok {
			return v, true
		}
		u, ok := rt.(interface{ Unwrap() runtimeadapter.Runtime })
		if !ok {
			break
		}
		rt = u.Unwrap()
	}
	var zero T
	return zero, false
}

// sandboxIsContainer reports whether the runtime's sandbox is a container
// the pod's containers reference only through the namespaces they join
// (runtimeadapter.SandboxContainers): then a container that joins none
// may start beside its sandbox.
func sandboxIsContainer(rt runtimeadapter.Runtime) bool {
	s, ok := capability[runtimeadapter.SandboxContainers](rt)
	return ok && s.SandboxIsContainer()
}

// runtimeType is the runtime's type for the container IDs of pod
// statuses (runtimeadapter.Typed; "": Docker's). Read when a router
// spawns its first pod actor (newPodProps), which comes after the node's
// first successful list, by when a CRI runtime has said its name.
func runtimeType(rt runtimeadapter.Runtime) string {
	if t, ok := capability[runtimeadapter.Typed](rt); ok {
		return t.RuntimeType()
	}
	return ""
}
