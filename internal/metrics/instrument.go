package metrics

import (
	"context"
	"io"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// InstrumentRuntime returns rt with every call timed and its errors counted
// in m (see ObserveRuntimeOp), by operation: list, inspect, ensure_image,
// create, start, stop, remove and, when rt is a runtimeadapter.LogSource,
// logs (opening the stream). Results and errors pass through unchanged.
//
// The returned Runtime implements runtimeadapter.EventSource exactly when
// rt does (Events passes through, untimed: it is a stream) and
// runtimeadapter.LogSource exactly when rt does, so type assertions on it
// answer as they would on rt. It also has a method
//
//	Unwrap() runtimeadapter.Runtime
//
// returning rt, for callers that need rt's own methods (e.g. Ping or Close
// of *docker.Runtime). A nil m or nil rt returns rt itself.
func InstrumentRuntime(rt runtimeadapter.Runtime, m *Metrics) runtimeadapter.Runtime {
	if rt == nil || m == nil {
		return rt
	}
	base := &instrumented{rt: rt, m: m}
	es, hasEvents := rt.(runtimeadapter.EventSource)
	ls, hasLogs := rt.(runtimeadapter.LogSource)
	switch {
	case hasEvents && hasLogs:
		return &instrumentedEventsLogs{base, events{es}, logs{ls, m}}
	case hasEvents:
		return &instrumentedEvents{base, events{es}}
	case hasLogs:
		return &instrumentedLogs{base, logs{ls, m}}
	default:
		return base
	}
}

// The wrapper types, one per combination of optional interfaces.
type (
	instrumentedEvents struct {
		*instrumented
		events
	}
	instrumentedLogs struct {
		*instrumented
		logs
	}
	instrumentedEventsLogs struct {
		*instrumented
		events
		logs
	}
)

var (
	_ runtimeadapter.EventSource = (*instrumentedEvents)(nil)
	_ runtimeadapter.LogSource   = (*instrumentedLogs)(nil)
	_ runtimeadapter.EventSource = (*instrumentedEventsLogs)(nil)
	_ runtimeadapter.LogSource   = (*instrumentedEventsLogs)(nil)
)

// instrumented times the methods of runtimeadapter.Runtime.
type instrumented struct {
	rt runtimeadapter.Runtime
	m  *Metrics
}

// Unwrap returns the instrumented runtime.
func (i *instrumented) Unwrap() runtimeadapter.Runtime { return i.rt }

// observe records an operation that started at start.
func (i *instrumented) observe(op string, start time.Time, err error) {
	i.m.ObserveRuntimeOp(op, time.Since(start), err)
}

func (i *instrumented) List(ctx context.Context, opts runtimeadapter.ListOptions) (runtimeadapter.ListResult, error) {
	start := time.Now()
	res, err := i.rt.List(ctx, opts)
	i.observe(OpList, start, err)
	return res, err
}

func (i *instrumented) Inspect(ctx context.Context, id string) (runtimeadapter.Container, error) {
	start := time.Now()
	c, err := i.rt.Inspect(ctx, id)
	i.observe(OpInspect, start, err)
	return c, err
}

func (i *instrumented) EnsureImage(ctx context.Context, image string) error {
	start := time.Now()
	err := i.rt.EnsureImage(ctx, image)
	i.observe(OpEnsureImage, start, err)
	return err
}

func (i *instrumented) Create(ctx context.Context, spec runtimeadapter.ContainerSpec) (string, error) {
	start := time.Now()
	id, err := i.rt.Create(ctx, spec)
	i.observe(OpCreate, start, err)
	return id, err
}

func (i *instrumented) Start(ctx context.Context, id string) error {
	start := time.Now()
	err := i.rt.Start(ctx, id)
	i.observe(OpStart, start, err)
	return err
}

func (i *instrumented) Stop(ctx context.Context, id string, grace time.Duration) error {
	start := time.Now()
	err := i.rt.Stop(ctx, id, grace)
	i.observe(OpStop, start, err)
	return err
}

func (i *instrumented) Remove(ctx context.Context, id string) error {
	start := time.Now()
	err := i.rt.Remove(ctx, id)
	i.observe(OpRemove, start, err)
	return err
}

// events passes Events through.
type events struct {
	src runtimeadapter.EventSource
}

func (e events) Events(ctx context.Context, node string) (<-chan runtimeadapter.Event, <-chan error) {
	return e.src.Events(ctx, node)
}

// logs times opening a log stream.
type logs struct {
	src runtimeadapter.LogSource
	m   *Metrics
}

func (l logs) Logs(ctx context.Context, id string, opts runtimeadapter.LogOptions) (io.ReadCloser, error) {
	start := time.Now()
	rc, err := l.src.Logs(ctx, id, opts)
	l.m.ObserveRuntimeOp(OpLogs, time.Since(start), err)
	return rc, err
}
