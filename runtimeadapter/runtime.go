// Package runtimeadapter is actorlet's only door to containers.
//
// Runtime is deliberately small: every method takes a context first, returns
// one of the documented sentinel errors (wrapped with %w, so test with
// errors.Is) or an adapter-specific error, and never blocks past ctx.
// Two implementations ship with actorlet: runtimeadapter/docker (the real
// one) and runtimeadapter/fake (in memory, for tests).
package runtimeadapter

import (
	"context"
	"errors"
	"io"
	"time"
)

// Sentinel errors. Adapters wrap them with %w and name the object.
var (
	// ErrNotFound: the container or image does not exist.
	ErrNotFound = errors.New("not found")
	// ErrNameConflict: CreateContainer found a container with that name
	// already. The error is a *NameConflictError carrying the existing ID so
	// the caller can adopt it instead of creating a duplicate.
	ErrNameConflict = errors.New("container name already in use")
	// ErrUnavailable: the runtime could not be reached or did not answer in
	// time. Callers must not read it as "no containers".
	ErrUnavailable = errors.New("runtime unavailable")
)

// NameConflictError is returned (wrapped) by CreateContainer when a container
// with the requested name exists. errors.Is(err, ErrNameConflict) holds.
type NameConflictError struct {
	Name string
	ID   string // ID of the existing container; may be empty if unknown
}

func (e *NameConflictError) Error() string {
	return "container " + e.Name + ": " + ErrNameConflict.Error() + " by " + e.ID
}

// Unwrap makes errors.Is(err, ErrNameConflict) true.
func (e *NameConflictError) Unwrap() error { return ErrNameConflict }

// State is a container's state as the PLEG sees it.
type State string

const (
	StateRunning State = "running"
	StateExited  State = "exited"
	// StateUnknown covers created, paused, restarting and removing.
	StateUnknown State = "unknown"
)

// Container is one observed container.
type Container struct {
	ID     string
	Name   string // runtime name, without a leading "/"
	Image  string
	Labels map[string]string
	State  State
	// RawState is the runtime's own word (Docker: created, running, paused,
	// restarting, removing, exited, dead).
	RawState   string
	ExitCode   int
	Reason     string // e.g. "OOMKilled", "Error", "Completed" when exited
	CreatedAt  time.Time
	StartedAt  time.Time
	FinishedAt time.Time
	// IP is the container's address on its network, if any (sandboxes).
	IP string
	// Error is the runtime's own account of why the container could not
	// be started (Docker's State.Error), empty otherwise. Docker leaves a
	// container whose start failed "created", with no start or finish
	// time, an exit code of 127 (command not found), 126 (not executable)
	// or 128, and this message; only the message tells it from a container
	// that was never started.
	Error string
}

// ListResult is one consistent listing.
type ListResult struct {
	Containers []Container
	// ObservedAt is when the listing was requested: everything the runtime
	// did before it is reflected. Used to order observations.
	ObservedAt time.Time
	// Version is the runtime's state version at the listing, when it keeps
	// one (the fake does; 0: unknown). It orders listings ObservedAt
	// cannot (the same instant).
	Version uint64
}

// ContainerSpec is what CreateContainer needs. Adapters add the log driver
// and the "no" restart policy themselves.
type ContainerSpec struct {
	Name       string // deterministic runtime name, see ContainerName
	Image      string
	Entrypoint []string // v1.Container.Command; nil keeps the image's
	Cmd        []string // v1.Container.Args; nil keeps the image's
	Env        []string // KEY=VALUE
	WorkingDir string
	Labels     map[string]string
	// NetworkMode: "" (runtime default bridge), "host", "none" or
	// "container:<id>" to join a sandbox.
	NetworkMode string
	Hostname    string
	// PidMode: "" a PID namespace of the container's own;
	// "container:<id>" the PID namespace of container id, its pod's
	// sandbox (shareProcessNamespace). On a sandbox, PidModePod: the pod's
	// containers will join its PID namespace (a CRI runtime must be told
	// when the sandbox is made; Docker needs nothing).
	PidMode string

	// PortBindings publish container ports on the host. Only a pod's
	// sandbox has them: app containers join its network namespace, and
	// Docker refuses port publishing with a "container:<id>" network mode.
	PortBindings []PortBinding
	// Mounts are the container's bind and tmpfs mounts, in order.
	Mounts []Mount
	// Resources are the container's cgroup limits; the zero value sets
	// none.
	Resources Resources

	// User runs the container's processes as "uid" or "uid:gid"; "" keeps
	// the image's user.
	User string
	// GroupAdd are supplemental groups (GIDs) of the container's
	// processes, beside those the image's /etc/group gives its user (the
	// pod's fsGroup, then supplementalGroups: Kubernetes' Merge policy).
	GroupAdd []int64
	// ReadOnlyRootfs mounts the container's root filesystem read-only.
	ReadOnlyRootfs bool
	// Privileged gives the container every capability and the host's
	// devices.
	Privileged bool
	// CapAdd and CapDrop add and drop Linux capabilities, named as in
	// Kubernetes ("NET_ADMIN", "ALL"; a "CAP_" prefix is accepted too).
	CapAdd  []string
	CapDrop []string
	// NoNewPrivileges sets no_new_privs: setuid binaries and file
	// capabilities grant nothing (allowPrivilegeEscalation: false).
	NoNewPrivileges bool
	// Seccomp is the container's seccomp profile: "" the runtime's
	// default, SeccompUnconfined none, else a profile's JSON (Docker takes
	// the content, not a path).
	Seccomp string
	// AppArmor is the container's AppArmor profile: "" the runtime's
	// default, AppArmorUnconfined none, else the name of a profile loaded
	// on the host.
	AppArmor string
}

