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

// EventStreamStates are the values of actorlet_pleg_event_stream_state's
// state label (internal/pleg's StreamState names).
var EventStreamStates = []string{"down", "healthy", "silent", "confirming"}

// SetEventStreamState records the state the runtime's event stream is in
// (one of EventStreamStates): actorlet_pleg_event_stream_state is 1 for
// it and 0 for the others. Until the first call the metric has no series
// (a node without an event stream never calls it). An unknown state sets
// only its own series.
func (m *Metrics) SetEventStreamState(state string) {
	if m == nil {
		return
	}
	for _, s := range EventStreamStates {
		if s != state {
			m.streamState.WithLabelValues(s).Set(0)
		}
	}
	m.streamState.WithLabelValues(state).Set(1)
}

// IncEventStreamSilences counts a stream found silent (a relist found a
// change it never reported): actorlet_pleg_event_stream_silences_total.
func (m *Metrics) IncEventStreamSilences() {
	if m == nil {
		return
	}
	m.streamSilences.Inc()
}

// ExitPaths are the values of actorlet_pleg_exit_path's path label.
var ExitPaths = []string{"containerd", "runtime-events", "relist"}

// SetExitPath records the fastest path a container's death reaches its pod
// by now (one of ExitPaths): actorlet_pleg_exit_path is 1 for it and 0 for
// the others.
func (m *Metrics) SetExitPath(path string) {
	if m == nil {
		return
	}
	for _, p := range ExitPaths {
		if p != path {
			m.exitPath.WithLabelValues(p).Set(0)
		}
	}
	m.exitPath.WithLabelValues(path).Set(1)
}

// IncTaskExits counts a death of this node's containers reported by the
// runtime's containerd: actorlet_pleg_task_exits_total.
func (m *Metrics) IncTaskExits() {
	if m == nil {
		return
	}
	m.taskExits.Inc()
}
