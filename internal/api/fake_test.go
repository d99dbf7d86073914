package api

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// logCall records one Backend.Logs call.
type logCall struct {
	namespace, pod, container string
	previous                  bool
	opts                      runtimeadapter.LogOptions
	ctx                       context.Context
}

// fakeBackend is an in-memory Backend. Logs serves logText for the
// (namespace, pod, container) keys present, or what openLog returns.
type fakeBackend struct {
	pods    []*v1.Pod
	podsErr error
	events  []messages.Event
	health  Health
	logText map[string]string // "ns/pod/container" → log
	openLog func(ctx context.Context) (io.ReadCloser, error)

	mu    sync.Mutex
	calls []logCall
}

func (f *fakeBackend) Pods(context.Context) ([]*v1.Pod, error) { return f.pods, f.podsErr }

func (f *fakeBackend) Events(context.Context) ([]messages.Event, error) { return f.events, nil }

func (f *fakeBackend) Health(context.Context) Health { return f.health }

func (f *fakeBackend) Logs(ctx context.Context, ns, pod, ctr string, previous bool, opts runtimeadapter.LogOptions) (io.ReadCloser, error) {
	f.mu.Lock()
	f.calls = append(f.calls, logCall{ns, pod, ctr, previous, opts, ctx})
	f.mu.Unlock()
	if f.openLog != nil {
		return f.openLog(ctx)
	}
	text, ok := f.logText[ns+"/"+pod+"/"+ctr]
	if !ok {
		return nil, fmt.Errorf("container %s/%s/%s: %w", ns, pod, ctr, ErrNotFound)
	}
	return io.NopCloser(strings.NewReader(text)), nil
}

// logCalls returns a copy of the recorded Logs calls.
func (f *fakeBackend) logCalls() []logCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]logCall(nil), f.calls...)
}
