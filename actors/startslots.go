package actors

import (
	"context"
	"slices"
	"sync"

	"github.com/actorlet/actorlet/internal/podsync"
)

// DefaultParallelPodStarts is how many new pods are started at once at
// the beginning of a burst (Config.ParallelPodStarts,
// --parallel-pod-starts; the bound then grows, see startSlots). A runtime
// given every pod of a burst at once starts them all about together,
// late: measured on Docker (2 cores, loaded), 20 pods' sandboxes started
// at once took 3–9 s each, so the first pod ran only after 3–6 s. A fixed
// bound of 4 made the first run within about 1 s but the last of 50
// bridge-network pods later than with no bound (43–77 s against 26 s);
// growing the bound keeps both. Starting from 2 rather than 4, 20
// host-network pods' first ran at 0.64 s against 1.06 s (median), but 50
// bridge-network pods took 1.64× the CLI script against 0.81× and 0.57×
// (the base: 0.91–1.00×): 4 keeps the long burst (BENCHMARKS.md
// section 9).
const DefaultParallelPodStarts = 4

// startSlots bounds the pods being started at once; nil: no bound. A
// worker whose plan makes or starts the pod's sandbox holds one slot from
// then until its sandbox and first container run (restarts of containers
// in a running sandbox take none; a container started beside its sandbox
// gives it back once its start is issued, see startOrder), and lets it go
// while it waits for an image pull. Waiters are served in order. The
// bound starts at its initial value and grows by one each time a pod's
// start ends (TCP's slow start): the first pods of a burst start nearly alone, and a long burst
// soon runs as wide as the runtime allows (a runtime whose starts wait
// rather than compute, a bridge network's set-up, starts more at once
// than it would a few at a time). When no pod is starting or waiting,
// the bound is back to its initial value.
type startSlots struct {
	mu      sync.Mutex
	st      slotState
	waiters []chan struct{} // in order; closed when granted
}

// slotState is startSlots' arithmetic, pure.
type slotState struct {
	initial, limit, held, waiting int
}

// take reports whether a slot is free for a newcomer (none waits before
// it), and takes it.
func (s *slotState) take() bool {
	if s.waiting > 0 || s.held >= s.limit {
		s.waiting++
		return false
	}
	s.held++
	return true
}

// give gives a slot back (done: a pod's start ended, the bound grows) and
// returns how many waiters, first first, now get one.
func (s *slotState) give(done bool) int {
	s.held--
	if done {
		s.limit++
	}
	if s.held == 0 && s.waiting == 0 {
		s.limit = s.initial // the burst is over
	}
	n := min(max(s.limit-s.held, 0), s.waiting)
	s.held += n
	s.waiting -= n
	return n
}

func newStartSlots(n int) *startSlots {
	if n <= 0 {
		return nil
	}
	return &startSlots{st: slotState{initial: n, limit: n}}
}

