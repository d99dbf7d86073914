// Package docker is actorlet's real container runtime: an adapter from
// runtimeadapter.Runtime to the Docker Engine API
// (github.com/docker/docker/client).
//
// The client is configured from the environment (DOCKER_HOST,
// DOCKER_API_VERSION, DOCKER_CERT_PATH, DOCKER_TLS_VERIFY) and negotiates the
// API version with the daemon, so it works with engines as old as 20.10
// (API 1.41). Every error names the object it is about (container ID or name,
// image) and wraps the runtimeadapter sentinel that applies (ErrNotFound,
// ErrNameConflict, ErrUnavailable) as well as the Docker client's own error,
// so errors.Is works for both.
package docker

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/docker/docker/client"
	"go.uber.org/zap"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// Runtime is the Docker adapter. It implements runtimeadapter.Runtime,
// runtimeadapter.EventSource and runtimeadapter.LogSource and is safe for
// concurrent use. Create it with
// New and release it with Close.
type Runtime struct {
	cli *client.Client
	log *zap.Logger

	// mu guards cache, the List inspect cache (see list.go).
	mu    sync.Mutex
	cache map[string]cacheEntry

	// inspects counts ContainerInspect calls, for tests.
	inspects atomic.Int64
}

var (
	_ runtimeadapter.Runtime     = (*Runtime)(nil)
	_ runtimeadapter.EventSource = (*Runtime)(nil)
)

// New connects a Runtime to the Docker daemon named by the environment (or
// by WithHost). It does not contact the daemon: call Ping to check that it
// answers. It fails only when the environment or options are malformed.
func New(opts ...Option) (*Runtime, error) {
	o := options{log: zap.NewNop()}
	for _, opt := range opts {
		opt(&o)
	}
	copts := []client.Opt{client.FromEnv, client.WithAPIVersionNegotiation()}
	if o.host != "" {
		copts = append(copts, client.WithHost(o.host))
	}
	cli, err := client.NewClientWithOpts(copts...)
	if err != nil {
		return nil, fmt.Errorf("docker: new client: %w", err)
	}
	return &Runtime{cli: cli, log: o.log, cache: map[string]cacheEntry{}}, nil
}

// Close releases the client's idle connections. The Runtime must not be used
// afterwards.
func (r *Runtime) Close() error {
	if err := r.cli.Close(); err != nil {
		return fmt.Errorf("docker: close client: %w", err)
	}
	return nil
}

// Ping checks that the daemon answers within ctx. It wraps
// runtimeadapter.ErrUnavailable when the daemon cannot be reached.
func (r *Runtime) Ping(ctx context.Context) error {
	if _, err := r.cli.Ping(ctx); err != nil {
		return wrap(err, "ping daemon %s", r.cli.DaemonHost())
	}
	return nil
}
