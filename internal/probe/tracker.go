package probe

import v1 "k8s.io/api/core/v1"

// Tracker applies a probe's thresholds to its results: the state it
// reports changes only after SuccessThreshold successes or
// FailureThreshold failures in a row.
//
// Unknown results (probe errors) neither count nor break a run: F, ?, F,
// F fails a probe with failureThreshold 3. This is what the kubelet does
// (its worker throws an errored probe's result away), and it keeps a
// flaky runtime from either failing or saving a container.
//
// A run of results does not end when the state changes: with
// failureThreshold 3, F F F fails the probe and a fourth F keeps it
// failed; with successThreshold 2, S S then F S leaves it passing, as the
// state only changes on a full run of the other result.
//
// The zero Tracker is not usable; create one with NewTracker.
type Tracker struct {
	successThreshold int
	failureThreshold int
	initial          Result
	state            Result
	last             Result // the result of the current run (Unknown: none)
	run              int    // its length
}

// NewTracker returns a Tracker for probe p of kind k (defaults applied,
// see SuccessThreshold and FailureThreshold) in k's initial state.
func NewTracker(k Kind, p *v1.Probe) Tracker {
	t := Tracker{
		successThreshold: SuccessThreshold(p),
		failureThreshold: FailureThreshold(p),
		initial:          k.Initial(),
	}
	t.Reset()
	return t
}

// Observe records one result and returns the reported state and whether
// this result changed it.
func (t *Tracker) Observe(r Result) (state Result, changed bool) {
	if r != Success && r != Failure {
		return t.state, false
	}
	if r == t.last {
		t.run++
	} else {
		t.last, t.run = r, 1
	}
	threshold := t.successThreshold
	if r == Failure {
		threshold = t.failureThreshold
	}
	if t.run < threshold || t.state == r {
		return t.state, false
	}
	t.state = r
	return t.state, true
}

// State returns the reported state.
func (t *Tracker) State() Result { return t.state }

// Reset returns t to its initial state and forgets the current run, as
// for a new container.
func (t *Tracker) Reset() {
	t.state, t.last, t.run = t.initial, Unknown, 0
}
