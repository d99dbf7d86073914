// Package metrics holds actorlet's Prometheus metrics (client_golang),
// named after the kubelet's where one exists, with the "actorlet"
// namespace instead of "kubelet".
//
// New registers them on the registry its caller passes, never on
// prometheus.DefaultRegisterer, so an embedding service keeps its own
// registry clean and tests use fresh ones. A nil *Metrics is valid: every
// method is then a no-op, so code paths work without metrics.
//
// The metrics (durations in seconds, times in Unix seconds):
//
//	name                                          type       labels
//	actorlet_pleg_relist_duration_seconds         histogram  -
//	actorlet_pleg_relist_interval_seconds         histogram  -
//	actorlet_pleg_last_seen_seconds               gauge      -
//	actorlet_pleg_relist_errors_total             counter    -
//	actorlet_pleg_event_stream_state              gauge      state
//	actorlet_pleg_event_stream_silences_total     counter    -
//	actorlet_pleg_exit_path                       gauge      path
//	actorlet_pleg_task_exits_total                counter    -
//	actorlet_running_pods                         gauge      -
//	actorlet_running_containers                   gauge      -
//	actorlet_container_restarts_total             counter    namespace, pod, container
//	actorlet_probe_results_total                  counter    probe_type, result
//	actorlet_pod_start_duration_seconds           histogram  -
//	actorlet_runtime_operations_duration_seconds  histogram  operation
//	actorlet_runtime_operations_errors_total      counter    operation
//	actorlet_pod_actors                           gauge      -
//	actorlet_pod_actor_restarts_total             counter    -
//	actorlet_pod_sync_duration_seconds            histogram  -
//	actorlet_mailbox_messages_total               counter    kind
//
// The method that records each metric documents its meaning. Label values
// are bounded: operations, probe types, results, actor kinds and event
// stream states are fixed words; namespace, pod and container follow the desired pods (see
// ForgetPod).
package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Namespace prefixes every metric name.
const Namespace = "actorlet"

// Label names.
const (
	LabelNamespace = "namespace"
	LabelPod       = "pod"
	LabelContainer = "container"
	LabelProbeType = "probe_type"
	LabelResult    = "result"
	LabelOperation = "operation"
	LabelKind      = "kind"
	LabelState     = "state"
	LabelPath      = "path"
)

// Histogram buckets, in seconds.
var (
	// relistDurationBuckets is the kubelet's (Prometheus' defaults).
	relistDurationBuckets = prometheus.DefBuckets
	// relistIntervalBuckets centre on the default 1 s relist period and
	// reach the kubelet's 3 min PLEG health threshold.
	relistIntervalBuckets = []float64{0.1, 0.25, 0.5, 0.75, 0.9, 1, 1.1, 1.25, 1.5, 2, 3, 5, 10, 30, 60, 180}
	// podStartBuckets run from half a second to an hour, as the kubelet's
	// pod start SLI buckets.
	podStartBuckets = []float64{0.5, 1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60, 120, 180, 300, 600, 900, 1800, 3600}
	// operationBuckets cover fast API calls (ms) to stops with a grace
	// period and image pulls (minutes).
	operationBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}
)

// Metrics records actorlet's metrics. Create it with New; a nil *Metrics
// records nothing. It is safe for concurrent use.
type Metrics struct {
	relistDuration prometheus.Histogram
	relistInterval prometheus.Histogram
	relistLastSeen prometheus.Gauge
	relistErrors   prometheus.Counter
	streamState    *prometheus.GaugeVec
	streamSilences prometheus.Counter
	exitPath       *prometheus.GaugeVec
	taskExits      prometheus.Counter

	runningPods       prometheus.Gauge
	runningContainers prometheus.Gauge
	containerRestarts *prometheus.CounterVec
	probeResults      *prometheus.CounterVec
	podStartDuration  prometheus.Histogram

	runtimeOpDuration *prometheus.HistogramVec
	runtimeOpErrors   *prometheus.CounterVec

	podActors        prometheus.Gauge
	podActorRestarts prometheus.Counter
	podSyncDuration  prometheus.Histogram
	mailboxMessages  *prometheus.CounterVec

	// mu guards lastRelistStart, the start of the previous relist (zero
	// before the first), for the relist interval.
	mu              sync.Mutex
	lastRelistStart time.Time
}

