// Package api is actorlet's read-only HTTP API, the counterpart of the
// kubelet's read-only port: /healthz, /pods, /pods/{namespace}/{name},
// /events, /logs/{namespace}/{pod}/{container}, and optionally /metrics and
// /debug/pprof.
//
// The node side implements Backend; New wraps it in an http.Handler and
// Server listens, optionally with a bearer token and TLS. The handler never
// touches the host's files: everything it serves comes from Backend.
package api

import (
	"context"
	"errors"
	"io"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// ErrNotFound is returned (wrapped or not) by a Backend for an unknown pod
// or container, or a container without a previous instance; the API answers
// 404. runtimeadapter.ErrNotFound is treated the same way.
var ErrNotFound = errors.New("not found")

// Backend is what the API serves, implemented by the node side. Every method
// must honour ctx. Errors other than ErrNotFound become a 500 carrying the
// error's message.
type Backend interface {
	// Pods returns every pod with its spec and full status, sorted by
	// namespace then name. The API does not modify the returned pods.
	Pods(ctx context.Context) ([]*v1.Pod, error)
	// Events returns the recent events, oldest first.
	Events(ctx context.Context) ([]messages.Event, error)
	// Health returns the agent's health with per-check detail.
	Health(ctx context.Context) Health
	// Logs streams one container's log (stdout and stderr as one plain
	// stream) until ctx ends or, without opts.Follow, the end of the log.
	// previous selects the container's previous instance (its lastState).
	// namespace, pod and container have been validated as Kubernetes names.
	// The stream must end (Read returns an error) once ctx is done; the API
	// also closes it then.
	Logs(ctx context.Context, namespace, pod, container string, previous bool, opts runtimeadapter.LogOptions) (io.ReadCloser, error)
}

// Health is the agent's health: OK only when every check is.
type Health struct {
	OK     bool    `json:"ok"`
	Checks []Check `json:"checks"`
}

// Check is one health check's result, e.g. "runtime" (the runtime answers)
// or "relist" (the last successful relist is recent enough).
type Check struct {
	Name    string `json:"name"`
	OK      bool   `json:"ok"`
	Message string `json:"message,omitempty"`
	// Pod is "namespace/name" for a per-pod check, empty for node checks.
	Pod string `json:"pod,omitempty"`
}