// PidModePod is a sandbox's PidMode when its pod shares one PID namespace.
const PidModePod = "pod"

// The Seccomp and AppArmor values that run a container without a profile.
const (
	SeccompUnconfined  = "unconfined"
	AppArmorUnconfined = "unconfined"
)

// PortBinding publishes ContainerPort/Protocol on HostIP:HostPort.
type PortBinding struct {
	HostIP        string // "" binds every host address
	HostPort      int
	ContainerPort int
	Protocol      string // "tcp", "udp" or "sctp"
}

// MountType is the kind of a Mount.
type MountType string

const (
	// MountBind bind-mounts the host path Source.
	MountBind MountType = "bind"
	// MountTmpfs mounts a new, empty tmpfs private to the container.
	MountTmpfs MountType = "tmpfs"
)

// Mount is one mount into a container.
type Mount struct {
	Type MountType
	// Source is the absolute host path of a bind mount; empty for tmpfs.
	Source string
	// Target is the absolute path inside the container.
	Target   string
	ReadOnly bool
	// SizeBytes limits a tmpfs; 0 leaves the kernel's default (half of
	// RAM). Ignored for bind mounts.
	SizeBytes int64
}

// Resources are a container's cgroup settings. Zero fields set nothing.
type Resources struct {
	// MemoryBytes limits memory; swap is not allowed beyond it.
	MemoryBytes int64
	// CPUQuota is the CPU time in µs the container may use per CPUPeriod
	// µs (the CFS quota); both 0 for no limit.
	CPUPeriod int64
	CPUQuota  int64
	// CPUShares is the container's relative CPU weight under contention
	// (1024 is the runtime's default for one CPU).
	CPUShares int64
}

// ListOptions narrows List. Node must be set: adapters only ever return
// containers labelled for that node.
type ListOptions struct {
	Node string
	// PodUID, when set, narrows to one pod.
	PodUID string
	// All includes exited containers (the PLEG needs them).
	All bool
}

// Runtime is the container runtime as actorlet needs it.
//
// Errors: ErrNotFound, ErrNameConflict (CreateContainer only),
// ErrUnavailable; all wrapped. A failed List is an error, never an empty
// result.
type Runtime interface {
	// List returns the managed containers matching opts (see ListOptions):
	// those whose labels mark them as actorlet's for opts.Node (IsManaged).
	// The order is unspecified (Docker lists newest first): callers sort.
	// The result is the caller's to change.
	List(ctx context.Context, opts ListOptions) (ListResult, error)
	// Inspect returns one container by ID or name.
	Inspect(ctx context.Context, id string) (Container, error)
	// EnsureImage makes image available locally (pulling if the adapter can).
	EnsureImage(ctx context.Context, image string) error
	// Create creates (does not start) a container and returns its ID.
	Create(ctx context.Context, spec ContainerSpec) (string, error)
	// Start starts a created container.
	Start(ctx context.Context, id string) error
	// Stop sends SIGTERM (or the image's stop signal) and SIGKILL after
	// grace, and returns once the container has stopped. Stopping a
	// container that does not run (created or exited) is not an error.
	Stop(ctx context.Context, id string, grace time.Duration) error
	// Remove removes a stopped container (forcing if it still runs).
	// Removing a missing container returns ErrNotFound.
	Remove(ctx context.Context, id string) error
}

// EventKind names a runtime event that matters to the PLEG.
type EventKind string

const (
	EventStart   EventKind = "start"
	EventDie     EventKind = "die"
	EventOOM     EventKind = "oom"
	EventDestroy EventKind = "destroy"
)

// Event is one runtime event about a managed container.
type Event struct {
	Kind        EventKind
	ContainerID string
	Labels      map[string]string
	Time        time.Time
	// ExitCode is the container's exit code on EventDie (Docker's
	// exitCode attribute); -1 when the runtime did not say.
	ExitCode int
}