// acquire takes a slot, waiting in order until one is free or ctx ends.
func (s *startSlots) acquire(ctx context.Context) error {
	s.mu.Lock()
	if s.st.take() {
		s.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	s.waiters = append(s.waiters, ch)
	s.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	if i := slices.Index(s.waiters, ch); i >= 0 {
		s.waiters = slices.Delete(s.waiters, i, i+1)
		s.st.waiting--
		s.mu.Unlock()
		return ctx.Err()
	}
	s.mu.Unlock()
	s.release(false) // granted as ctx ended: give it on
	return ctx.Err()
}

// release gives a slot back (done: a pod's start ended).
func (s *startSlots) release(done bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.st.give(done)
	for _, ch := range s.waiters[:n] {
		close(ch)
	}
	s.waiters = s.waiters[n:]
	if len(s.waiters) == 0 {
		// The array a burst's waiters grew (10,000 pods starting) is
		// not kept behind an empty slice.
		s.waiters = nil
	}
}

// needsStartSlot reports whether a plan starts its pod: it makes or
// starts the sandbox. Kills, removals and the restart of a container in a
// running sandbox never wait for a slot.
func needsStartSlot(p podsync.Plan) bool {
	return p.CreateSandbox || p.AdoptSandboxID != ""
}

// startSlot is one worker's hold on its node's startSlots.
type startSlot struct {
	slots *startSlots
	held  bool
}

// acquire takes a slot, waiting for one until ctx ends (nil: no bound, or
// already held).
func (s *startSlot) acquire(ctx context.Context) error {
	if s.slots == nil || s.held {
		return nil
	}
	if err := s.slots.acquire(ctx); err != nil {
		return err
	}
	s.held = true
	return nil
}

// release gives the slot back, if held; done: the pod's start ended (its
// sandbox and first container run, or failed), not a pause for a pull.
func (s *startSlot) release(done bool) {
	if s.held {
		s.slots.release(done)
		s.held = false
	}
}

// startOrder puts, in a burst, the app starts of pods that start their
// app beside their sandbox (podsync's Plan.StartBeside: a host-network
// pod that joins nothing of its sandbox) before those pods' sandbox
// starts: such a pod's sandbox is created, its app created and started
// as now, and the sandbox's start then waits until every such app
// registered before it asked (the burst's other pods, queued for a start
// slot or being created) has started, begun an image pull, or will not
// start now. The runtime's starts thus go to the apps first — the first
// pod of a burst no longer waits for the others' sandboxes, and the last
// app for every sandbox — and the sandboxes follow. Bounded: a sandbox
// waits only for the apps registered before its own start was asked
// for, never for later pods, and each of those ends its wait within its
// own create and start. The app's events, postStart hook and the pod's
// status still come once the sandbox runs.
type startOrder struct {
	mu      sync.Mutex
	st      orderState
	changed chan struct{} // closed and replaced when an app is done
}

func newStartOrder() *startOrder {
	return &startOrder{changed: make(chan struct{})}
}

// orderState is startOrder's arithmetic, pure: a ticket per app that
// starts beside its sandbox, in the order asked, and the tickets whose
// app has not started yet.
type orderState struct {
	next    uint64
	pending []uint64 // ascending
}

// register hands out the next ticket, pending.
func (s *orderState) register() uint64 {
	t := s.next
	s.next++
	s.pending = append(s.pending, t)
	return t
}

// done ends ticket t's wait (its app started, is pulling its image, or
// will not start now); done twice is done once.
func (s *orderState) done(t uint64) bool {
	i, ok := slices.BinarySearch(s.pending, t)
	if ok {
		s.pending = slices.Delete(s.pending, i, i+1)
	}
	return ok
}

// bar is the barrier of a sandbox start asked for now: it waits for the
// apps of the tickets below it.
func (s *orderState) bar() uint64 { return s.next }

// ahead is how many apps a sandbox start barred at bar waits for, its
// own pod's (ticket own) aside: pending tickets below bar.
func (s *orderState) ahead(bar, own uint64) int {
	n := 0
	for _, t := range s.pending {
		if t >= bar {
			break
		}
		if t != own {
			n++
		}
	}
	return n
}

// register hands out a ticket for an app about to start beside its
// sandbox.
func (o *startOrder) register() uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.st.register()
}

// done ends ticket t's wait.
func (o *startOrder) done(t uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.st.done(t) {
		close(o.changed)
		o.changed = make(chan struct{})
	}
}

// bar is the barrier of a sandbox start asked for now (see orderState)
// and how many apps it waits for.
func (o *startOrder) bar(own uint64) (bar uint64, ahead int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	bar = o.st.bar()
	return bar, o.st.ahead(bar, own)
}

// wait returns once no app registered below bar, other than own's,
// waits to start, or when ctx ends.
func (o *startOrder) wait(ctx context.Context, bar, own uint64) error {
	for {
		o.mu.Lock()
		n, ch := o.st.ahead(bar, own), o.changed
		o.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
