package images

import (
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// DefaultPullTimeout bounds one pull (all its callers share it).
const DefaultPullTimeout = 10 * time.Minute

// Option configures a Manager in New.
type Option func(*options)

type options struct {
	now          func() time.Time
	initial, max time.Duration
	pullTimeout  time.Duration
	progress     func(ref string, p runtimeadapter.PullProgress)
}

func defaultOptions() options {
	return options{
		now:         time.Now,
		initial:     DefaultBackOffInitial,
		max:         DefaultBackOffMax,
		pullTimeout: DefaultPullTimeout,
	}
}

// WithClock sets the clock that times back-off (default time.Now, which a
// testing/synctest bubble fakes). The Manager reads it when a pull fails
// (the back-off starts then) and when Ensure checks the back-off. A nil
// now keeps the default.
func WithClock(now func() time.Time) Option {
	return func(o *options) {
		if now != nil {
			o.now = now
		}
	}
}

// WithBackOff sets the image pull back-off: the first delay after a failed
// pull (default 10 s) and the cap the delay doubles up to (default 300 s;
// a maxDelay below initial is raised to initial). initial <= 0 disables the
// back-off: every Ensure may pull.
func WithBackOff(initial, maxDelay time.Duration) Option {
	return func(o *options) {
		o.initial, o.max = max0(initial), max0(maxDelay)
		if o.max < o.initial {
			o.max = o.initial
		}
	}
}

// WithPullTimeout bounds each pull (default DefaultPullTimeout, 10 min); a
// pull that takes longer fails like any other and starts the back-off.
// d <= 0 means no bound: a pull then ends only when the runtime returns
// or Close is called.
func WithPullTimeout(d time.Duration) Option {
	return func(o *options) { o.pullTimeout = max0(d) }
}

// WithProgress makes the Manager pass every progress message of its pulls
// to f, with the reference being pulled. f is called from the goroutine
// running the pull and must not block for long.
func WithProgress(f func(ref string, p runtimeadapter.PullProgress)) Option {
	return func(o *options) { o.progress = f }
}

func max0(d time.Duration) time.Duration { return max(d, 0) }
