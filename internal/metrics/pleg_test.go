package metrics_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/actorlet/actorlet/internal/metrics"
)

func TestObserveRelist(t *testing.T) {
	m, reg := newMetrics(t)
	t0 := time.Unix(1_700_000_000, 500_000_000)

	m.ObserveRelist(t0, 20*time.Millisecond, nil)
	if n, sum := histogram(t, reg, "actorlet_pleg_relist_duration_seconds", nil); n != 1 || math.Abs(sum-0.02) > 1e-9 {
		t.Errorf("relist duration: %d samples, sum %v; want 1, 0.02", n, sum)
	}
	if n, _ := histogram(t, reg, "actorlet_pleg_relist_interval_seconds", nil); n != 0 {
		t.Errorf("relist interval after the first relist: %d samples, want 0", n)
	}
	if got := value(t, reg, "actorlet_pleg_last_seen_seconds", nil); got != 1_700_000_000.5 {
		t.Errorf("last seen = %v, want the start in Unix seconds", got)
	}

	// A failed relist 1.5 s later: counted, timed, interval observed, but
	// last seen stays at the last success.
	m.ObserveRelist(t0.Add(1500*time.Millisecond), 10*time.Millisecond, errors.New("daemon down"))
	if n, sum := histogram(t, reg, "actorlet_pleg_relist_interval_seconds", nil); n != 1 || math.Abs(sum-1.5) > 1e-9 {
		t.Errorf("relist interval: %d samples, sum %v; want 1, 1.5", n, sum)
	}
	if n, _ := histogram(t, reg, "actorlet_pleg_relist_duration_seconds", nil); n != 2 {
		t.Errorf("relist duration: %d samples, want 2 (failures included)", n)
	}
	if got := value(t, reg, "actorlet_pleg_last_seen_seconds", nil); got != 1_700_000_000.5 {
		t.Errorf("last seen after a failure = %v, want the last success", got)
	}

	// A success 1 s later.
	m.ObserveRelist(t0.Add(2500*time.Millisecond), 10*time.Millisecond, nil)
	if n, sum := histogram(t, reg, "actorlet_pleg_relist_interval_seconds", nil); n != 2 || math.Abs(sum-2.5) > 1e-9 {
		t.Errorf("relist interval: %d samples, sum %v; want 2, 2.5", n, sum)
	}
	if got := value(t, reg, "actorlet_pleg_last_seen_seconds", nil); got != 1_700_000_003 {
		t.Errorf("last seen = %v, want 1700000003", got)
	}
	err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP actorlet_pleg_relist_errors_total Number of PLEG relists that failed to list the runtime.
# TYPE actorlet_pleg_relist_errors_total counter
actorlet_pleg_relist_errors_total 1
`), "actorlet_pleg_relist_errors_total")
	if err != nil {
		t.Error(err)
	}

	// A start out of order observes no (negative) interval.
	m.ObserveRelist(t0, time.Millisecond, nil)
	if n, _ := histogram(t, reg, "actorlet_pleg_relist_interval_seconds", nil); n != 2 {
		t.Errorf("relist interval after an earlier start: %d samples, want 2", n)
	}
}

func TestObserveRelistZeroStartMeansNow(t *testing.T) {
	m, reg := newMetrics(t)
	before := time.Now()
	m.ObserveRelist(time.Time{}, 0, nil)
	got := value(t, reg, "actorlet_pleg_last_seen_seconds", nil)
	if got < float64(before.Unix()) || got > float64(time.Now().Unix()+1) {
		t.Errorf("last seen = %v, want about now (%d)", got, before.Unix())
	}
}

func TestEventStreamState(t *testing.T) {
	m, reg := newMetrics(t)
	if series(t, reg, "actorlet_pleg_event_stream_state", labels{"state": "healthy"}) != nil {
		t.Fatal("a state series before any state was set (a node without an event stream has none)")
	}
	if got := value(t, reg, "actorlet_pleg_event_stream_silences_total", nil); got != 0 {
		t.Errorf("silences = %v before any, want 0", got)
	}
	for _, tc := range []struct{ state string }{{"down"}, {"healthy"}, {"silent"}, {"confirming"}, {"healthy"}} {
		m.SetEventStreamState(tc.state)
		for _, s := range metrics.EventStreamStates {
			want := 0.0
			if s == tc.state {
				want = 1
			}
			if got := value(t, reg, "actorlet_pleg_event_stream_state", labels{"state": s}); got != want {
				t.Errorf("after %s: state %s = %v, want %v", tc.state, s, got, want)
			}
		}
	}
	m.IncEventStreamSilences()
	if got := value(t, reg, "actorlet_pleg_event_stream_silences_total", nil); got != 1 {
		t.Errorf("silences = %v, want 1", got)
	}
}
