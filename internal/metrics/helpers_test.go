package metrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/actorlet/actorlet/internal/metrics"
)

// newMetrics returns Metrics registered on a fresh registry.
func newMetrics(t *testing.T) (*metrics.Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	return metrics.New(reg), reg
}

// labels is a series' label set, as name=value pairs.
type labels map[string]string

// series returns the series of family name with exactly lbls, or nil when
// the registry has none.
func series(t *testing.T, reg prometheus.Gatherer, name string, lbls labels) *dto.Metric {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) != len(lbls) {
				continue
			}
			for _, lp := range m.GetLabel() {
				if v, ok := lbls[lp.GetName()]; !ok || v != lp.GetValue() {
					continue next
				}
			}
			return m
		}
	}
	return nil
}

// value returns the value of a counter or gauge series, failing the test
// when it does not exist.
func value(t *testing.T, reg prometheus.Gatherer, name string, lbls labels) float64 {
	t.Helper()
	m := series(t, reg, name, lbls)
	switch {
	case m == nil:
		t.Fatalf("no series %s%v", name, lbls)
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	default:
		t.Fatalf("series %s%v is neither a counter nor a gauge", name, lbls)
	}
	return 0
}

// histogram returns the sample count and sum of a histogram series,
// failing the test when it does not exist.
func histogram(t *testing.T, reg prometheus.Gatherer, name string, lbls labels) (count uint64, sum float64) {
	t.Helper()
	m := series(t, reg, name, lbls)
	if m == nil || m.Histogram == nil {
		t.Fatalf("no histogram series %s%v", name, lbls)
	}
	return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
}
