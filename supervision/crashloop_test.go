package supervision

import (
	"fmt"
	"testing"
	"time"
)

func TestCrashLoopSequence(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		policy BackoffPolicy
		runFor time.Duration
		want   []time.Duration
	}{
		{"kubelet default", DefaultBackoffPolicy(), time.Second,
			[]time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 300 * time.Second, 300 * time.Second}},
		{"zero means at once", BackoffPolicy{}, time.Second,
			[]time.Duration{0, 0, 0}},
		{"custom", BackoffPolicy{Initial: time.Second, Max: 5 * time.Second, ResetAfter: time.Minute}, time.Second,
			[]time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}},
		{"initial above max is capped", BackoffPolicy{Initial: 10 * time.Second, Max: 3 * time.Second}, time.Second,
			[]time.Duration{3 * time.Second, 3 * time.Second}},
		{"long runs reset every time", DefaultBackoffPolicy(), 600 * time.Second,
			[]time.Duration{10 * time.Second, 10 * time.Second, 10 * time.Second}},
		{"599 s does not reset", DefaultBackoffPolicy(), 599 * time.Second,
			[]time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCrashLoop(tt.policy)
			now := t0
			for i, want := range tt.want {
				started := now
				finished := started.Add(tt.runFor)
				got := c.Observe(fmt.Sprintf("c%d", i), started, finished)
				if got.Sub(finished) != want {
					t.Fatalf("exit %d: delay %v, want %v", i, got.Sub(finished), want)
				}
				now = got
			}
		})
	}
}

func TestCrashLoopIdempotentPerExit(t *testing.T) {
	c := NewCrashLoop(DefaultBackoffPolicy())
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d1 := c.Observe("a", t0, t0.Add(time.Second))
	d2 := c.Observe("a", t0, t0.Add(time.Second))
	if !d1.Equal(d2) {
		t.Fatalf("same exit gave %v then %v", d1, d2)
	}
	d3 := c.Observe("b", d1, d1.Add(time.Second))
	if got := d3.Sub(d1.Add(time.Second)); got != 20*time.Second {
		t.Fatalf("second exit delay %v, want 20s", got)
	}
}

func TestCrashLoopResetThenGrowsAgain(t *testing.T) {
	c := NewCrashLoop(DefaultBackoffPolicy())
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c.Observe("a", t0, t0.Add(time.Second)) // 10
	c.Observe("b", t0, t0.Add(time.Second)) // 20
	c.Observe("c", t0, t0.Add(time.Second)) // 40
	if d := c.Observe("d", t0, t0.Add(10*time.Minute)).Sub(t0.Add(10 * time.Minute)); d != 10*time.Second {
		t.Fatalf("after a 10 min run: %v, want 10s", d)
	}
	if d := c.Observe("e", t0, t0.Add(time.Second)).Sub(t0.Add(time.Second)); d != 20*time.Second {
		t.Fatalf("after reset, next: %v, want 20s", d)
	}
}

// An exit first seen by its die event (a little after the runtime's own
// FinishedAt), then by a listing with the exact FinishedAt: the deadline
// counts from the exact time; the delay stays the one of that exit.
func TestCrashLoopDeadlineFromEarliestFinish(t *testing.T) {
	c := NewCrashLoop(DefaultBackoffPolicy())
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	exact := t0.Add(time.Second)
	event := exact.Add(70 * time.Millisecond)
	if got := c.Observe("a", t0, event); !got.Equal(event.Add(10 * time.Second)) {
		t.Fatalf("deadline from the event %v, want %v", got, event.Add(10*time.Second))
	}
	if got := c.Observe("a", t0, exact); !got.Equal(exact.Add(10 * time.Second)) {
		t.Fatalf("deadline after the exact finish %v, want %v", got, exact.Add(10*time.Second))
	}
	if got := c.Observe("a", t0, event); !got.Equal(exact.Add(10 * time.Second)) {
		t.Fatalf("a later finish time moved the deadline to %v", got)
	}
	if got := c.Observe("b", exact, exact.Add(time.Second)); !got.Equal(exact.Add(21 * time.Second)) {
		t.Fatalf("next exit %v, want a 20 s delay", got)
	}
}
