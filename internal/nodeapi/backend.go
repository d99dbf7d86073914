// Package nodeapi serves the HTTP API (internal/api) from a running node
// actor: queries become messages to the node, logs come from the runtime.
package nodeapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/api"
	"github.com/actorlet/actorlet/internal/stats"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/node"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// DefaultQueryTimeout bounds one question to the node actor.
const DefaultQueryTimeout = 5 * time.Second

// Backend implements api.Backend over a node actor.
type Backend struct {
	Root    *actor.RootContext
	Node    *actor.PID
	Runtime runtimeadapter.Runtime // for logs: must implement runtimeadapter.LogSource
	Timeout time.Duration          // per query; default DefaultQueryTimeout
	Stats   *stats.Collector       // /stats/summary, /metrics/resource, /spec; nil: not served (404)
}

var _ api.Backend = (*Backend)(nil)

// query bounds ctx by the backend's per-query timeout.
func (b *Backend) query(ctx context.Context) (context.Context, context.CancelFunc) {
	timeout := b.Timeout
	if timeout <= 0 {
		timeout = DefaultQueryTimeout
	}
	return context.WithTimeout(ctx, timeout)
}

// Pods returns every desired pod with its status.
func (b *Backend) Pods(ctx context.Context) ([]*v1.Pod, error) {
	ctx, cancel := b.query(ctx)
	defer cancel()
	return node.PodStatuses(ctx, b.Root, b.Node)
}

// Events returns the node's recent events, oldest first.
func (b *Backend) Events(ctx context.Context) ([]messages.Event, error) {
	ctx, cancel := b.query(ctx)
	defer cancel()
	return node.Events(ctx, b.Root, b.Node)
}

// Health returns the node's checks; a node that does not answer is
// unhealthy itself.
func (b *Backend) Health(ctx context.Context) api.Health {
	ctx, cancel := b.query(ctx)
	defer cancel()
	checks, err := node.Health(ctx, b.Root, b.Node)
	if err != nil {
		return api.Health{Checks: []api.Check{{Name: "node-actor", Message: err.Error()}}}
	}
	h := api.Health{OK: true}
	for _, c := range checks {
		h.Checks = append(h.Checks, api.Check{Name: c.Name, OK: c.OK, Message: c.Message, Pod: c.Pod})
		if !c.OK {
			h.OK = false
		}
	}
	return h
}

// Logs streams the log of a container of a managed pod: its current
// instance, or with previous its last terminated one.
func (b *Backend) Logs(ctx context.Context, namespace, pod, container string, previous bool, opts runtimeadapter.LogOptions) (io.ReadCloser, error) {
	ls, ok := b.Runtime.(runtimeadapter.LogSource)
	if !ok {
		return nil, errors.New("the runtime keeps no logs")
	}
	id, err := b.containerID(ctx, namespace, pod, container, previous)
	if err != nil {
		return nil, err
	}
	return ls.Logs(ctx, id, opts)
}

// containerID finds the runtime ID of a container of a managed pod: its
// current instance, or with previous its last terminated one.
func (b *Backend) containerID(ctx context.Context, namespace, pod, container string, previous bool) (string, error) {
	pods, err := b.Pods(ctx)
	if err != nil {
		return "", err
	}
	for _, p := range pods {
		if p.Namespace != namespace || p.Name != pod {
			continue
		}
		statuses := append(append([]v1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
		for _, cs := range statuses {
			if cs.Name != container {
				continue
			}
			id := cs.ContainerID
			if previous {
				id = ""
				if t := cs.LastTerminationState.Terminated; t != nil {
					id = t.ContainerID
				}
				if id == "" {
					return "", fmt.Errorf("container %s of pod %s/%s has no previous instance: %w", container, namespace, pod, api.ErrNotFound)
				}
			}
			if id == "" {
				return "", fmt.Errorf("container %s of pod %s/%s has not been created yet: %w", container, namespace, pod, api.ErrNotFound)
			}
			if i := strings.Index(id, "://"); i >= 0 {
				id = id[i+3:]
			}
			return id, nil
		}
		return "", fmt.Errorf("pod %s/%s has no container %s: %w", namespace, pod, container, api.ErrNotFound)
	}
	return "", fmt.Errorf("pod %s/%s: %w", namespace, pod, api.ErrNotFound)
}
