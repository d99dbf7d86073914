// Package supervision holds the policies that decide when things are tried
// again in actorlet's tree: CrashLoopBackOff for containers and the
// supervisor strategy for pod actors.
package supervision

import (
	"time"

	"github.com/cenkalti/backoff/v4"
)

// Kubernetes' CrashLoopBackOff curve, as the kubelet and its documentation
// describe it: a restart after an exit waits 10 s, then 20 s, 40 s … capped
// at 300 s, and the delay resets once a container has run 600 s.
const (
	DefaultBackoffInitial    = 10 * time.Second
	DefaultBackoffMax        = 300 * time.Second
	DefaultBackoffResetAfter = 600 * time.Second
)

// BackoffPolicy shapes CrashLoopBackOff. Initial and Max both 0 means
// "restart at once". Max 0 with Initial > 0 means uncapped doubling.
type BackoffPolicy struct {
	Initial    time.Duration // delay before the first restart (default 10 s)
	Max        time.Duration // cap (default 300 s)
	ResetAfter time.Duration // a run at least this long resets the delay (default 600 s)
}

// DefaultBackoffPolicy is the kubelet's curve: 10 s doubling to 300 s,
// reset after 600 s of running.
func DefaultBackoffPolicy() BackoffPolicy {
	return BackoffPolicy{Initial: DefaultBackoffInitial, Max: DefaultBackoffMax, ResetAfter: DefaultBackoffResetAfter}
}

// CrashLoop tracks the restart delay of one container (one name and spec
// hash in one pod). It is built on cenkalti/backoff's ExponentialBackOff with
// no randomization and MaxElapsedTime 0, so it never gives up.
//
// Observe is idempotent per exited instance: the delay advances once per
// distinct exit, however often the same exit is looked at.
type CrashLoop struct {
	policy   BackoffPolicy
	b        *backoff.ExponentialBackOff
	lastExit string    // ID of the exited instance the deadline belongs to
	deadline time.Time // when that instance may be restarted
	delay    time.Duration
}

// NewCrashLoop returns the backoff record of one container.
func NewCrashLoop(p BackoffPolicy) *CrashLoop {
	b := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(p.Initial),
		backoff.WithMultiplier(2),
		backoff.WithRandomizationFactor(0),
		backoff.WithMaxElapsedTime(0), // the 15 min default would stop backing off
	)
	if p.Max > 0 {
		b.MaxInterval = p.Max
	} else {
		b.MaxInterval = time.Duration(1<<62 - 1)
	}
	b.Reset()
	return &CrashLoop{policy: p, b: b}
}

// Observe records that instance id ran from startedAt until finishedAt and
// returns the earliest time its replacement may start: finishedAt plus the
// current delay. A run of at least ResetAfter resets the delay to Initial
// first. Calling Observe again for the same id returns the same deadline.
func (c *CrashLoop) Observe(id string, startedAt, finishedAt time.Time) time.Time {
	if id == c.lastExit && c.lastExit != "" {
		// The same exit again, perhaps with a more exact finish time (a
		// die event's time comes a little after the runtime's own
		// FinishedAt): the deadline counts from the earliest.
		if !finishedAt.IsZero() && finishedAt.Add(c.delay).Before(c.deadline) {
			c.deadline = finishedAt.Add(c.delay)
		}
		return c.deadline
	}
	if c.policy.ResetAfter > 0 && !startedAt.IsZero() && finishedAt.Sub(startedAt) >= c.policy.ResetAfter {
		c.b.Reset()
	}
	d := c.b.NextBackOff()
	if d == backoff.Stop || d < 0 { // cannot happen with MaxElapsedTime 0; be safe
		d = c.b.MaxInterval
	}
	if c.policy.Max > 0 && d > c.policy.Max {
		d = c.policy.Max
	}
	c.lastExit, c.delay, c.deadline = id, d, finishedAt.Add(d)
	return c.deadline
}

// Delay is the delay that applied to the last observed exit.
func (c *CrashLoop) Delay() time.Duration { return c.delay }
