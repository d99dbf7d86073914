package metrics_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/actorlet/actorlet/internal/metrics"
)

func TestSetRunning(t *testing.T) {
	m, reg := newMetrics(t)
	m.SetRunning(3, 5)
	if p, c := value(t, reg, "actorlet_running_pods", nil), value(t, reg, "actorlet_running_containers", nil); p != 3 || c != 5 {
		t.Errorf("running pods %v containers %v, want 3 5", p, c)
	}
	m.SetRunning(-1, 0)
	if p, c := value(t, reg, "actorlet_running_pods", nil), value(t, reg, "actorlet_running_containers", nil); p != 0 || c != 0 {
		t.Errorf("running pods %v containers %v, want 0 0", p, c)
	}
}

func TestIncRestartAndForgetPod(t *testing.T) {
	m, reg := newMetrics(t)
	m.IncRestart("default", "web", "app")
	m.IncRestart("default", "web", "app")
	m.IncRestart("default", "web", "sidecar")
	m.IncRestart("other", "web", "app")
	err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP actorlet_container_restarts_total Number of times actorlet restarted a container (a new instance after the previous one exited).
# TYPE actorlet_container_restarts_total counter
actorlet_container_restarts_total{container="app",namespace="default",pod="web"} 2
actorlet_container_restarts_total{container="sidecar",namespace="default",pod="web"} 1
actorlet_container_restarts_total{container="app",namespace="other",pod="web"} 1
`), "actorlet_container_restarts_total")
	if err != nil {
		t.Error(err)
	}

	m.ForgetPod("default", "web")
	if n, err := testutil.GatherAndCount(reg, "actorlet_container_restarts_total"); err != nil || n != 1 {
		t.Errorf("after ForgetPod(default, web): %d series (%v), want only other/web's", n, err)
	}
	if got := value(t, reg, "actorlet_container_restarts_total", labels{"namespace": "other", "pod": "web", "container": "app"}); got != 1 {
		t.Errorf("other/web restarts = %v, want 1", got)
	}
}

func TestObserveProbe(t *testing.T) {
	m, reg := newMetrics(t)
	m.ObserveProbe(metrics.ProbeLiveness, metrics.ProbeSuccessful)
	m.ObserveProbe(metrics.ProbeLiveness, metrics.ProbeFailed)
	m.ObserveProbe(metrics.ProbeLiveness, metrics.ProbeFailed)
	m.ObserveProbe(metrics.ProbeReadiness, metrics.ProbeUnknown)
	err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP actorlet_probe_results_total Number of container probe results, by probe type and result.
# TYPE actorlet_probe_results_total counter
actorlet_probe_results_total{probe_type="liveness",result="failed"} 2
actorlet_probe_results_total{probe_type="liveness",result="successful"} 1
actorlet_probe_results_total{probe_type="readiness",result="unknown"} 1
`), "actorlet_probe_results_total")
	if err != nil {
		t.Error(err)
	}
}

func TestObservePodStart(t *testing.T) {
	m, reg := newMetrics(t)
	m.ObservePodStart(1500 * time.Millisecond)
	m.ObservePodStart(2 * time.Minute)
	if n, sum := histogram(t, reg, "actorlet_pod_start_duration_seconds", nil); n != 2 || math.Abs(sum-121.5) > 1e-9 {
		t.Errorf("pod start: %d samples, sum %v; want 2, 121.5", n, sum)
	}
}
