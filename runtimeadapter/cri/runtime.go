// Package cri is actorlet's runtime adapter for a CRI v1 runtime
// (containerd, CRI-O) over gRPC, with k8s.io/cri-api.
//
// actorlet's runtimeadapter.Runtime speaks of containers, Docker's way: a
// pod's sandbox is a container (the pause image) and its apps join it.
// This adapter maps that onto CRI:
//
//   - a container labelled as a sandbox (io.actorlet.container.type =
//     sandbox) is a pod sandbox: Create runs it (RunPodSandbox creates and
//     starts it in one call), Start of a ready one does nothing, Stop is
//     StopPodSandbox, Remove is StopPodSandbox and RemovePodSandbox. Its
//     ID is the sandbox's ID; it is "running" while ready, "exited" once
//     not. The runtime runs its own sandbox image (containerd's
//     sandbox_image): ContainerSpec.Image of a sandbox is recorded, not
//     run, and EnsureImage of Options.PauseImage does nothing;
//   - any other container is a CRI container in the sandbox it joins
//     (NetworkMode "container:<sandbox ID or name>"), or, with
//     NetworkMode "host", in its pod's newest ready sandbox (found by the
//     pod UID label). A container that names no sandbox and whose pod has
//     none (only a direct caller of the Runtime does that, the conformance
//     suite for one) gets a sandbox of its own on the host's network,
//     hidden from List and removed with it;
//   - names are the ContainerSpec's deterministic names, kept as the CRI
//     metadata name, and unique as Docker's: Create of a name in use
//     returns a runtimeadapter.NameConflictError with the existing ID, so
//     a created, never started container is adopted. Create checks the
//     name among the containers and sandboxes of the spec's pod (its pod
//     UID label, a filter the runtime applies; actorlet's names carry the
//     pod), among all of them only for a spec without a pod;
//   - labels are the CRI labels (the node, pod and container labels of
//     runtimeadapter.Meta); the spec's image is kept in an annotation so
//     List and Inspect report the reference actorlet asked for;
//   - logs are the runtime's CRI log files, in the kubelet's layout
//     (<LogRoot>/<namespace>_<pod>_<uid>/<container>/<restartCount>.log)
//     and format, read back as plain lines by Logs;
//   - exec is ExecSync (probes, hooks), images ImageStatus and PullImage.
//
// Measured quirks of containerd 1.6 it handles: a sandbox on the host's
// network must have no hostname; StopContainer may return before the
// container's status shows the exit, and RemoveContainer then fails with
// "still running" for up to ~120 ms, so both are retried; a sandbox on the
// pod network needs CNI in the runtime, and is refused by name
// (ErrNoPodNetwork) when the runtime reports its network not ready.
//
// containerd 1.6 has no CRI event stream (GetContainerEvents answers
// Unimplemented), so this adapter is not a runtimeadapter.EventSource
// (EventsSupported tells whether the runtime serves one; WithEvents adds
// an event source). On containerd, Options.Containerd follows containerd's
// own task events instead (runtimeadapter.ExitSource, see exits.go): a
// death reaches its pod as fast as on Docker, and the PLEG's relist finds
// the rest.
package cri

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/internal/taskevents"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// ErrNoPodNetwork: a sandbox on the pod network (not hostNetwork) was
// asked of a runtime whose network is not ready (no CNI).
var ErrNoPodNetwork = errors.New("the runtime has no pod network (no CNI): only hostNetwork pods can run")

// Annotations the adapter keeps on what it creates.
const (
	// AnnotationImage is the image reference of the ContainerSpec.
	AnnotationImage = "io.actorlet.cri.image"
	// AnnotationNetwork is a sandbox's network: "host" or "pod".
	AnnotationNetwork = "io.actorlet.cri.network"
	// AnnotationPID is a sandbox's PID namespace: "pod" when its
	// containers share it (shareProcessNamespace), else absent.
	AnnotationPID = "io.actorlet.cri.pid"
	// LabelImplicit marks a sandbox the adapter made for one container
	// that named none (see the package doc). It has the node label and no
	// type label, so it is never listed as a container.
	LabelImplicit = "io.actorlet.cri.implicit-for"
)

