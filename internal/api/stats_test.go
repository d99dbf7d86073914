package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/actorlet/actorlet/internal/stats"
)

// statsBackend is a fakeBackend that serves stats.
type statsBackend struct {
	fakeBackend
	summary *statsapi.Summary
	err     error
	only    []bool // onlyCPUAndMemory of each call
}

func (s *statsBackend) StatsSummary(_ context.Context, only bool) (*statsapi.Summary, error) {
	s.only = append(s.only, only)
	return s.summary, s.err
}

func (s *statsBackend) MachineInfo(context.Context) (stats.MachineInfo, error) {
	return stats.MachineInfo{NumCores: 2, MemoryCapacity: 8 << 30}, s.err
}

func u64(v uint64) *uint64 { return &v }

func testSummary() *statsapi.Summary {
	at := metav1.NewTime(t0)
	return &statsapi.Summary{
		Node: statsapi.NodeStats{NodeName: "n1", StartTime: at,
			CPU:    &statsapi.CPUStats{Time: at, UsageNanoCores: u64(5e8), UsageCoreNanoSeconds: u64(1500e9)},
			Memory: &statsapi.MemoryStats{Time: at, WorkingSetBytes: u64(1 << 30)}},
		Pods: []statsapi.PodStats{{
			PodRef:    statsapi.PodReference{Name: "web", Namespace: "default", UID: "uid-web"},
			StartTime: at,
			Containers: []statsapi.ContainerStats{{Name: "app", StartTime: at,
				CPU:    &statsapi.CPUStats{Time: at, UsageNanoCores: u64(1e9), UsageCoreNanoSeconds: u64(2500e6)},
				Memory: &statsapi.MemoryStats{Time: at, WorkingSetBytes: u64(200 << 20)}}},
			CPU:    &statsapi.CPUStats{Time: at, UsageCoreNanoSeconds: u64(2501e6)},
			Memory: &statsapi.MemoryStats{Time: at, WorkingSetBytes: u64(201 << 20)},
		}},
	}
}

func TestStatsSummaryRoute(t *testing.T) {
	b := &statsBackend{summary: testSummary()}
	h := New(b, Options{})
	rec := get(t, h, "/stats/summary")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	got := decode[statsapi.Summary](t, rec)
	if got.Node.NodeName != "n1" || *got.Pods[0].Containers[0].CPU.UsageNanoCores != 1e9 {
		t.Fatalf("summary %+v", got)
	}
	if rec := get(t, h, "/stats/summary?only_cpu_and_memory=true"); rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if fmt.Sprint(b.only) != "[false true]" {
		t.Fatalf("onlyCPUAndMemory passed %v, want [false true]", b.only)
	}
	if rec := get(t, h, "/stats/summary?only_cpu_and_memory=maybe"); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "only_cpu_and_memory") {
		t.Fatalf("bad parameter: %d %s", rec.Code, rec.Body)
	}
	m := decode[map[string]any](t, get(t, h, "/spec"))
	if m["num_cores"] != float64(2) || m["memory_capacity"] != float64(8<<30) {
		t.Fatalf("/spec %v", m)
	}
}

func TestStatsNotServed(t *testing.T) {
	// A Backend without stats: no such routes.
	if rec := get(t, New(&fakeBackend{}, Options{}), "/stats/summary"); rec.Code != http.StatusNotFound {
		t.Fatalf("%d", rec.Code)
	}
	// Stats switched off: 404 with the reason.
	b := &statsBackend{err: fmt.Errorf("stats are not collected on this node: %w", ErrNotFound)}
	rec := get(t, New(b, Options{}), "/stats/summary")
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "not collected") {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}

func TestMetricsResource(t *testing.T) {
	b := &statsBackend{summary: testSummary()}
	h := New(b, Options{})
	rec := get(t, h, "/metrics/resource")
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	ms := fmt.Sprint(t0.UnixMilli())
	for _, line := range []string{
		"# TYPE node_cpu_usage_seconds_total counter",
		"node_cpu_usage_seconds_total 1500 " + ms,
		"node_memory_working_set_bytes 1.073741824e+09 " + ms,
		`container_cpu_usage_seconds_total{container="app",namespace="default",pod="web"} 2.5 ` + ms,
		`container_memory_working_set_bytes{container="app",namespace="default",pod="web"} 2.097152e+08 ` + ms,
		`container_start_time_seconds{container="app",namespace="default",pod="web"} 1.7408304e+09`,
		`pod_cpu_usage_seconds_total{namespace="default",pod="web"} 2.501 ` + ms,
		`pod_memory_working_set_bytes{namespace="default",pod="web"} 2.10763776e+08 ` + ms,
		"resource_scrape_error 0",
	} {
		if !strings.Contains(body, line+"\n") {
			t.Errorf("/metrics/resource lacks %q:\n%s", line, body)
		}
	}
	if b.only[0] != true {
		t.Errorf("/metrics/resource asked for filesystems too")
	}
	b.err = errors.New("docker down")
	body = get(t, h, "/metrics/resource").Body.String()
	if !strings.Contains(body, "resource_scrape_error 1\n") || strings.Contains(body, "container_cpu") {
		t.Fatalf("on error:\n%s", body)
	}
}
