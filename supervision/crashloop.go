// Package supervision holds the policies that decide when things are tried
// again in actorlet's tree: CrashLoopBackOff for containers, the record of
// each container's last exit that it works on, and the supervisor strategy
// for pod actors.
package supervision

import (
	"time"
)

// The kubelet's CrashLoopBackOff (kuberuntime_manager's doBackOff on
// client-go's flowcontrol.Backoff): a container's first exit is restarted
// at once and arms the back-off; each later exit waits the current delay
// from its finish time — 10 s, then 20 s, 40 s … capped at 300 s — and
// the delay doubles at each restart. The back-off entry expires, and the
// next exit is again restarted at once, when that exit comes more than
// twice the cap (600 s) after the last restart.
const (
	DefaultBackoffInitial = 10 * time.Second
	DefaultBackoffMax     = 300 * time.Second
)

// BackoffPolicy shapes CrashLoopBackOff. Initial and Max both 0 restart
// at once, always. Max 0 with Initial > 0 doubles without a cap and never
// expires.
type BackoffPolicy struct {
	// Initial is the first non-zero delay: the wait of a container's
	// second exit (the first is restarted at once). Default 10 s.
	Initial time.Duration
	// Max caps the delay (default 300 s); the back-off expires when an
	// exit comes more than 2 × Max after the last restart.
	Max time.Duration
}

// DefaultBackoffPolicy is the kubelet's curve: 0, 10 s, 20 s … 300 s,
// expiring 600 s after the last restart.
func DefaultBackoffPolicy() BackoffPolicy {
	return BackoffPolicy{Initial: DefaultBackoffInitial, Max: DefaultBackoffMax}
}

// BackoffEntry is the back-off state of one container, as the kubelet's
// flowcontrol entry (keyed there by pod, container name and spec hash).
// The zero value is no entry.
type BackoffEntry struct {
	// Hash is the container spec hash the entry belongs to: an exit of
	// another spec finds no entry (a new spec starts a fresh curve).
	Hash string `json:"hash,omitempty"`
	// Delay is how long the next exit waits (flowcontrol's backoff).
	Delay time.Duration `json:"delay"`
	// LastUpdate is when the last restart was decided (flowcontrol's
	// lastUpdate, set by Next); zero: no entry.
	LastUpdate time.Time `json:"lastUpdate"`
}

// live reports whether e applies to an exit at exitAt of a container with
// spec hash: it exists, is for that spec, and has not expired
// (flowcontrol's hasExpired: exitAt − LastUpdate > 2 × Max).
func (p BackoffPolicy) live(e BackoffEntry, hash string, exitAt time.Time) bool {
	if e.LastUpdate.IsZero() || e.Hash != hash {
		return false
	}
	return p.Max <= 0 || exitAt.Sub(e.LastUpdate) <= 2*p.Max
}

// Wait is how long after it finished an exit at finishedAt of a container
// with spec hash waits for its replacement (flowcontrol's
// IsInBackOffSince): 0 with no live entry, else the entry's delay.
func (p BackoffPolicy) Wait(e BackoffEntry, hash string, finishedAt time.Time) time.Duration {
	if !p.live(e, hash, finishedAt) {
		return 0
	}
	return e.Delay
}

// Next is the entry once the replacement of that exit is decided at now
// (flowcontrol's Next): Initial with no live entry, else the delay
// doubled, capped at Max; LastUpdate is now.
func (p BackoffPolicy) Next(e BackoffEntry, hash string, finishedAt, now time.Time) BackoffEntry {
	d := p.Initial
	if p.live(e, hash, finishedAt) {
		d = e.Delay * 2
		if d < e.Delay { // overflow of an uncapped curve
			d = e.Delay
		}
	}
	if p.Max > 0 && d > p.Max {
		d = p.Max
	}
	return BackoffEntry{Hash: hash, Delay: d, LastUpdate: now}
}