// New creates actorlet's metrics and registers them on reg. A nil reg
// registers nothing: the metrics record but nobody can gather them. New
// panics, as prometheus.MustRegister does, when reg already holds a metric
// of the same name, e.g. when New is called twice with one registry.
//
// The runtime operation error counters start at 0 for every operation in
// Operations, so a rate of errors is defined before the first one.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		relistDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "pleg", Name: "relist_duration_seconds",
			Help:    "Duration in seconds of PLEG relists (listing the runtime and diffing the snapshot), failed ones included.",
			Buckets: relistDurationBuckets,
		}),
		relistInterval: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "pleg", Name: "relist_interval_seconds",
			Help:    "Time in seconds between the starts of consecutive PLEG relists.",
			Buckets: relistIntervalBuckets,
		}),
		relistLastSeen: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "pleg", Name: "last_seen_seconds",
			Help: "Unix time in seconds at which the last successful PLEG relist started.",
		}),
		relistErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "pleg", Name: "relist_errors_total",
			Help: "Number of PLEG relists that failed to list the runtime.",
		}),
		streamState: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "pleg", Name: "event_stream_state",
			Help: "1 for the state the runtime's event stream is in (down, healthy, silent, confirming), 0 for the others; absent without an event stream.",
		}, []string{LabelState}),
		streamSilences: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "pleg", Name: "event_stream_silences_total",
			Help: "Number of times a relist found a change the open event stream never reported, and the stream was replaced.",
		}),
		exitPath: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "pleg", Name: "exit_path",
			Help: "1 for the fastest path a container's death reaches its pod by now (containerd: its containerd's task exit; runtime-events: the runtime's die event; relist), 0 for the others.",
		}, []string{LabelPath}),
		taskExits: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "pleg", Name: "task_exits_total",
			Help: "Number of this node's container deaths reported by the runtime's containerd (task exits of the containers' own processes; exec exits are not counted).",
		}),
		runningPods: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "running_pods",
			Help: "Number of pods with a running sandbox or app container.",
		}),
		runningContainers: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "running_containers",
			Help: "Number of running app containers (sandboxes and init containers excluded).",
		}),
		containerRestarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "container_restarts_total",
			Help: "Number of times actorlet restarted a container (a new instance after the previous one exited).",
		}, []string{LabelNamespace, LabelPod, LabelContainer}),
		probeResults: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "probe_results_total",
			Help: "Number of container probe results, by probe type and result.",
		}, []string{LabelProbeType, LabelResult}),
		podStartDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "pod_start_duration_seconds",
			Help:    "Duration in seconds from a pod's manifest being seen to all of its containers running.",
			Buckets: podStartBuckets,
		}),
		runtimeOpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "runtime_operations_duration_seconds",
			Help:    "Duration in seconds of container runtime calls, by operation, failed ones included.",
			Buckets: operationBuckets,
		}, []string{LabelOperation}),
		runtimeOpErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "runtime_operations_errors_total",
			Help: "Number of container runtime calls that returned an error, by operation.",
		}, []string{LabelOperation}),
		podActors: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "pod_actors",
			Help: "Number of live pod actors (one per pod UID the router knows).",
		}),
		podActorRestarts: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "pod_actor_restarts_total",
			Help: "Number of times the supervisor restarted a pod actor after a panic.",
		}),
		podSyncDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "pod_sync_duration_seconds",
			Help:    "Duration in seconds of pod syncs: carrying out one plan and reading the pod's containers back.",
			Buckets: operationBuckets,
		}),
		mailboxMessages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "mailbox_messages_total",
			Help: "Number of user messages processed by actors, by actor kind.",
		}, []string{LabelKind}),
	}
	for _, op := range Operations {
		m.runtimeOpErrors.WithLabelValues(op)
	}
	if reg != nil {
		reg.MustRegister(m.collectors()...)
	}
	return m
}

// collectors returns every metric of m.
func (m *Metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{
		m.relistDuration, m.relistInterval, m.relistLastSeen, m.relistErrors, m.streamState, m.streamSilences, m.exitPath, m.taskExits,
		m.runningPods, m.runningContainers, m.containerRestarts, m.probeResults, m.podStartDuration,
		m.runtimeOpDuration, m.runtimeOpErrors,
		m.podActors, m.podActorRestarts, m.podSyncDuration, m.mailboxMessages,
	}
}
