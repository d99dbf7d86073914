package actors

import (
	"context"

	"github.com/actorlet/actorlet/internal/podsync"
)

// DefaultParallelPodStarts is how many pods' sandboxes and containers are
// started at once (Config.ParallelPodStarts, --parallel-pod-starts). A
// runtime given every pod of a burst at once starts them all about
// together, late: measured on Docker (2 cores), 20 pods' sandboxes
// started at once took 4–9 s each, so the first pod ran only after
// 4 s. Bounded, pods start in the order their plans came, each in
// about the time it takes alone, and the runtime's throughput is the
// same. 4 keeps a 2-core machine's runtime busy (its calls wait on the
// kernel and on runc as much as on the CPU).
const DefaultParallelPodStarts = 4

// startSlots bounds the pods whose plans are starting something at once;
// nil: no bound. A worker holds one slot from its plan's first start
// (its sandbox, or a container) to its last, and lets it go while it
// waits for an image pull. Waiters are served in order (a channel's
// senders queue).
type startSlots chan struct{}

func newStartSlots(n int) startSlots {
	if n <= 0 {
		return nil
	}
	return make(startSlots, n)
}

// needsStartSlot reports whether a plan starts something: a sandbox
// (created or adopted) or a container. Kills and removals never wait for
// a slot.
func needsStartSlot(p podsync.Plan) bool {
	return p.CreateSandbox || p.AdoptSandboxID != "" || len(p.Start) > 0
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
