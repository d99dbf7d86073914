package fake

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// subscription is one Events stream.
type subscription struct {
	node  string
	queue []runtimeadapter.Event // guarded by Runtime.mu
	wake  chan struct{}          // capacity 1: queue has grown
	stop  chan struct{}          // closed to break the stream
	err   error                  // why stop was closed; guarded by Runtime.mu
	// silent: the stream stays open and delivers nothing (SilenceEvents);
	// guarded by Runtime.mu. hush is closed when it turns silent.
	silent bool
	hush   chan struct{}
}

// Events streams start, die, oom and destroy events of the containers
// labelled as actorlet's for node, from the moment of the call, in the order
// they happen. Events are queued without bound, so a slow reader never
// blocks the runtime.
//
// The event channel closes when ctx ends, BreakEvents is called or the
// runtime is closed; the error channel then receives one error (wrapping
// ctx's error, the BreakEvents error, or runtimeadapter.ErrUnavailable) and
// closes too. Faults apply when the stream is opened: a failed Events call
// returns an already closed event channel and its error. Events starts one
// goroutine per stream, which ends with the stream.
func (r *Runtime) Events(ctx context.Context, node string) (<-chan runtimeadapter.Event, <-chan error) {
	out := make(chan runtimeadapter.Event)
	errc := make(chan error, 1)
	call, err := r.begin(ctx, Call{Method: MethodEvents, Arg: node})
	if err == nil {
		err = r.faultAfter(MethodEvents)
	}
	r.finish(call, err)
	if err != nil {
		errc <- err
		close(out)
		close(errc)
		return out, errc
	}

	s := &subscription{node: node, wake: make(chan struct{}, 1), stop: make(chan struct{}), hush: make(chan struct{})}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		errc <- errClosed(MethodEvents)
		close(out)
		close(errc)
		return out, errc
	}
	if r.silenceNext != 0 {
		s.silence()
		if r.silenceNext > 0 {
			r.silenceNext--
		}
	}
	r.subs[s] = struct{}{}
	r.mu.Unlock()

	go r.forward(ctx, s, out, errc)
	return out, errc
}

// forward delivers s's queued events to out until the stream ends.
func (r *Runtime) forward(ctx context.Context, s *subscription, out chan<- runtimeadapter.Event, errc chan<- error) {
	var err error
	defer func() {
		r.mu.Lock()
		delete(r.subs, s)
		s.queue = nil
		r.mu.Unlock()
		errc <- err
		close(out)
		close(errc)
	}()
	for {
		r.mu.Lock()
		batch := s.queue
		s.queue = nil
		r.mu.Unlock()
		for _, ev := range batch {
			select {
			case out <- ev:
			case <-s.hush: // SilenceEvents: the rest is dropped
			case <-ctx.Done():
				err = fmt.Errorf("fake Events: %w", ctx.Err())
				return
			case <-s.stop:
				err = r.stopErr(s)
				return
			}
		}
		select {
		case <-s.wake: // (never, once silent: nothing is queued)
		case <-ctx.Done():
			err = fmt.Errorf("fake Events: %w", ctx.Err())
			return
		case <-s.stop:
			err = r.stopErr(s)
			return
		}
	}
}

func (r *Runtime) stopErr(s *subscription) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return s.err
}

// BreakEvents ends every open Events stream as a broken connection would:
// their error channels receive an error wrapping err (nil means
// runtimeadapter.ErrUnavailable). Undelivered events are dropped. New
// streams can be opened afterwards.
func (r *Runtime) BreakEvents(err error) {
	if err == nil {
		err = runtimeadapter.ErrUnavailable
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.breakStreamsLocked(fmt.Errorf("fake Events: stream broken: %w", err))
}

func (r *Runtime) breakStreamsLocked(err error) {
	for s := range r.subs {
		if s.err == nil {
			s.err = err
			close(s.stop)
		}
	}
}

// SilenceEvents makes every open Events stream stay open and deliver
// nothing from now on, as a stream stuck in the daemon or in a proxy
// would: its events, undelivered ones included, are dropped, and nothing
// tells its reader. The next next streams opened are silent too (next <
// 0: every stream until ClearFaults; 0: streams opened later flow). A silent stream ends as any
// other does (its context, BreakEvents, Close); ClearFaults does not make
// it speak again.
func (r *Runtime) SilenceEvents(next int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for s := range r.subs {
		s.silence()
	}
	r.silenceNext = next
}

// silence turns s silent; the caller holds Runtime.mu.
func (s *subscription) silence() {
	if !s.silent {
		s.silent = true
		s.queue = nil
		close(s.hush)
	}
}

// exitCodeOf is the ExitCode of an event of kind about c: its exit code
// on a die, -1 otherwise (as Docker's events).
func exitCodeOf(kind runtimeadapter.EventKind, c *container) int {
	if kind != runtimeadapter.EventDie {
		return -1
	}
	return c.c.ExitCode
}

// publishLocked queues an event about c for every stream of c's node.
func (r *Runtime) publishLocked(kind runtimeadapter.EventKind, c *container) {
	r.version++
	if len(r.subs) == 0 {
		return
	}
	now := time.Now()
	for s := range r.subs {
		if s.err != nil || s.silent || !runtimeadapter.IsManaged(c.c.Labels, s.node) {
			continue
		}
		s.queue = append(s.queue, runtimeadapter.Event{
			Kind:        kind,
			ContainerID: c.c.ID,
			Labels:      maps.Clone(c.c.Labels),
			Time:        now,
			ExitCode:    exitCodeOf(kind, c),
		})
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}
