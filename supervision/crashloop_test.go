package supervision

import (
	"fmt"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// run plays a container that exits runFor after each start, restarted at
// each deadline, and returns the delay of each exit (its replacement's
// start minus its finish), as the kubelet's doBackOff gives them.
func run(p BackoffPolicy, runFor []time.Duration) []time.Duration {
	var rec ContainerRecord
	start := t0
	var out []time.Duration
	for i, d := range runFor {
		finish := start.Add(d)
		rec = p.Observe(rec, Exit{ContainerID: fmt.Sprintf("c%d", i), Hash: "h1", RestartCount: i, FinishedAt: finish})
		out = append(out, rec.RestartAt.Sub(finish))
		start = rec.RestartAt // restarted at its exact deadline
		rec = p.Restart(rec, start)
	}
	return out
}

func repeat(d time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

func TestCrashLoopCurve(t *testing.T) {
	s := time.Second
	twiceMax := 2 * DefaultBackoffMax
	tests := []struct {
		name   string
		policy BackoffPolicy
		runFor []time.Duration
		want   []time.Duration
	}{
		{"kubelet default: the first exit restarts at once", DefaultBackoffPolicy(), repeat(s, 9),
			[]time.Duration{0, 10 * s, 20 * s, 40 * s, 80 * s, 160 * s, 300 * s, 300 * s, 300 * s}},
		{"both zero: always at once", BackoffPolicy{}, repeat(s, 3), []time.Duration{0, 0, 0}},
		{"custom", BackoffPolicy{Initial: s, Max: 5 * s}, repeat(s, 6), []time.Duration{0, s, 2 * s, 4 * s, 5 * s, 5 * s}},
		{"initial above max is capped", BackoffPolicy{Initial: 10 * s, Max: 3 * s}, repeat(s, 3), []time.Duration{0, 3 * s, 3 * s}},
		{"no cap", BackoffPolicy{Initial: s}, append(repeat(s, 5), 10000*s), []time.Duration{0, s, 2 * s, 4 * s, 8 * s, 16 * s}},
		// flowcontrol's hasExpired: exit − last restart > 2 × max.
		{"exits exactly 2 × max after the restart keep growing", DefaultBackoffPolicy(), repeat(twiceMax, 4),
			[]time.Duration{0, 10 * s, 20 * s, 40 * s}},
		{"exits 2 × max + 1 ns after the restart restart at once", DefaultBackoffPolicy(), repeat(twiceMax+1, 4),
			[]time.Duration{0, 0, 0, 0}},
		{"a run of 600 s does not reset (the old rule did)", DefaultBackoffPolicy(), repeat(600*s, 4),
			[]time.Duration{0, 10 * s, 20 * s, 40 * s}},
		{"expired, then grows again from the start", DefaultBackoffPolicy(), []time.Duration{s, s, s, twiceMax + 1, s, s},
			[]time.Duration{0, 10 * s, 20 * s, 0, 10 * s, 20 * s}},
		{"custom max: expiry at 2 × its max", BackoffPolicy{Initial: s, Max: 4 * s}, []time.Duration{s, s, 8 * s, s, 8*s + 1, s},
			[]time.Duration{0, s, 2 * s, 4 * s, 0, s}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(tt.policy, tt.runFor)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("delays %v, want %v", got, tt.want)
			}
		})
	}
}

