// Package docker is actorlet's real container runtime: an adapter from
// runtimeadapter.Runtime to the Docker Engine API
// (github.com/docker/docker/client).
//
// The client is configured from the environment (DOCKER_HOST,
// DOCKER_API_VERSION, DOCKER_CERT_PATH, DOCKER_TLS_VERIFY) and negotiates
// the API version with the daemon once, before its first call (see New),
// so it works with engines as old as 20.10 (API 1.41). Every error names
// the object it is about (container ID or name, image) and wraps the
// runtimeadapter sentinel that applies (ErrNotFound, ErrNameConflict,
// ErrUnavailable) as well as the Docker client's own error, so errors.Is
// works for both.
package docker

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docker/docker/client"
	"go.uber.org/zap"

	"github.com/actorlet/actorlet/internal/taskevents"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// Runtime is the Docker adapter. It implements runtimeadapter.Runtime,
// runtimeadapter.EventSource and runtimeadapter.LogSource and is safe for
// concurrent use. Create it with
// New and release it with Close.
type Runtime struct {
	// cli is used only through api, which negotiates the API version
	// first (Close and DaemonHost excepted).
	cli *client.Client
	log *zap.Logger

	// negotiated is set once the API version is negotiated; negotiating
	// (one slot) lets one goroutine at a time try.
	negotiated  atomic.Bool
	negotiating chan struct{}

	// inspectTimeout bounds each inspect List makes (see WithInspectTimeout).
	inspectTimeout time.Duration

	// local: images built here when missing (see WithLocalImage);
	// building (one slot) lets one goroutine at a time build one.
	local    map[string]LocalImage
	building chan struct{}

	// mu guards cache, the List inspect cache (see list.go).
	mu    sync.Mutex
	cache map[string]cacheEntry

	// inspects counts ContainerInspect calls, for tests.
	inspects atomic.Int64

	// exits follows Docker's containerd (WithContainerd; nil: none; see
	// exits.go).
	exits *taskevents.Follower
}

var (
	_ runtimeadapter.Runtime           = (*Runtime)(nil)
	_ runtimeadapter.EventSource       = (*Runtime)(nil)
	_ runtimeadapter.ExitSource        = (*Runtime)(nil)
	_ runtimeadapter.Typed             = (*Runtime)(nil)
	_ runtimeadapter.SandboxContainers = (*Runtime)(nil)
)

// negotiateTimeout bounds the API version negotiation New makes.
const negotiateTimeout = 5 * time.Second

