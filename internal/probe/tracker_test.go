package probe

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// results parses a sequence of results: S Success, F Failure, ? Unknown.
func results(t *testing.T, s string) []Result {
	t.Helper()
	out := make([]Result, len(s))
	for i, c := range s {
		switch c {
		case 'S':
			out[i] = Success
		case 'F':
			out[i] = Failure
		case '?':
			out[i] = Unknown
		default:
			t.Fatalf("bad result %q in %q", c, s)
		}
	}
	return out
}

func TestTracker(t *testing.T) {
	thresholds := func(success, failure int32) *v1.Probe {
		return &v1.Probe{SuccessThreshold: success, FailureThreshold: failure}
	}
	tests := []struct {
		kind   Kind
		probe  *v1.Probe
		in     string // results observed
		states string // the state after each
	}{
		// Liveness, defaults (success 1, failure 3): starts Success.
		{Liveness, nil, "", ""},
		{Liveness, nil, "FFF", "SSF"},
		{Liveness, nil, "FFFF", "SSFF"},
		{Liveness, nil, "FFFS", "SSFS"},
		{Liveness, nil, "FFSFF", "SSSSS"}, // a success breaks the run
		{Liveness, nil, "FF?F", "SSSF"},   // an unknown does not
		{Liveness, nil, "F??F?F", "SSSSSF"},
		{Liveness, nil, "????", "SSSS"},
		{Liveness, &v1.Probe{}, "FFF", "SSF"}, // zero fields take the defaults
		{Liveness, thresholds(1, 1), "SFS", "SFS"},

		// Readiness, defaults: starts Failure.
		{Readiness, nil, "?", "F"},
		{Readiness, nil, "S", "S"},
		{Readiness, nil, "FFFS", "FFFS"},
		{Readiness, nil, "SFFS", "SSSS"},
		{Readiness, nil, "SFFF", "SSSF"},
		{Readiness, nil, "SFFFFS", "SSSFFS"},
		// Readiness, success 2, failure 1.
		{Readiness, thresholds(2, 1), "S", "F"},
		{Readiness, thresholds(2, 1), "SS", "FS"},
		{Readiness, thresholds(2, 1), "S?S", "FFS"},
		{Readiness, thresholds(2, 1), "SFS", "FFF"},
		{Readiness, thresholds(2, 1), "SSFSS", "FSFFS"},
		{Readiness, thresholds(2, 1), "SSSF", "FSSF"},
		// Readiness, success 3, failure 2: runs survive the state change.
		{Readiness, thresholds(3, 2), "SSSFSFF", "FFSSSSF"},

		// Startup, defaults: starts Unknown (not started).
		{Startup, nil, "?", "?"},
		{Startup, nil, "S", "S"},
		{Startup, nil, "FFS", "??S"},
		{Startup, nil, "FFF", "??F"},
		{Startup, nil, "F?F?F", "????F"},
		{Startup, thresholds(1, 5), "FFFFF", "????F"},
	}
	for _, tt := range tests {
		tr := NewTracker(tt.kind, tt.probe)
		in, want := results(t, tt.in), results(t, tt.states)
		prev := tt.kind.Initial()
		if tr.State() != prev {
			t.Errorf("%s %+v: initial state %v, want %v", tt.kind, tt.probe, tr.State(), prev)
		}
		for i, r := range in {
			state, changed := tr.Observe(r)
			if state != want[i] || changed != (want[i] != prev) || tr.State() != state {
				t.Errorf("%s %+v %q: result %d (%v) gave %v changed=%v, want %v changed=%v",
					tt.kind, tt.probe, tt.in, i, r, state, changed, want[i], want[i] != prev)
				break
			}
			prev = state
		}
	}
}

func TestTrackerReset(t *testing.T) {
	tr := NewTracker(Readiness, nil)
	tr.Observe(Success)
	tr.Observe(Failure)
	tr.Observe(Failure)
	tr.Reset()
	if tr.State() != Failure {
		t.Fatalf("state after Reset %v, want the initial Failure", tr.State())
	}
	// The run of two failures is forgotten: one more does not count as a third.
	tr.Observe(Success)
	if s, _ := tr.Observe(Failure); s != Success {
		t.Fatalf("state %v, want Success (run forgotten)", s)
	}
}
