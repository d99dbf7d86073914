package runtimetest

import (
	"context"
	"errors"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// eventCases: the PLEG's event stream (runtimeadapter.EventSource) reports
// start, die and destroy of its node's containers, by the ID List
// reports, with the die's exit code; it judges a stream by the changes
// its relists find that no event reported, so a missing event is a fault.
var eventCases = []testCase{
	{"StartDieDestroy", func(e *env) {
		s := e.events()
		id := e.run(e.app("app", Workload{Exits: true, ExitCode: 3, ExitAfter: shortExit}))
		start := s.next(id, runtimeadapter.EventStart)
		die := s.next(id, runtimeadapter.EventDie)
		if die.ExitCode != 3 {
			e.t.Errorf("die event exit code %d, want 3", die.ExitCode)
		}
		if die.Time.Before(start.Time) {
			e.t.Errorf("die at %v before start at %v", die.Time, start.Time)
		}
		if err := e.Runtime.Remove(e.ctx, id); err != nil {
			e.t.Fatal(err)
		}
		s.next(id, runtimeadapter.EventDestroy)
	}},
	{"StopAndRemoveOfARunningContainer", func(e *env) {
		s := e.events()
		stopped := e.run(e.app("stopped", Workload{}))
		removed := e.run(e.app("removed", Workload{IgnoreSIGTERM: true}))
		s.next(stopped, runtimeadapter.EventStart)
		s.next(removed, runtimeadapter.EventStart)
		e.ready(stopped)
		if err := e.Runtime.Stop(e.ctx, stopped, grace); err != nil {
			e.t.Fatal(err)
		}
		if ev := s.next(stopped, runtimeadapter.EventDie); ev.ExitCode != 0 {
			e.t.Errorf("die event of a stopped container: exit code %d, want 0", ev.ExitCode)
		}
		if err := e.Runtime.Remove(e.ctx, removed); err != nil {
			e.t.Fatal(err)
		}
		if ev := s.next(removed, runtimeadapter.EventDie); ev.ExitCode != 137 {
			e.t.Errorf("die event of a removed running container: exit code %d, want 137", ev.ExitCode)
		}
		s.next(removed, runtimeadapter.EventDestroy)
	}},
	{"StreamIsOpenWhenEventsReturns", func(e *env) {
		id := e.create(e.app("app", Workload{}))
		s := e.events()
		// Nothing between the return and the start: an event lost
		// because the stream was not open yet fails the test.
		if err := e.Runtime.Start(e.ctx, id); err != nil {
			e.t.Fatal(err)
		}
		s.next(id, runtimeadapter.EventStart)
	}},
	{"FailedStartEmitsNothingAndRemoveDestroys", func(e *env) {
		s := e.events()
		broken := e.create(e.app("broken", Workload{CannotStart: true}))
		if err := e.Runtime.Start(e.ctx, broken); err == nil {
			e.t.Fatal("start of a container whose command does not exist: nil error")
		}
		// Docker emits neither start nor die for it: the relist sees
		// the failed start (Container.Error), not the stream.
		marker := e.run(e.app("marker", Workload{}))
		s.next(marker, runtimeadapter.EventStart, broken)
		if err := e.Runtime.Remove(e.ctx, broken); err != nil {
			e.t.Fatal(err)
		}
		s.next(broken, runtimeadapter.EventDestroy)
	}},
	{"OnlyTheNodesContainers", func(e *env) {
		s := e.events()
		other := e.run(e.spec(pod{node: e.otherNode(), name: "p", uid: e.otherNode() + "-p"}, "app", runtimeadapter.TypeApp, Workload{}))
		partial := e.app("partial", Workload{})
		delete(partial.Labels, runtimeadapter.LabelContainerType)
		partialID := e.run(partial)
		mine := e.run(e.app("app", Workload{}))
		// Events come in order: once mine's start is seen, the others'
		// starts (earlier) would have been.
		ev := s.next(mine, runtimeadapter.EventStart, other, partialID)
		checkLabels(e.t, "start event", ev.Labels, e.inspect(mine).Labels)
	}},
	{"EndsWithItsContext", func(e *env) {
		es, ok := e.Runtime.(runtimeadapter.EventSource)
		if !ok {
			e.t.Skip("runtime does not implement runtimeadapter.EventSource")
		}
		ctx, cancel := context.WithCancel(e.ctx)
		events, errs := es.Events(ctx, e.Node)
		cancel()
		deadline := time.After(waitTimeout)
		for open := true; open; {
			select {
			case _, open = <-events:
			case <-deadline:
				e.t.Fatal("event channel still open after its context ended")
			}
		}
		select {
		case err := <-errs:
			if !errors.Is(err, context.Canceled) {
				e.t.Errorf("error after cancel: %v, want context.Canceled", err)
			}
		case <-deadline:
			e.t.Fatal("no error after the context ended")
		}
	}},
}

// stream is an open event stream of the subtest's node.
type stream struct {
	e       *env
	events  <-chan runtimeadapter.Event
	errs    <-chan error
	pending []runtimeadapter.Event // received, not yet returned by next
}

// events opens a stream of the subtest's node, closed at the end; it
// skips the test when the runtime has no events.
func (e *env) events() *stream {
	es, ok := e.Runtime.(runtimeadapter.EventSource)
	if !ok {
		e.t.Skip("runtime does not implement runtimeadapter.EventSource")
	}
	ctx, cancel := context.WithCancel(e.ctx)
	e.t.Cleanup(cancel)
	events, errs := es.Events(ctx, e.Node)
	return &stream{e: e, events: events, errs: errs}
}

// next returns the first event about id of kind, failing the test on any
// event about a container of forbidden, or when none comes in time.
// Events of one container must come in order (start, then die, then
// destroy); events of other containers are kept for later calls.
func (s *stream) next(id string, kind runtimeadapter.EventKind, forbidden ...string) runtimeadapter.Event {
	s.e.t.Helper()
	deadline := time.After(waitTimeout)
	for i := 0; ; i++ {
		for i >= len(s.pending) {
			select {
			case ev, ok := <-s.events:
				if !ok {
					s.e.t.Fatalf("event stream closed waiting for %s of %s: %v", kind, id, <-s.errs)
				}
				s.check(ev, forbidden)
				s.pending = append(s.pending, ev)
			case <-deadline:
				s.e.t.Fatalf("no %s event of %s within %v (others: %+v)", kind, id, waitTimeout, s.pending)
			}
		}
		ev := s.pending[i]
		if ev.ContainerID != id {
			continue
		}
		if ev.Kind == kind {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			return ev
		}
		if rank(ev.Kind) > rank(kind) {
			s.e.t.Fatalf("%s of %s came before its %s", ev.Kind, id, kind)
		}
	}
}

// check fails the test if ev is not a well-formed event of the node.
func (s *stream) check(ev runtimeadapter.Event, forbidden []string) {
	s.e.t.Helper()
	for _, f := range forbidden {
		if ev.ContainerID == f {
			s.e.t.Errorf("event of a container not of the node: %+v", ev)
		}
	}
	if ev.Time.IsZero() {
		s.e.t.Errorf("event without a time: %+v", ev)
	}
	if ev.Kind != runtimeadapter.EventDie && ev.ExitCode != -1 {
		s.e.t.Errorf("%s event with exit code %d, want -1", ev.Kind, ev.ExitCode)
	}
	if ev.Labels[runtimeadapter.LabelNode] != s.e.Node {
		s.e.t.Errorf("event without the node's label: %+v", ev)
	}
}

// rank orders a container's events.
func rank(k runtimeadapter.EventKind) int {
	switch k {
	case runtimeadapter.EventStart:
		return 0
	case runtimeadapter.EventOOM, runtimeadapter.EventDie:
		return 1
	default:
		return 2
	}
}
