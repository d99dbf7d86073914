// Package node is actorlet's embedding API: it runs a node — the actor tree
// that keeps a machine's containers matching a set of desired pods — inside
// another Go service's protoactor-go ActorSystem, next to that service's
// own actors.
//
// Spawn a node with Spawn (or New, then Node.Spawn or Node.Props), talk
// to it with the messages in package messages, and stop it with Stop.
// The actorlet binary builds its node the same way, so whatever
// `actorlet run` promises (runtime deadlines, CrashLoopBackOff and each
// container's last exit kept across restarts in a file, event limits,
// metrics) an embedder gets through Options:
//
//   - pods come from Options.Sources (sources/dir, sources/url, your own
//     sources.Source) and from the host itself: SetHostPods (a full set),
//     ApplyPod and DeletePod, each answered (from outside an actor, the
//     helpers of the same names wait for the typed answer; from inside one,
//     Request and handle the answer as a message);
//   - GetPodStatuses, GetEvents and GetHealth are queries (helpers
//     PodStatuses, Events, Health); StopAllPods stops every pod;
//   - Subscribe a PID to receive *messages.PodStatusChanged on every change.
//
// For tests, pass runtimeadapter/fake as the Runtime and run the test
// inside testing/synctest: every timer actorlet uses (relist, backoff,
// retries) is a time package timer, so virtual time drives it.
package node

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/internal/metrics"
	"github.com/actorlet/actorlet/internal/nodeinfo"
	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/internal/version"
	"github.com/actorlet/actorlet/internal/volumeprep"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/sources"
	"github.com/actorlet/actorlet/supervision"
)

// DefaultPodInfraImage is the sandbox image when Options.PodInfraImage is
// empty: the pause image actorlet builds locally when a sandbox first
// needs it (the binary does that; an embedding service on Docker passes
// LocalPauseImage to docker.New, or makes sure the image exists, or names
// another).
const DefaultPodInfraImage = "actorlet/pause:" + version.Version

// Defaults of Options' zero fields (`actorlet run`'s flag defaults).
const (
	// DefaultRelistPeriod is the PLEG's relist period (1 s, as the kubelet).
	DefaultRelistPeriod = actors.DefaultRelistPeriod
	// DefaultEventRelistPeriod is the safety-net relist period while the
	// runtime's event stream is healthy (5 s).
	DefaultEventRelistPeriod = actors.DefaultEventRelistPeriod
	// DefaultRuntimeTimeout bounds one create, start or remove call, and a
	// stop on top of its grace period (2 min, as the kubelet's
	// --runtime-request-timeout).
	DefaultRuntimeTimeout = actors.DefaultRuntimeTimeout
	// DefaultParallelPodStarts is how many pods are started at once (see
	// Options.ParallelPodStarts).
	DefaultParallelPodStarts = actors.DefaultParallelPodStarts
	// DefaultListTimeout bounds one list of the node's containers, its
	// inspections included (10 s).
	DefaultListTimeout = actors.DefaultListTimeout
	// DefaultRelistThreshold: the node is unhealthy (GetHealth) when its
	// last successful relist is older than this (3 min, as the kubelet's
	// PLEG health check).
	DefaultRelistThreshold = actors.DefaultRelistThreshold
	// DefaultMaxEvents is how many events the node keeps (GetEvents).
	DefaultMaxEvents = actors.DefaultMaxEvents
)

