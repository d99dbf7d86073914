package stats

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// The kubelet's resource metrics (/metrics/resource), by the names and
// labels metrics-server reads. Each sample carries the time it was read.
var (
	nodeCPUDesc = prometheus.NewDesc("node_cpu_usage_seconds_total",
		"Cumulative cpu time consumed by the node in core-seconds", nil, nil)
	nodeMemDesc = prometheus.NewDesc("node_memory_working_set_bytes",
		"Current working set of the node in bytes", nil, nil)
	containerStartDesc = prometheus.NewDesc("container_start_time_seconds",
		"Start time of the container since unix epoch in seconds", []string{"container", "pod", "namespace"}, nil)
	containerCPUDesc = prometheus.NewDesc("container_cpu_usage_seconds_total",
		"Cumulative cpu time consumed by the container in core-seconds", []string{"container", "pod", "namespace"}, nil)
	containerMemDesc = prometheus.NewDesc("container_memory_working_set_bytes",
		"Current working set of the container in bytes", []string{"container", "pod", "namespace"}, nil)
	podCPUDesc = prometheus.NewDesc("pod_cpu_usage_seconds_total",
		"Cumulative cpu time consumed by the pod in core-seconds", []string{"pod", "namespace"}, nil)
	podMemDesc = prometheus.NewDesc("pod_memory_working_set_bytes",
		"Current working set of the pod in bytes", []string{"pod", "namespace"}, nil)
	scrapeErrorDesc = prometheus.NewDesc("resource_scrape_error",
		"1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
)

// SummaryFunc answers a summary of CPU and memory.
type SummaryFunc func(ctx context.Context) (*statsapi.Summary, error)

// ResourceCollector is a prometheus.Collector of the kubelet's resource
// metrics, read from summary on every scrape (only running containers, so
// gone ones leave no series behind). A failed summary sets
// resource_scrape_error to 1.
func ResourceCollector(summary SummaryFunc, timeout time.Duration) prometheus.Collector {
	return &resourceCollector{summary: summary, timeout: timeout}
}

type resourceCollector struct {
	summary SummaryFunc
	timeout time.Duration
}

func (rc *resourceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{nodeCPUDesc, nodeMemDesc, containerStartDesc, containerCPUDesc,
		containerMemDesc, podCPUDesc, podMemDesc, scrapeErrorDesc} {
		ch <- d
	}
}

func (rc *resourceCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), rc.timeout)
	defer cancel()
	s, err := rc.summary(ctx)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(scrapeErrorDesc, prometheus.GaugeValue, 1)
		return
	}
	ch <- prometheus.MustNewConstMetric(scrapeErrorDesc, prometheus.GaugeValue, 0)
	emit := func(at time.Time, d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
		ch <- prometheus.NewMetricWithTimestamp(at, prometheus.MustNewConstMetric(d, t, v, labels...))
	}
	if n := s.Node; n.CPU != nil && n.CPU.UsageCoreNanoSeconds != nil {
		emit(n.CPU.Time.Time, nodeCPUDesc, prometheus.CounterValue, seconds(*n.CPU.UsageCoreNanoSeconds))
	}
	if n := s.Node; n.Memory != nil && n.Memory.WorkingSetBytes != nil {
		emit(n.Memory.Time.Time, nodeMemDesc, prometheus.GaugeValue, float64(*n.Memory.WorkingSetBytes))
	}
	for _, p := range s.Pods {
		ns, name := p.PodRef.Namespace, p.PodRef.Name
		for _, c := range p.Containers {
			if c.StartTime.Unix() > 0 {
				ch <- prometheus.MustNewConstMetric(containerStartDesc, prometheus.GaugeValue,
					float64(c.StartTime.UnixNano())/1e9, c.Name, name, ns)
			}
			if c.CPU != nil && c.CPU.UsageCoreNanoSeconds != nil {
				emit(c.CPU.Time.Time, containerCPUDesc, prometheus.CounterValue, seconds(*c.CPU.UsageCoreNanoSeconds), c.Name, name, ns)
			}
			if c.Memory != nil && c.Memory.WorkingSetBytes != nil {
				emit(c.Memory.Time.Time, containerMemDesc, prometheus.GaugeValue, float64(*c.Memory.WorkingSetBytes), c.Name, name, ns)
			}
		}
		if p.CPU != nil && p.CPU.UsageCoreNanoSeconds != nil {
			emit(p.CPU.Time.Time, podCPUDesc, prometheus.CounterValue, seconds(*p.CPU.UsageCoreNanoSeconds), name, ns)
		}
		if p.Memory != nil && p.Memory.WorkingSetBytes != nil {
			emit(p.Memory.Time.Time, podMemDesc, prometheus.GaugeValue, float64(*p.Memory.WorkingSetBytes), name, ns)
		}
	}
}

func seconds(ns uint64) float64 { return float64(ns) / 1e9 }

// MachineInfo is what /spec answers: the machine's capacity, by the field
// names of cAdvisor's MachineInfo, which the kubelet served there.
type MachineInfo struct {
	NumCores       int    `json:"num_cores"`
	MemoryCapacity uint64 `json:"memory_capacity"`
}
