package actors

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/metrics"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// The actors feed the metrics: relists, restarts, running gauges, pod
// start duration, pod actors.
func TestActorsRecordMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("crash", fake.Behavior{ExitCode: 1, ExitAfter: 3 * time.Second})
		h := newHarness(t, rt)
		h.cfg.Metrics = metrics.New(reg)
		h.cfg.Runtime = metrics.InstrumentRuntime(rt, h.cfg.Metrics)
		h.start()
		h.apply(testPod("web", "uid-web", v1.RestartPolicyAlways, "app"), testPod("crasher", "uid-crash", v1.RestartPolicyAlways, "crash"))
		time.Sleep(4500 * time.Millisecond) // crash at +3 s, restart at once (a first exit), runs until +6 s
		synctest.Wait()

		if v := value(t, reg, "actorlet_container_restarts_total"); v != 1 {
			t.Errorf("restarts %v, want 1", v)
		}
		if n, _ := testutil.GatherAndCount(reg, "actorlet_pleg_relist_duration_seconds"); n != 1 {
			t.Errorf("relist duration series: %d", n)
		}
		if v := value(t, reg, "actorlet_running_pods"); v != 2 {
			t.Errorf("running pods %v, want 2", v)
		}
		if v := value(t, reg, "actorlet_pod_actors"); v != 2 {
			t.Errorf("pod actors %v, want 2", v)
		}
		if n, _ := testutil.GatherAndCount(reg, "actorlet_runtime_operations_duration_seconds"); n == 0 {
			t.Error("no runtime operation timed")
		}
		h.stop()
		rt.Close()
	})
}

// value reads the single series of a gauge or counter.
func value(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.Metric) == 1 {
			if g := mf.Metric[0].GetGauge(); g != nil {
				return g.GetValue()
			}
			return mf.Metric[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no single series %s", name)
	return 0
}
