package cri

import (
	"context"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// WithEvents returns rt with es as its event source: the hook for an event
// stream the CRI of the runtime does not give (containerd 1.6 answers
// GetContainerEvents with Unimplemented), such as containerd's own task
// events in namespace k8s.io. es must name containers by the IDs List
// reports: containerd's container IDs are the CRI container IDs, and a
// sandbox's is its pause container's. The result implements
// runtimeadapter.EventSource besides everything rt implements, and
// Unwrap() returns rt.
func WithEvents(rt *Runtime, es runtimeadapter.EventSource) runtimeadapter.Runtime {
	return &withEvents{Runtime: rt, es: es}
}

type withEvents struct {
	*Runtime
	es runtimeadapter.EventSource
}

var _ runtimeadapter.EventSource = (*withEvents)(nil)

// Events streams es's events.
func (w *withEvents) Events(ctx context.Context, node string) (<-chan runtimeadapter.Event, <-chan error) {
	return w.es.Events(ctx, node)
}

// Unwrap returns the adapter.
func (w *withEvents) Unwrap() runtimeadapter.Runtime { return w.Runtime }