// Options configure New.
type Options struct {
	// Endpoint is the runtime's CRI socket, as the kubelet's
	// --container-runtime-endpoint: "unix:///run/containerd/containerd.sock"
	// or an absolute path.
	Endpoint string
	// LogRoot is the directory of container log files (the kubelet's
	// /var/log/pods); required.
	LogRoot string
	// StateDir holds files the adapter hands the runtime by path (seccomp
	// profiles); default LogRoot/../cri-state.
	StateDir string
	// PauseImage is the sandbox image actorlet names; the runtime runs its
	// own, so EnsureImage of it does nothing.
	PauseImage string
	// Containerd, when set, is the unix socket (a path, or unix://path)
	// of the containerd serving the CRI (usually the endpoint's own
	// socket) whose task events in namespace k8s.io the Runtime follows:
	// it then implements runtimeadapter.ExitSource with a non-empty
	// ExitPath, so a container's exit reaches its pod without waiting
	// for a relist (containerd 1.6 has no CRI events). Nothing is dialled
	// before the first Exits.
	Containerd string
	// Logger; nil logs nothing.
	Logger *zap.Logger
}

// Runtime is a runtimeadapter.Runtime on a CRI v1 runtime. It also
// implements runtimeadapter.Execer, LogSource and ImageService.
type Runtime struct {
	opts Options
	conn *grpc.ClientConn
	rs   runtimeapi.RuntimeServiceClient
	is   runtimeapi.ImageServiceClient
	log  *zap.Logger

	createMu sync.Mutex
	creating map[string]*refMutex // one lock per name being created

	mu sync.Mutex
	// statuses caches what ContainerStatus said of a running or exited
	// container (a start time and an exit never change), by ID.
	statuses map[string]cached
	// sandboxDone is when a sandbox was first seen not ready (CRI keeps
	// no finish time of a sandbox).
	sandboxDone map[string]time.Time
	// ran: the newest sandbox this adapter ran per pod (node/UID), and
	// ranIDs its pod by sandbox ID; fresh: containers it created and has
	// not started (see ran.go).
	ran    map[string]*ranSandbox
	ranIDs map[string]string
	fresh  map[string]bool

	// exits follows containerd's task events (Options.Containerd; nil:
	// none; see exits.go).
	exits *taskevents.Follower
	// name is the runtime's name from its last Version (see RuntimeType).
	name atomic.Pointer[string]
}

type cached struct {
	state runtimeapi.ContainerState
	c     runtimeadapter.Container
	node  string
}

var (
	_ runtimeadapter.Runtime      = (*Runtime)(nil)
	_ runtimeadapter.Execer       = (*Runtime)(nil)
	_ runtimeadapter.LogSource    = (*Runtime)(nil)
	_ runtimeadapter.ImageService = (*Runtime)(nil)
	_ runtimeadapter.Typed        = (*Runtime)(nil)
)

// maxMsgSize bounds one gRPC message (a listing of many containers).
const maxMsgSize = 16 << 20

