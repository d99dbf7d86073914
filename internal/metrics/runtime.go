package metrics

import "time"

// Runtime operations, the operation label of
// actorlet_runtime_operations_duration_seconds and
// actorlet_runtime_operations_errors_total: one per runtimeadapter method.
const (
	OpList        = "list"
	OpInspect     = "inspect"
	OpEnsureImage = "ensure_image"
	OpCreate      = "create"
	OpStart       = "start"
	OpStop        = "stop"
	OpRemove      = "remove"
	// OpLogs is opening a log stream (runtimeadapter.LogSource), not
	// reading it.
	OpLogs = "logs"
)

// Operations lists every runtime operation InstrumentRuntime records.
var Operations = []string{OpList, OpInspect, OpEnsureImage, OpCreate, OpStart, OpStop, OpRemove, OpLogs}

// ObserveRuntimeOp records one runtime call of operation op (one of
// Operations) that took d: it observes d in
// actorlet_runtime_operations_duration_seconds{operation} and, when err is
// not nil, increments actorlet_runtime_operations_errors_total{operation}.
// Every error counts, ErrNotFound and context cancellation included.
func (m *Metrics) ObserveRuntimeOp(op string, d time.Duration, err error) {
	if m == nil {
		return
	}
	m.runtimeOpDuration.WithLabelValues(op).Observe(d.Seconds())
	if err != nil {
		m.runtimeOpErrors.WithLabelValues(op).Inc()
	}
}
