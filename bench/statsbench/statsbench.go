// Package statsbench times the answer to /stats/summary (and
// /metrics/resource) for a node of 110 pods: the kubelet's default
// maxPods, each a sandbox and two app containers, over HTTP on loopback.
//
// The containers come from a fixed listing (the fake side of the runtime;
// an answer takes them from the sampler's last listing, as the agent's
// does, so no list call is timed) and their cgroups from a cgroup v1 fixture tree written to a
// temporary directory in the shape and size of this machine's files (a
// real memory.stat has 38 lines; the fixture's too). Everything else is the agent's own code:
// the collector reading and parsing four files per container, the rate
// windows, the JSON encoding and the HTTP handler.
package statsbench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/actorlet/actorlet/bench/report"
	"github.com/actorlet/actorlet/internal/api"
	"github.com/actorlet/actorlet/internal/nodeapi"
	"github.com/actorlet/actorlet/internal/stats"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// Options sizes the benchmark.
type Options struct {
	Pods     int // default 110
	PerPod   int // containers per pod, the sandbox included; default 3
	Requests int // timed requests per endpoint; default 200
	Log      io.Writer
}

// Result is one endpoint's timing.
type Result struct {
	Path          string
	Bytes         int
	P50, P99, Max time.Duration
	// CPU is the process's CPU time (user + system, server and client
	// side) per request: what an answer costs whatever the load.
	CPU time.Duration
	// Wall is the timed requests' wall time, all together.
	Wall time.Duration
}

// CPUTime is this process's user + system time so far.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

const node = "bench-stats"

// lister returns a fixed listing.
type lister struct{ containers []runtimeadapter.Container }

func (l *lister) List(context.Context, runtimeadapter.ListOptions) (runtimeadapter.ListResult, error) {
	return runtimeadapter.ListResult{Containers: l.containers, ObservedAt: time.Now()}, nil
}

// memoryStat is a cgroup v1 memory.stat as this machine's kernel writes it.
var memoryStat = func() string {
	keys := []string{"cache", "rss", "rss_huge", "shmem", "mapped_file", "dirty", "writeback", "workingset_refault_anon",
		"workingset_refault_file", "swap", "swapcached", "pgpgin", "pgpgout", "pgfault", "pgmajfault", "inactive_anon",
		"active_anon", "inactive_file", "active_file", "unevictable", "hierarchical_memory_limit", "hierarchical_memsw_limit"}
	var b strings.Builder
	for i, k := range keys {
		fmt.Fprintf(&b, "%s %d\n", k, 4096*(i+1)*1000)
	}
	for i, k := range keys[:16] {
		fmt.Fprintf(&b, "total_%s %d\n", k, 4096*(i+1)*1000)
	}
	return b.String()
}()