// New connects to the runtime at opts.Endpoint. It does not wait for the
// runtime to answer (a node agent may start before its runtime): Ping does.
func New(opts Options) (*Runtime, error) {
	target, err := Target(opts.Endpoint)
	if err != nil {
		return nil, err
	}
	if opts.LogRoot == "" {
		return nil, errors.New("cri: Options.LogRoot is empty")
	}
	if opts.LogRoot, err = filepath.Abs(opts.LogRoot); err != nil {
		return nil, fmt.Errorf("cri: log root %s: %w", opts.LogRoot, err)
	}
	if opts.StateDir == "" {
		opts.StateDir = filepath.Join(filepath.Dir(opts.LogRoot), "cri-state")
	}
	log := opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	dialOpts := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsgSize), grpc.MaxCallSendMsgSize(maxMsgSize)),
	}
	if log.Core().Enabled(zap.DebugLevel) {
		dialOpts = append(dialOpts, grpc.WithChainUnaryInterceptor(traceCalls(log)))
	}
	conn, err := grpc.NewClient(target, dialOpts...)
	if err != nil {
		return nil, fmt.Errorf("cri: endpoint %s: %w", opts.Endpoint, err)
	}
	var exits *taskevents.Follower
	if opts.Containerd != "" {
		addr, err := taskevents.Address(opts.Containerd, nil, nil)
		if err == nil {
			exits, err = taskevents.NewFollower(addr, taskevents.CRINamespace, "cri", log)
		}
		if err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("cri: containerd %s: %w", opts.Containerd, err)
		}
	}
	return &Runtime{
		opts: opts, conn: conn, log: log, exits: exits,
		rs:          runtimeapi.NewRuntimeServiceClient(conn),
		is:          runtimeapi.NewImageServiceClient(conn),
		creating:    map[string]*refMutex{},
		statuses:    map[string]cached{},
		sandboxDone: map[string]time.Time{},
		ran:         map[string]*ranSandbox{},
		ranIDs:      map[string]string{},
		fresh:       map[string]bool{},
	}, nil
}

// traceCalls logs each unary CRI call at debug level: its method, how
// long it took and its error (--log-level debug; not installed otherwise).
func traceCalls(log *zap.Logger) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		from := time.Now()
		err := invoker(ctx, method, req, reply, cc, opts...)
		log.Debug("cri call", zap.String("method", method[strings.LastIndexByte(method, '/')+1:]),
			zap.Duration("took", time.Since(from)), zap.Error(err))
		return err
	}
}

// Target turns a --container-runtime-endpoint into a gRPC target:
// "unix:///abs/path" and "/abs/path" both give "unix:///abs/path"; a
// relative path is made absolute (gRPC reads "unix://rel" as an
// authority). Other schemes are refused by name.
func Target(endpoint string) (string, error) {
	path, ok := strings.CutPrefix(endpoint, "unix://")
	if !ok {
		if strings.Contains(endpoint, "://") || endpoint == "" {
			return "", fmt.Errorf("cri: endpoint %q: want unix:///path/to/socket", endpoint)
		}
		path = endpoint
	}
	if path == "" {
		return "", fmt.Errorf("cri: endpoint %q: no socket path", endpoint)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("cri: endpoint %q: %w", endpoint, err)
	}
	return "unix://" + abs, nil
}

// Close closes the connections.
func (r *Runtime) Close() error {
	_ = r.exits.Close()
	return r.conn.Close()
}

// Ping asks the runtime its version: nil once it answers.
func (r *Runtime) Ping(ctx context.Context) error {
	_, err := r.Version(ctx)
	return err
}

// Version returns the runtime's name and version as the kubelet shows a
// node's container runtime: "containerd://1.6.20~ds1".
func (r *Runtime) Version(ctx context.Context) (string, error) {
	v, err := r.version(ctx)
	if err != nil {
		return "", err
	}
	return v.RuntimeName + "://" + v.RuntimeVersion, nil
}

// APIVersion returns the CRI version the runtime speaks ("v1").
func (r *Runtime) APIVersion(ctx context.Context) (string, error) {
	v, err := r.version(ctx)
	return v.GetRuntimeApiVersion(), err
}

// RuntimeName is the runtime's name as CRI's Version gives it
// ("containerd", "cri-o").
func (r *Runtime) RuntimeName(ctx context.Context) (string, error) {
	v, err := r.version(ctx)
	return v.GetRuntimeName(), err
}

// RuntimeType implements runtimeadapter.Typed: the runtime's name as its
// last answer to CRI's Version gave it ("containerd": container IDs in
// pod status read "containerd://<id>", as the kubelet's). List asks
// Version until it has an answer, so it is known once a List succeeded.
func (r *Runtime) RuntimeType() string {
	if p := r.name.Load(); p != nil {
		return *p
	}
	return ""
}