// Options configure a node. NodeName and Runtime are required.
type Options struct {
	// NodeName is recorded on every container; the node only ever touches
	// containers labelled with it.
	NodeName string
	// Runtime is the container runtime: runtimeadapter/docker, or
	// runtimeadapter/fake in tests.
	Runtime runtimeadapter.Runtime
	// Sources feed desired pods. Orphans are killed only after each has
	// synced once.
	Sources []sources.Source
	// HostSource: the host feeds pods with SetHostPods/ApplyPod/DeletePod,
	// and orphans wait for its first SetHostPods too.
	HostSource bool
	// PodInfraImage is the sandbox image (default DefaultPodInfraImage).
	PodInfraImage string
	// RelistPeriod of the PLEG (default 1 s).
	RelistPeriod time.Duration
	// EventRelistPeriod is the PLEG's safety-net period while the
	// runtime's event stream is healthy (default 5 s; negative: no events,
	// relist only). A silent stream is noticed and replaced: see the
	// actors package's relist actor.
	EventRelistPeriod time.Duration
	// Clock drives every actorlet timer and timestamp (default: real
	// time). Tests on the fake runtime are simplest inside testing/synctest
	// with the default; a k8s.io/utils/clock FakeClock steps time by hand
	// (the fake runtime's own timestamps stay on the time package).
	Clock clock.WithDelayedExecution
	// Backoff is the CrashLoopBackOff curve (default, as the kubelet: a
	// first exit restarts at once, later ones wait 10 s doubling to 300 s,
	// and the back-off resets when an exit comes more than 600 s after the
	// last restart).
	Backoff *supervision.BackoffPolicy
	// StandbyContainers keeps the next instance of each restartable app
	// container created (never started) ahead of its restart, so that a
	// restart is one start call (default off; `actorlet run` turns it on:
	// see its --standby-containers).
	StandbyContainers bool
	// History keeps each container's last exit and CrashLoopBackOff
	// outside the pod actors, so a restarted pod actor does not run
	// completed work again and goes on with the same restart counts and
	// curve. Default: in memory, for the node's life. With a file
	// (supervision.NewHistory(path)) this holds across a restart of the
	// service too, as `actorlet run`'s <root-dir>/nodes/<node>.containers.json.
	// Give each node its own History.
	History *supervision.History
	// MaxPodRestarts within PodRestartWindow bound pod actor restarts after
	// panics (default 5 within 1 min).
	MaxPodRestarts   int
	PodRestartWindow time.Duration
	// Logger (default: discard).
	Logger *zap.Logger
	// Metrics, when set, receives actorlet's Prometheus metrics (relist,
	// restarts, pod start, runtime operations, actors). Register each
	// node on its own registry, or give nodes distinct registries: the
	// metric names are fixed.
	Metrics prometheus.Registerer
	// RootDir holds pod directories (emptyDir volumes); default
	// /var/lib/actorlet. AllowPrivileged and AllowHostPath let pods ask for
	// privileged containers and hostPath volumes (default: refused). Give
	// your own sources the same permissions (dir.WithValidation with a
	// sources.Validation).
	RootDir                        string
	AllowPrivileged, AllowHostPath bool
	// InstrumentRuntime times and counts the runtime's operations in
	// Metrics (ignored without Metrics); Node.Runtime returns the
	// instrumented runtime for the host's own calls (e.g. logs).
	InstrumentRuntime bool
	// RuntimeTimeout is the deadline of one create, start or remove call,
	// and of a stop on top of its grace period (default
	// DefaultRuntimeTimeout, 2 min).
	RuntimeTimeout time.Duration
	// ListTimeout is the deadline of one list of the node's containers,
	// its inspections included (default DefaultListTimeout, 10 s).
	ListTimeout time.Duration
	// ParallelPodStarts bounds the new pods (their sandbox and first
	// container) being started at once at the beginning of a burst, in
	// the order their plans came; each start that ends raises the bound
	// by one until nothing starts (default DefaultParallelPodStarts, 4;
	// negative: no bound). Kills, removals and restarts in a running
	// sandbox are never held back, and a pod waiting for an image pull
	// holds no place.
	ParallelPodStarts int
	// RelistThreshold: GetHealth reports the PLEG unhealthy when its last
	// successful relist is older than this (default
	// DefaultRelistThreshold, 3 min).
	RelistThreshold time.Duration
	// MaxEvents is how many events the node keeps for GetEvents, the
	// oldest dropped first (default DefaultMaxEvents).
	MaxEvents int
	// HostIPs are the node's addresses (the kubelet's --node-ip): pods'
	// status.hostIP(s), and the addresses of hostNetwork pods. Default:
	// found as a standalone kubelet finds them (nodeinfo.HostIPs: the
	// default route's interface); when none is found, a fieldRef to
	// status.hostIP fails the container's start.
	HostIPs []string
	// Allocatable is the node's allocatable resources, which a
	// resourceFieldRef to a limit a container does not set resolves to.
	// Default: the node's CPUs, memory and the size of RootDir's
	// filesystem (nodeinfo.Allocatable).
	Allocatable v1.ResourceList
}

// ErrOptions: the options are unusable.
var ErrOptions = errors.New("invalid node options")