// EventSource is implemented by runtimes that can stream events (Docker).
// It is optional: the relist remains the safety net. The channel closes when
// ctx ends or the stream breaks; the error channel then says why.
//
// Events returns once the stream is open (the runtime delivers what
// happens from then on), or once it failed, with the error already in the
// error channel where it can. The PLEG dates the stream from that return:
// it judges a stream that stays open but delivers nothing by the changes
// its relists find that no event reported (internal/pleg's StreamWatch),
// matching events to changes by container ID and kind, so an event's
// ContainerID must be the ID List reports.
type EventSource interface {
	Events(ctx context.Context, node string) (<-chan Event, <-chan error)
}

// Exit is a container's death as reported ahead of the runtime's own
// event stream (containerd's task exit under Docker): the container's
// main process ended. Exec processes' exits are never Exits.
type Exit struct {
	ContainerID string
	// PodUID is the container's pod (its LabelPodUID), as the adapter
	// knows it from creating or listing the container.
	PodUID   string
	ExitCode int
	// ExitedAt is the runtime's own exit time: what it reports next as
	// the container's FinishedAt.
	ExitedAt  time.Time
	OOMKilled bool
	// Published and Received, when known, date the report's way here:
	// when the runtime's event was published (containerd's envelope
	// timestamp: the shim's publish) and when this process read it.
	// They split detection latency; nothing decides on them.
	Published, Received time.Time
	// Handled: the ExitHook in the Exits call's context took this exit
	// (returned true) before it was sent on the channel.
	Handled bool
}

// ExitHook, placed in the context of an ExitSource.Exits call with
// WithExitHook, is called with each exit on the goroutine that reads the
// runtime's stream, before the exit is sent on the channel (with Handled
// set to what the hook returned): a caller that can act on an exit at
// once (send it to an actor) does so without waiting for the goroutine
// that reads the channel to be scheduled. It must be quick and must not
// block. Sources that cannot call it ignore it.
type ExitHook func(Exit) bool

type exitHookKey struct{}

// WithExitHook returns ctx carrying hook for ExitSource.Exits.
func WithExitHook(ctx context.Context, hook ExitHook) context.Context {
	return context.WithValue(ctx, exitHookKey{}, hook)
}

// ExitHookOf is the hook ctx carries (nil: none).
func ExitHookOf(ctx context.Context) ExitHook {
	h, _ := ctx.Value(exitHookKey{}).(ExitHook)
	return h
}

// ExitSource is implemented by runtimes that can report a container's
// exit before their event stream does (Docker, through its containerd's
// task events). It is an accelerator: EventSource and the relist stay.
//
// ExitPath names the path (e.g. "containerd task events at
// /run/containerd/containerd.sock, namespace moby"), or is "" when the
// runtime has none configured: then Exits is not to be called. Exits
// streams the exits of node's containers from now on, as Events does:
// it returns once the stream is open or failed, the channel closes when
// ctx ends or the stream breaks, and the error channel then says why.
// While a runtime reports exits this way, List and Inspect report an
// exited container as exited even before the runtime itself has handled
// the exit.
type ExitSource interface {
	ExitPath() string
	Exits(ctx context.Context, node string) (<-chan Exit, <-chan error)
}

// Typed is implemented by runtimes that name themselves as the kubelet
// writes a container's ID in pod status, "<type>://<id>": RuntimeType is
// "docker", or a CRI runtime's name ("containerd", "cri-o"); "" while
// unknown. A runtime without it is taken for Docker.
type Typed interface {
	RuntimeType() string
}

// SandboxContainers is implemented by runtimes whose pod sandbox is an
// ordinary container that the pod's other containers reference only
// through the namespaces they join ("container:<id>" network and PID
// modes): Docker, and the fake. A container that joins none of them
// (hostNetwork, no shared PID namespace) may then be created and started
// while its sandbox is made (see podsync.Plan.StartBeside). A CRI runtime
// makes each container inside its pod sandbox (CreateContainer needs it
// ready), so it does not implement it.
type SandboxContainers interface {
	SandboxIsContainer() bool
}

// LogOptions selects what Logs returns.
type LogOptions struct {
	Follow     bool
	TailLines  int // 0 or less: all
	Since      time.Time
	Timestamps bool
}

// LogSource is implemented by runtimes that keep container logs (Docker's
// json-file driver). Logs returns the container's stdout and stderr,
// demultiplexed into one plain stream, until ctx ends or, without Follow,
// the end of the log. Errors: ErrNotFound for an unknown container.
type LogSource interface {
	Logs(ctx context.Context, id string, opts LogOptions) (io.ReadCloser, error)
}