// New connects a Runtime to the Docker daemon named by the environment (or
// by WithHost) and negotiates the API version with it: one ping, bounded
// by 5 s, before New returns. It fails only when the environment or
// options are malformed: a daemon that does not answer is no error here
// (call Ping to check that it answers).
//
// The API version is negotiated exactly once, never concurrently with
// another call: the Docker client would otherwise negotiate on its first
// versioned call and write its version while concurrent calls (Events and
// List of the PLEG) read it. If the daemon did not answer New's ping, the
// first calls negotiate, one at a time, and every call fails with
// runtimeadapter.ErrUnavailable, without reaching the daemon, until a
// negotiation succeeds. DOCKER_API_VERSION fixes the version instead (the
// ping is still made).
func New(opts ...Option) (*Runtime, error) {
	o := options{log: zap.NewNop(), inspectTimeout: DefaultInspectTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	// No client.WithAPIVersionNegotiation: api negotiates, and the client
	// must never do it on its own.
	copts := []client.Opt{client.FromEnv}
	if o.host != "" {
		copts = append(copts, client.WithHost(o.host))
	}
	cli, err := client.NewClientWithOpts(copts...)
	if err != nil {
		return nil, fmt.Errorf("docker: new client: %w", err)
	}
	r := &Runtime{
		cli: cli, log: o.log, cache: map[string]cacheEntry{},
		negotiating: make(chan struct{}, 1), inspectTimeout: o.inspectTimeout,
		local: o.local, building: make(chan struct{}, 1),
	}
	if o.containerd != "" {
		exits, err := taskevents.NewFollower(o.containerd, taskevents.DockerNamespace, "docker", o.log)
		if err != nil {
			_ = cli.Close()
			return nil, err
		}
		r.exits = exits
	}
	if !o.lazy {
		ctx, cancel := context.WithTimeout(context.Background(), negotiateTimeout)
		defer cancel()
		if _, err := r.negotiate(ctx); err != nil {
			r.log.Debug("docker: API version not negotiated yet; the first call will", zap.Error(err))
		}
	}
	return r, nil
}

// api returns the client once the API version is negotiated (see New),
// negotiating first if need be. Its error wraps
// runtimeadapter.ErrUnavailable (and ctx's error when ctx ended first).
func (r *Runtime) api(ctx context.Context) (*client.Client, error) {
	if _, err := r.negotiate(ctx); err != nil {
		return nil, err
	}
	return r.cli, nil
}

// negotiate pings the daemon and sets the client's API version from the
// answer, unless that was done already; it reports whether it did it now.
// One goroutine negotiates at a time; the others wait for it (within
// their ctx) and then see its result.
func (r *Runtime) negotiate(ctx context.Context) (bool, error) {
	if r.negotiated.Load() {
		return false, nil
	}
	select {
	case r.negotiating <- struct{}{}:
		defer func() { <-r.negotiating }()
	case <-ctx.Done():
		return false, fmt.Errorf("negotiate API version with daemon %s: %w: %w", r.cli.DaemonHost(), runtimeadapter.ErrUnavailable, ctx.Err())
	}
	if r.negotiated.Load() {
		return false, nil
	}
	ping, err := r.cli.Ping(ctx)
	if err != nil {
		return false, fmt.Errorf("negotiate API version with daemon %s: %w: %w", r.cli.DaemonHost(), runtimeadapter.ErrUnavailable, err)
	}
	r.cli.NegotiateAPIVersionPing(ping)
	r.negotiated.Store(true)
	r.log.Debug("docker: negotiated API version", zap.String("version", r.cli.ClientVersion()), zap.String("daemon", ping.APIVersion))
	return true, nil
}

// Close releases the client's idle connections. The Runtime must not be used
// afterwards.
func (r *Runtime) Close() error {
	_ = r.exits.Close()
	if err := r.cli.Close(); err != nil {
		return fmt.Errorf("docker: close client: %w", err)
	}
	return nil
}

// Ping checks that the daemon answers within ctx (negotiating the API
// version if New could not). It wraps runtimeadapter.ErrUnavailable when
// the daemon cannot be reached.
func (r *Runtime) Ping(ctx context.Context) error {
	now, err := r.negotiate(ctx)
	if err != nil {
		return fmt.Errorf("docker: ping daemon: %w", err)
	}
	if now {
		return nil // negotiate pinged
	}
	if _, err := r.cli.Ping(ctx); err != nil {
		return wrap(err, "ping daemon %s", r.cli.DaemonHost())
	}
	return nil
}

// RuntimeType implements runtimeadapter.Typed: container IDs in pod
// status read "docker://<id>".
func (r *Runtime) RuntimeType() string { return "docker" }

// SandboxIsContainer implements runtimeadapter.SandboxContainers: a
// sandbox is a container of the pause image; the pod's containers join
// its namespaces by ID (ContainerSpec.NetworkMode, PidMode).
func (r *Runtime) SandboxIsContainer() bool { return true }

// Version returns the daemon's name and version as the kubelet shows a
// node's container runtime: "docker://28.5.2".
func (r *Runtime) Version(ctx context.Context) (string, error) {
	cli, err := r.api(ctx)
	if err != nil {
		return "", fmt.Errorf("docker: version: %w", err)
	}
	v, err := cli.ServerVersion(ctx)
	if err != nil {
		return "", wrap(err, "version of daemon %s", cli.DaemonHost())
	}
	return "docker://" + v.Version, nil
}