// config checks o and builds the actor tree's configuration, with the
// node's metrics (registered on o.Metrics) and instrumented runtime.
func (o Options) config() (actors.Config, error) {
	if o.NodeName == "" {
		return actors.Config{}, fmt.Errorf("%w: NodeName is required", ErrOptions)
	}
	if o.Runtime == nil {
		return actors.Config{}, fmt.Errorf("%w: Runtime is required", ErrOptions)
	}
	seen := map[string]bool{}
	for i, s := range o.Sources {
		if s == nil {
			return actors.Config{}, fmt.Errorf("%w: Sources[%d] is nil", ErrOptions, i)
		}
		if seen[s.Name()] || s.Name() == actors.HostSource {
			return actors.Config{}, fmt.Errorf("%w: source name %q used twice", ErrOptions, s.Name())
		}
		seen[s.Name()] = true
	}
	b := supervision.DefaultBackoffPolicy()
	if o.Backoff != nil {
		b = *o.Backoff
	}
	img := o.PodInfraImage
	if img == "" {
		img = DefaultPodInfraImage
	}
	rt := o.Runtime
	var m *metrics.Metrics
	if o.Metrics != nil {
		m = metrics.New(o.Metrics)
		if o.InstrumentRuntime {
			rt = metrics.InstrumentRuntime(rt, m)
		}
	}
	hostIPs := o.HostIPs
	if len(hostIPs) == 0 {
		hostIPs, _ = nodeinfo.HostIPs() // none found: a fieldRef to status.hostIP fails, naming it
	}
	alloc := o.Allocatable
	if alloc == nil {
		root := o.RootDir
		if root == "" {
			root = podsync.DefaultRootDir
		}
		alloc = nodeinfo.Allocatable(root)
	}
	return actors.Config{
		NodeName: o.NodeName, Runtime: rt, PodInfraImage: img, Metrics: m,
		Spec: podsync.SpecOptions{
			RootDir: o.RootDir, AllowPrivileged: o.AllowPrivileged, AllowHostPath: o.AllowHostPath,
			ReadFile: os.ReadFile, ReadVolumeFile: volumeprep.ReadVolumeFile, HostIPs: hostIPs, Allocatable: alloc,
		},
		RelistPeriod: o.RelistPeriod, EventRelistPeriod: o.EventRelistPeriod, Clock: o.Clock,
		Backoff: b, Standby: o.StandbyContainers, History: o.History, HostSource: o.HostSource,
		MaxPodRestarts: o.MaxPodRestarts, PodRestartWindow: o.PodRestartWindow,
		RuntimeTimeout: o.RuntimeTimeout, ListTimeout: o.ListTimeout, ParallelPodStarts: o.ParallelPodStarts,
		RelistThreshold: o.RelistThreshold, MaxEvents: o.MaxEvents,
		Logger: o.Logger,
	}, nil
}

// Node is a node built from Options and not yet spawned: New checks the
// options and makes what the node runs on once (its metrics, registered
// on Options.Metrics, and its instrumented runtime). Spawn it once.
type Node struct {
	name    string
	cfg     actors.Config
	sources []sources.Source
}

// New checks o and builds a node from it. The error wraps ErrOptions
// when o is unusable. (New registers the node's metrics on o.Metrics, so
// call it once per registry.)
func New(o Options) (*Node, error) {
	cfg, err := o.config()
	if err != nil {
		return nil, err
	}
	return &Node{name: o.NodeName, cfg: cfg, sources: o.Sources}, nil
}

// Runtime is the runtime the node calls: Options.Runtime, timed and
// counted in Options.Metrics when Options.InstrumentRuntime is set. Give
// the host's own calls to the runtime (e.g. reading logs) this one, so
// the metrics count them as well.
func (n *Node) Runtime() runtimeadapter.Runtime { return n.cfg.Runtime }

// Props returns the props of the node actor.
func (n *Node) Props() *actor.Props { return actors.NodeProps(n.cfg, n.sources...) }

// Spawn starts the node under parent (the ActorSystem's Root, or an
// actor's context to make the node its child) named "node-<NodeName>".
func (n *Node) Spawn(parent actor.SpawnerContext) (*actor.PID, error) {
	pid, err := parent.SpawnNamed(n.Props(), "node-"+n.name)
	if err != nil {
		return nil, fmt.Errorf("spawn node %s: %w", n.name, err)
	}
	return pid, nil
}

// Props returns the props of a node actor for o: New(o), then its Props.
func Props(o Options) (*actor.Props, error) {
	n, err := New(o)
	if err != nil {
		return nil, err
	}
	return n.Props(), nil
}

// Spawn starts a node for o under parent (the ActorSystem's Root, or an
// actor's context to make the node its child) named "node-<NodeName>":
// New(o), then its Spawn.
func Spawn(parent actor.SpawnerContext, o Options) (*actor.PID, error) {
	n, err := New(o)
	if err != nil {
		return nil, err
	}
	return n.Spawn(parent)
}

// Stop stops the node and its whole actor tree and waits for it, at most
// timeout. Containers keep running: a node started again adopts them.
// (protoactor-go's ActorSystem.Shutdown stops no actors.)
func Stop(root *actor.RootContext, pid *actor.PID, timeout time.Duration) error {
	return actors.StopNode(root, pid, timeout)
}
