package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Probe types, the probe_type label of actorlet_probe_results_total.
const (
	ProbeLiveness  = "liveness"
	ProbeReadiness = "readiness"
	ProbeStartup   = "startup"
)

// Probe results, the result label of actorlet_probe_results_total (the
// kubelet's words).
const (
	ProbeSuccessful = "successful"
	ProbeFailed     = "failed"
	ProbeUnknown    = "unknown"
)

// SetRunning sets actorlet_running_pods to pods, the number of pods with
// a running container, and actorlet_running_containers to containers, the
// number of running app containers (sandboxes and init containers
// excluded). Negative values are set as 0.
func (m *Metrics) SetRunning(pods, containers int) {
	if m == nil {
		return
	}
	m.runningPods.Set(float64(max(pods, 0)))
	m.runningContainers.Set(float64(max(containers, 0)))
}

// IncRestart increments actorlet_container_restarts_total{namespace,pod,
// container}: actorlet started a new instance of container of pod in
// namespace after the previous one exited. First starts and replacements
// on a spec change are not restarts.
func (m *Metrics) IncRestart(namespace, pod, container string) {
	if m == nil {
		return
	}
	m.containerRestarts.WithLabelValues(namespace, pod, container).Inc()
}

// ForgetPod deletes the actorlet_container_restarts_total series of pod in
// namespace. Call it when the pod leaves the desired set for good, so
// deleted pods do not accumulate series; a pod of the same name added later
// counts from 0 again (Prometheus reads that as a counter reset).
func (m *Metrics) ForgetPod(namespace, pod string) {
	if m == nil {
		return
	}
	m.containerRestarts.DeletePartialMatch(prometheus.Labels{LabelNamespace: namespace, LabelPod: pod})
}

// ObserveProbe increments actorlet_probe_results_total{probe_type,result}:
// one probe of probeType (ProbeLiveness, ProbeReadiness, ProbeStartup)
// gave result (ProbeSuccessful, ProbeFailed, ProbeUnknown).
func (m *Metrics) ObserveProbe(probeType, result string) {
	if m == nil {
		return
	}
	m.probeResults.WithLabelValues(probeType, result).Inc()
}

// ObservePodStart observes d in actorlet_pod_start_duration_seconds: the
// time from a pod's manifest being seen to all of its containers running.
// Record it once per pod UID.
func (m *Metrics) ObservePodStart(d time.Duration) {
	if m == nil {
		return
	}
	m.podStartDuration.Observe(d.Seconds())
}
