package metrics_test

import (
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/actorlet/actorlet/internal/metrics"
)

// allNames is every metric family New registers, as documented.
var allNames = []string{
	"actorlet_pleg_relist_duration_seconds",
	"actorlet_pleg_relist_interval_seconds",
	"actorlet_pleg_last_seen_seconds",
	"actorlet_pleg_relist_errors_total",
	"actorlet_pleg_event_stream_state",
	"actorlet_pleg_event_stream_silences_total",
	"actorlet_pleg_exit_path",
	"actorlet_pleg_task_exits_total",
	"actorlet_running_pods",
	"actorlet_running_containers",
	"actorlet_container_restarts_total",
	"actorlet_probe_results_total",
	"actorlet_pod_start_duration_seconds",
	"actorlet_runtime_operations_duration_seconds",
	"actorlet_runtime_operations_errors_total",
	"actorlet_pod_actors",
	"actorlet_pod_actor_restarts_total",
	"actorlet_pod_sync_duration_seconds",
	"actorlet_mailbox_messages_total",
}

// record touches every metric once, so that labelled families have a series.
func record(m *metrics.Metrics) {
	m.SetRunning(1, 1)
	m.IncRestart("default", "web", "app")
	m.ObserveProbe(metrics.ProbeLiveness, metrics.ProbeSuccessful)
	m.ObservePodStart(0)
	m.ObserveRuntimeOp(metrics.OpList, 0, nil)
	m.MailboxMiddleware(metrics.KindPod).MessageReceived("msg")
	m.SetEventStreamState("healthy")
	m.SetExitPath("containerd")
}

func TestNewRegistersEveryDocumentedMetric(t *testing.T) {
	m, reg := newMetrics(t)
	record(m)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, mf := range mfs {
		got = append(got, mf.GetName())
	}
	want := slices.Clone(allNames)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("registered %q\nwant       %q", got, want)
	}
}

func TestMetricsFollowPrometheusConventions(t *testing.T) {
	m, reg := newMetrics(t)
	record(m)
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}

func TestNewOnlyUsesTheGivenRegistry(t *testing.T) {
	before, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	m, _ := newMetrics(t)
	record(m)
	after, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("default registry went from %d to %d families", len(before), len(after))
	}
	for _, mf := range after {
		if slices.Contains(allNames, mf.GetName()) {
			t.Errorf("%s registered on the default registry", mf.GetName())
		}
	}
}

func TestNewTwiceOnOneRegistryPanics(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics.New(reg)
	defer func() {
		if recover() == nil {
			t.Error("second New on one registry did not panic")
		}
	}()
	metrics.New(reg)
}

func TestNewWithoutRegistryRecords(t *testing.T) {
	m := metrics.New(nil)
	record(m) // must not panic
	m.ObserveRelist(time.Now(), time.Millisecond, nil)
}
