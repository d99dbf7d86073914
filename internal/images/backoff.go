package images

import (
	"time"

	"github.com/cenkalti/backoff/v4"
)

// The kubelet's image pull back-off: 10 s doubling to 300 s.
const (
	DefaultBackOffInitial = 10 * time.Second
	DefaultBackOffMax     = 300 * time.Second
)

// pullBackOff is the back-off record of one image. It is built on
// cenkalti/backoff's ExponentialBackOff with no randomization and
// MaxElapsedTime 0 (it never gives up), as supervision.CrashLoop is.
// It is not safe for concurrent use: the Manager guards it.
type pullBackOff struct {
	b           *backoff.ExponentialBackOff
	max         time.Duration
	until       time.Time // no pull before this
	lastFailure time.Time // when the last failed pull ended
	last        error     // the runtime's error of that pull
}

// newPullBackOff returns a record whose first delay is initial, doubling
// up to maxDelay.
func newPullBackOff(initial, maxDelay time.Duration) *pullBackOff {
	b := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(initial),
		backoff.WithMultiplier(2),
		backoff.WithMaxInterval(maxDelay),
		backoff.WithRandomizationFactor(0),
		backoff.WithMaxElapsedTime(0), // the 15 min default would stop backing off
	)
	b.Reset()
	return &pullBackOff{b: b, max: maxDelay}
}

// fail records a pull that failed with err at now and returns the time
// the next pull is allowed: now plus the next delay. A record whose last
// failure is older than twice the cap starts over at the initial delay,
// as the kubelet's does.
func (p *pullBackOff) fail(now time.Time, err error) time.Time {
	if p.expired(now) {
		p.b.Reset()
	}
	d := p.b.NextBackOff()
	if d == backoff.Stop || d < 0 || d > p.max { // Stop cannot happen with MaxElapsedTime 0; be safe
		d = p.max
	}
	p.until, p.lastFailure, p.last = now.Add(d), now, err
	return p.until
}

// active reports whether a pull must wait at now.
func (p *pullBackOff) active(now time.Time) bool { return now.Before(p.until) }

// expired reports whether the record is old enough at now to be forgotten:
// its last failure is more than twice the cap ago.
func (p *pullBackOff) expired(now time.Time) bool {
	return !p.lastFailure.IsZero() && now.Sub(p.lastFailure) > 2*p.max
}