// writeTree writes a v1 fixture tree under root for ids: /proc/self/mountinfo,
// /proc/meminfo, /proc/stat, the root cgroup and one per container.
func writeTree(root string, ids []string) error {
	files := map[string]string{
		"proc/self/mountinfo": "32 30 0:29 / /sys/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct\n" +
			"34 30 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
		"proc/meminfo":                               "MemTotal: 24683548 kB\nMemFree: 21303128 kB\n",
		"proc/stat":                                  "btime 1796162702\n",
		"sys/fs/cgroup/cpuacct/cpuacct.usage":        "1696572757495\n",
		"sys/fs/cgroup/memory/memory.usage_in_bytes": "3121156096\n",
		"sys/fs/cgroup/memory/memory.stat":           memoryStat,
	}
	for i, id := range ids {
		files["sys/fs/cgroup/cpuacct/docker/"+id+"/cpuacct.usage"] = fmt.Sprintf("%d\n", 1e9*i)
		m := "sys/fs/cgroup/memory/docker/" + id + "/"
		files[m+"memory.usage_in_bytes"] = fmt.Sprintf("%d\n", 10<<20+i*4096)
		files[m+"memory.stat"] = memoryStat
	}
	for p, content := range files {
		path := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Run times the two endpoints.
func Run(o Options) ([]Result, *report.Table, error) {
	if o.Pods <= 0 {
		o.Pods = 110
	}
	if o.PerPod <= 0 {
		o.PerPod = 3
	}
	if o.Requests <= 0 {
		o.Requests = 200
	}
	root, err := os.MkdirTemp("", "actorlet-statsbench-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(root)

	start := time.Now().Add(-time.Hour)
	var ctrs []runtimeadapter.Container
	var ids []string
	for p := range o.Pods {
		for c := range o.PerPod {
			id := fmt.Sprintf("%060x%04d", p, c)
			meta := runtimeadapter.Meta{Node: node, PodUID: fmt.Sprintf("uid-%04d", p), PodName: fmt.Sprintf("pod-%04d", p),
				PodNamespace: "default", ContainerName: fmt.Sprintf("app-%d", c), Type: runtimeadapter.TypeApp}
			if c == 0 {
				meta.ContainerName, meta.Type = runtimeadapter.SandboxName, runtimeadapter.TypeSandbox
			}
			ctrs = append(ctrs, runtimeadapter.Container{ID: id, Labels: meta.Labels(), State: runtimeadapter.StateRunning,
				RawState: "running", StartedAt: start, CreatedAt: start})
			ids = append(ids, id)
		}
	}
	if err := writeTree(root, ids); err != nil {
		return nil, nil, fmt.Errorf("fixture tree: %w", err)
	}
	cg, err := stats.DetectAt(root)
	if err != nil {
		return nil, nil, err
	}
	sc, err := stats.New(stats.Options{NodeName: node, Runtime: &lister{ctrs}, Cgroups: cg, RootDir: root, ProcRoot: root})
	if err != nil {
		return nil, nil, err
	}
	// Two samples, so every rate is computed (the sampler's steady state).
	for range 2 {
		if err := sc.Sample(context.Background()); err != nil {
			return nil, nil, err
		}
	}
	srv := httptest.NewServer(api.New(&nodeapi.Backend{Stats: sc}, api.Options{}))
	defer srv.Close()
	client := srv.Client()

	var results []Result
	for _, path := range []string{"/stats/summary", "/metrics/resource"} {
		r, err := Time(client, srv.URL, path, o.Requests)
		if err != nil {
			return nil, nil, err
		}
		if o.Log != nil {
			fmt.Fprintf(o.Log, "stats %s: p50 %s p99 %s, CPU %s per answer (load %s)\n", path, report.Ms(r.P50), report.Ms(r.P99), report.Ms(r.CPU), report.Load())
		}
		results = append(results, r)
	}
	t := &report.Table{
		Title:  fmt.Sprintf("Time to answer the stats endpoints, %d pods × %d containers (fixture cgroups, fake listing)", o.Pods, o.PerPod),
		Header: []string{"endpoint", "pods", "containers", "answer bytes", "p50", "p99", "max", "CPU per answer", "target"},
	}
	for _, r := range results {
		tgt := ""
		if r.Path == "/stats/summary" {
			tgt = "≤ 100 ms: " + map[bool]string{true: "met", false: "missed"}[r.P99 <= 100*time.Millisecond]
		}
		t.Add(r.Path, o.Pods, o.Pods*o.PerPod, r.Bytes, report.Ms(r.P50), report.Ms(r.P99), report.Ms(r.Max), report.Ms(r.CPU), tgt)
	}
	t.Notes = []string{fmt.Sprintf("GET over loopback HTTP, body read whole, %d requests after 10 of warm-up, one at a time. Each answer takes the running containers from the sampler's last listing (a fixed listing here; the agent's sampler lists Docker every --stats-interval, off the answer's path), reads 3 cgroup files per container (cpuacct.usage, memory.usage_in_bytes, memory.stat: kept open, one pread each) from a cgroup v1 fixture tree in %s (page-cached, as the kernel's own cgroup files are memory), 4 containers at a time, and encodes the answer; /metrics/resource does the same (without filesystems) and writes Prometheus text. The target is the p99. CPU per answer: this process's user + system time over the timed requests, divided by their number (the client's share included): what an answer costs whatever else runs. Load average at the end: %s.", o.Requests, os.TempDir(), report.Load())}
	return results, t, nil
}

// Time GETs base+path with client requests times, one at a time, after 10
// of warm-up, reading each body whole, and returns the latencies and this
// process's CPU time per request.
func Time(client *http.Client, base, path string, requests int) (Result, error) {
	var lat []time.Duration
	size := 0
	var cpu0 time.Duration
	var wall0 time.Time
	for i := range requests + 10 { // the first 10 warm up
		if i == 10 {
			cpu0, wall0 = CPUTime(), time.Now()
		}
		t0 := time.Now()
		resp, err := client.Get(base + path)
		if err != nil {
			return Result{}, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		d := time.Since(t0)
		if err != nil || resp.StatusCode != http.StatusOK {
			return Result{}, fmt.Errorf("GET %s: %s %v", path, resp.Status, err)
		}
		if i >= 10 {
			lat = append(lat, d)
		}
		size = len(body)
	}
	return Result{Path: path, Bytes: size, P50: report.Percentile(lat, 50), P99: report.Percentile(lat, 99), Max: report.Percentile(lat, 100),
		CPU: (CPUTime() - cpu0) / time.Duration(requests), Wall: time.Since(wall0)}, nil
}
