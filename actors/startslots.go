package actors

import (
	"context"

	"github.com/actorlet/actorlet/internal/podsync"
)

// DefaultParallelPodStarts is how many new pods are started at once
// (Config.ParallelPodStarts, --parallel-pod-starts). A runtime given
// every pod of a burst at once starts them all about together, late:
// measured on Docker (2 cores, loaded), 20 pods' sandboxes started at
// once took 3–9 s each, so the first pod ran only after 3–6 s. Bounded,
// pods start in the order their plans came, each in about the time it
// takes alone. The bound costs throughput where the runtime's starts
// wait rather than compute (a bridge network's set-up): see
// BENCHMARKS.md section 9 for the numbers behind 4.
const DefaultParallelPodStarts = 4

// startSlots bounds the pods being started at once; nil: no bound. A
// worker whose plan makes or starts the pod's sandbox holds one slot from
// then until its sandbox and first container run (restarts of containers
// in a running sandbox take none), and lets it go while it waits for an
// image pull. Waiters are served in order (a channel's senders queue).
type startSlots chan struct{}

func newStartSlots(n int) startSlots {
	if n <= 0 {
		return nil
	}
	return make(startSlots, n)
}

// needsStartSlot reports whether a plan starts its pod: it makes or
// starts the sandbox. Kills, removals and the restart of a container in a
// running sandbox never wait for a slot.
func needsStartSlot(p podsync.Plan) bool {
	return p.CreateSandbox || p.AdoptSandboxID != ""
}

// startSlot is one worker's hold on its node's startSlots.
type startSlot struct {
	slots startSlots
	held  bool
}

// acquire takes a slot, waiting for one until ctx ends (nil: no bound, or
// already held).
func (s *startSlot) acquire(ctx context.Context) error {
	if s.slots == nil || s.held {
		return nil
	}
	select {
	case s.slots <- struct{}{}:
		s.held = true
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release gives the slot back, if held.
func (s *startSlot) release() {
	if s.held {
		<-s.slots
		s.held = false
	}
}
