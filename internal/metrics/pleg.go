package metrics

import "time"

// ObserveRelist records one PLEG relist that started at start and took dur,
// failing with err (nil on success):
//   - actorlet_pleg_relist_duration_seconds observes dur, whatever err;
//   - actorlet_pleg_relist_interval_seconds observes the time since the
//     previous relist's start (nothing for the first relist, or when start
//     is not after the previous start);
//   - on success actorlet_pleg_last_seen_seconds is set to start, in Unix
//     seconds (the listing reflects the runtime as of its start);
//   - on failure actorlet_pleg_relist_errors_total is incremented.
//
// A zero start is taken as dur before now.
func (m *Metrics) ObserveRelist(start time.Time, dur time.Duration, err error) {
	if m == nil {
		return
	}
	if start.IsZero() {
		start = time.Now().Add(-dur)
	}
	m.relistDuration.Observe(dur.Seconds())

	m.mu.Lock()
	prev := m.lastRelistStart
	if start.After(prev) {
		m.lastRelistStart = start
	}
	m.mu.Unlock()
	if !prev.IsZero() && start.After(prev) {
		m.relistInterval.Observe(start.Sub(prev).Seconds())
	}

	if err != nil {
		m.relistErrors.Inc()
		return
	}
	m.relistLastSeen.Set(unixSeconds(start))
}

// unixSeconds is t as fractional Unix seconds.
func unixSeconds(t time.Time) float64 {
	return float64(t.UnixNano()) / float64(time.Second)
}