func (r *Runtime) version(ctx context.Context) (*runtimeapi.VersionResponse, error) {
	v, err := r.rs.Version(ctx, &runtimeapi.VersionRequest{})
	if err != nil {
		return nil, wrap(ctx, err, "CRI runtime %s: version", r.opts.Endpoint)
	}
	if n := v.GetRuntimeName(); n != "" {
		r.name.Store(&n)
	}
	return v, nil
}

// NetworkReady reports whether the runtime's pod network is ready (a CNI
// network is configured), and the runtime's message when it is not.
func (r *Runtime) NetworkReady(ctx context.Context) (bool, string, error) {
	st, err := r.rs.Status(ctx, &runtimeapi.StatusRequest{})
	if err != nil {
		return false, "", wrap(ctx, err, "CRI runtime %s: status", r.opts.Endpoint)
	}
	for _, c := range st.GetStatus().GetConditions() {
		if c.Type == runtimeapi.NetworkReady {
			if c.Status {
				return true, "", nil
			}
			return false, strings.TrimSpace(c.Reason + ": " + c.Message), nil
		}
	}
	return false, "no NetworkReady condition", nil
}

// EventsSupported reports whether the runtime serves CRI's
// GetContainerEvents (containerd 1.7+). containerd 1.6 opens the stream and
// fails its first receive with Unimplemented: false, nil. A stream that
// stays open for probe (nothing happened meanwhile) is taken as served.
func (r *Runtime) EventsSupported(ctx context.Context, probe time.Duration) (bool, error) {
	pctx, cancel := context.WithTimeout(ctx, probe)
	defer cancel()
	stream, err := r.rs.GetContainerEvents(pctx, &runtimeapi.GetEventsRequest{})
	if err == nil {
		_, err = stream.Recv()
	}
	switch {
	case err == nil:
		return true, nil
	case status.Code(err) == codes.Unimplemented:
		return false, nil
	case (pctx.Err() != nil || status.Code(err) == codes.DeadlineExceeded) && ctx.Err() == nil:
		// Open and quiet for the probe. (gRPC can end the stream with
		// DeadlineExceeded a moment before pctx itself reports it.)
		return true, nil
	default:
		return false, wrap(ctx, err, "CRI runtime %s: container events", r.opts.Endpoint)
	}
}

// wrap names what failed and wraps err with the runtimeadapter sentinel
// that applies: ErrUnavailable (and ctx's error) when ctx ended or the
// runtime could not be reached, ErrNotFound when the runtime says so.
func wrap(ctx context.Context, err error, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	if ctx != nil && ctx.Err() != nil {
		return fmt.Errorf("%s: %w: %w (%v)", what, runtimeadapter.ErrUnavailable, ctx.Err(), err)
	}
	switch status.Code(err) {
	case codes.NotFound:
		return fmt.Errorf("%s: %w (%s)", what, runtimeadapter.ErrNotFound, status.Convert(err).Message())
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		return fmt.Errorf("%s: %w: %v", what, runtimeadapter.ErrUnavailable, err)
	}
	if s, ok := status.FromError(err); ok && s.Code() != codes.OK {
		return fmt.Errorf("%s: %s", what, s.Message())
	}
	return fmt.Errorf("%s: %w", what, err)
}

// notFound is the error of a reference that names nothing.
func notFound(ref string) error {
	return fmt.Errorf("container %s: %w", ref, runtimeadapter.ErrNotFound)
}

// ctxErr fails a call whose ctx has ended before it did anything.
func ctxErr(ctx context.Context, format string, args ...any) error {
	if ctx.Err() == nil {
		return nil
	}
	return fmt.Errorf("%s: %w: %w", fmt.Sprintf(format, args...), runtimeadapter.ErrUnavailable, ctx.Err())
}

// fileExists reports whether path exists.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// refMutex is a mutex with the count of those holding or waiting for it.
type refMutex struct {
	sync.Mutex
	refs int
}

// errMessage is a gRPC error's message without its code.
func errMessage(err error) string {
	if s, ok := status.FromError(err); ok {
		return s.Message()
	}
	return err.Error()
}