// The expiry counts from the restart decision (flowcontrol's lastUpdate is
// set by Next at the restart), not from the exit nor the start.
func TestBackoffExpiryCountsFromTheRestart(t *testing.T) {
	p := DefaultBackoffPolicy()
	if got := 2 * p.Max; got != 600*time.Second {
		t.Fatalf("2 × max = %v, want 600 s", got)
	}
	e := p.Next(BackoffEntry{}, "h", t0, t0.Add(time.Hour)) // a restart decided an hour after the exit
	if e.Delay != 10*time.Second || !e.LastUpdate.Equal(t0.Add(time.Hour)) {
		t.Fatalf("entry %+v", e)
	}
	restart := t0.Add(time.Hour)
	if w := p.Wait(e, "h", restart.Add(time.Second)); w != 10*time.Second {
		t.Errorf("exit 1 s after the restart waits %v, want 10 s", w)
	}
	if w := p.Wait(e, "h", restart.Add(600*time.Second)); w != 10*time.Second {
		t.Errorf("exit 600 s after the restart waits %v, want 10 s (not expired: not more than 2 × max)", w)
	}
	if w := p.Wait(e, "h", restart.Add(600*time.Second+1)); w != 0 {
		t.Errorf("exit 600 s + 1 ns after the restart waits %v, want 0 (expired)", w)
	}
	if w := p.Wait(e, "other", restart.Add(time.Second)); w != 0 {
		t.Errorf("an exit of another spec waits %v, want 0 (a fresh curve)", w)
	}
	if n := p.Next(e, "h", restart.Add(600*time.Second+1), restart.Add(700*time.Second)); n.Delay != 10*time.Second {
		t.Errorf("Next after expiry: %v, want the initial 10 s", n.Delay)
	}
	if n := p.Next(e, "h", restart.Add(600*time.Second), restart.Add(700*time.Second)); n.Delay != 20*time.Second {
		t.Errorf("Next at the boundary: %v, want 20 s", n.Delay)
	}
}

func TestObserveAndRestartAreIdempotentPerExit(t *testing.T) {
	p := DefaultBackoffPolicy()
	var r ContainerRecord
	r = p.Restart(p.Observe(r, Exit{ContainerID: "a", Hash: "h", FinishedAt: t0}), t0) // first exit: at once, arms 10 s
	b := Exit{ContainerID: "b", Hash: "h", FinishedAt: t0.Add(time.Second)}
	r1 := p.Observe(r, b)
	if r2 := p.Observe(r1, b); !r2.Equal(r1) {
		t.Fatalf("the same exit twice: %+v then %+v", r1, r2)
	}
	if r1.Delay() != 10*time.Second {
		t.Fatalf("second exit delay %v, want 10 s", r1.Delay())
	}
	at := r1.RestartAt
	x := p.Restart(r1, at)
	if y := p.Restart(x, at.Add(time.Minute)); !y.Equal(x) {
		t.Fatalf("a second restart of the same exit advanced the back-off: %+v then %+v", x, y)
	}
	if x.Backoff.Delay != 20*time.Second {
		t.Fatalf("after the second restart the delay is %v, want 20 s", x.Backoff.Delay)
	}
	// The exit seen again after its restart keeps its deadline.
	if z := p.Observe(x, b); !z.RestartAt.Equal(at) || !z.Restarted {
		t.Fatalf("the restarted exit seen again: %+v", z)
	}
}

// An exit first seen by its die event (a little after the runtime's own
// finish time), then by a listing with the exact time: the deadline counts
// from the exact time; the delay stays the one of that exit.
func TestObserveDeadlineFromEarliestFinish(t *testing.T) {
	p := DefaultBackoffPolicy()
	r := p.Restart(p.Observe(ContainerRecord{}, Exit{ContainerID: "a", Hash: "h", FinishedAt: t0}), t0)
	exact := t0.Add(time.Second)
	event := exact.Add(70 * time.Millisecond)
	r = p.Observe(r, Exit{ContainerID: "b", Hash: "h", FinishedAt: event, Reason: "Error", ExitCode: 1})
	if !r.RestartAt.Equal(event.Add(10 * time.Second)) {
		t.Fatalf("deadline from the event %v", r.RestartAt)
	}
	r = p.Observe(r, Exit{ContainerID: "b", Hash: "h", FinishedAt: exact, Reason: "OOMKilled", ExitCode: 137})
	if !r.RestartAt.Equal(exact.Add(10*time.Second)) || r.Exit.Reason != "OOMKilled" || r.Exit.ExitCode != 137 {
		t.Fatalf("after the exact finish: %+v", r)
	}
	if r = p.Observe(r, Exit{ContainerID: "b", Hash: "h", FinishedAt: event}); !r.RestartAt.Equal(exact.Add(10 * time.Second)) {
		t.Fatalf("a later finish time moved the deadline to %v", r.RestartAt)
	}
}
