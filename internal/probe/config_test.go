package probe

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

func TestDefaults(t *testing.T) {
	tests := []struct {
		name          string
		p             *v1.Probe
		delay, period time.Duration
		timeout       time.Duration
		success, fail int
	}{
		{"nil", nil, 0, 10 * time.Second, time.Second, 1, 3},
		{"zero", &v1.Probe{}, 0, 10 * time.Second, time.Second, 1, 3},
		{"negative", &v1.Probe{InitialDelaySeconds: -1, PeriodSeconds: -1, TimeoutSeconds: -1, SuccessThreshold: -1, FailureThreshold: -1},
			0, 10 * time.Second, time.Second, 1, 3},
		{"set", &v1.Probe{InitialDelaySeconds: 7, PeriodSeconds: 2, TimeoutSeconds: 5, SuccessThreshold: 4, FailureThreshold: 6},
			7 * time.Second, 2 * time.Second, 5 * time.Second, 4, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := InitialDelay(tt.p); got != tt.delay {
				t.Errorf("InitialDelay = %v, want %v", got, tt.delay)
			}
			if got := Period(tt.p); got != tt.period {
				t.Errorf("Period = %v, want %v", got, tt.period)
			}
			if got := Timeout(tt.p); got != tt.timeout {
				t.Errorf("Timeout = %v, want %v", got, tt.timeout)
			}
			if got := SuccessThreshold(tt.p); got != tt.success {
				t.Errorf("SuccessThreshold = %v, want %v", got, tt.success)
			}
			if got := FailureThreshold(tt.p); got != tt.fail {
				t.Errorf("FailureThreshold = %v, want %v", got, tt.fail)
			}
		})
	}
}

func TestFirstDelay(t *testing.T) {
	p := &v1.Probe{InitialDelaySeconds: 30, PeriodSeconds: 5}
	tests := []struct {
		p      *v1.Probe
		jitter float64
		want   time.Duration
	}{
		{nil, 0, 0},
		{nil, 0.5, 5 * time.Second},
		{nil, 1, 10*time.Second - 1}, // out of range: clamped below one period
		{nil, 7, 10*time.Second - 1}, // likewise
		{nil, -0.5, 0},               // clamped to 0
		{p, 0, 30 * time.Second},     // initialDelaySeconds
		{p, 0.5, 32500 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := FirstDelay(tt.p, tt.jitter); got != tt.want {
			t.Errorf("FirstDelay(%+v, %v) = %v, want %v", tt.p, tt.jitter, got, tt.want)
		}
	}
	// Bounds: [initialDelay, initialDelay+period) for every jitter.
	for j := 0.0; j < 1; j += 1.0 / 1024 {
		if d := FirstDelay(p, j); d < 30*time.Second || d >= 35*time.Second {
			t.Fatalf("FirstDelay(jitter %v) = %v, outside [30s, 35s)", j, d)
		}
	}
}

func TestKillGrace(t *testing.T) {
	s := func(v int64) *int64 { return &v }
	pod := 30 * time.Second
	tests := []struct {
		p    *v1.Probe
		want time.Duration
	}{
		{nil, pod},
		{&v1.Probe{}, pod},
		{&v1.Probe{TerminationGracePeriodSeconds: s(5)}, 5 * time.Second},
		{&v1.Probe{TerminationGracePeriodSeconds: s(0)}, 0},
		{&v1.Probe{TerminationGracePeriodSeconds: s(-3)}, 0},
	}
	for _, tt := range tests {
		if got := KillGrace(tt.p, pod); got != tt.want {
			t.Errorf("KillGrace(%+v) = %v, want %v", tt.p, got, tt.want)
		}
	}
}

func TestKindInitialAndResultString(t *testing.T) {
	for k, want := range map[Kind]Result{Liveness: Success, Readiness: Failure, Startup: Unknown} {
		if got := k.Initial(); got != want {
			t.Errorf("%s.Initial() = %v, want %v", k, got, want)
		}
	}
	for r, want := range map[Result]string{Unknown: "Unknown", Success: "Success", Failure: "Failure", 9: "Result(9)"} {
		if got := r.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}
