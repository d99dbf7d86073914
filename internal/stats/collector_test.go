package stats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// fakeLister returns a fixed listing.
type fakeLister struct {
	containers []runtimeadapter.Container
	err        error
}

func (f *fakeLister) List(_ context.Context, opts runtimeadapter.ListOptions) (runtimeadapter.ListResult, error) {
	if f.err != nil {
		return runtimeadapter.ListResult{}, f.err
	}
	var out []runtimeadapter.Container
	for _, c := range f.containers {
		if c.Labels[runtimeadapter.LabelNode] == opts.Node && (opts.All || c.State == runtimeadapter.StateRunning) {
			out = append(out, c)
		}
	}
	return runtimeadapter.ListResult{Containers: out}, nil
}

// stubReader serves usages set by the test.
type stubReader struct {
	mu   sync.Mutex
	node Usage
	by   map[string]Usage
}

func (s *stubReader) Container(id string) (Usage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.by[id]
	if !ok {
		return Usage{}, fmt.Errorf("container %s: %w", id, ErrNoCgroup)
	}
	return u, nil
}

func (s *stubReader) Node() (Usage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.node, nil
}

func (s *stubReader) setCPU(id string, ns uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id == nodeKey {
		s.node.CPUNanos = ns
		return
	}
	u := s.by[id]
	u.CPUNanos = ns
	s.by[id] = u
}

const testNode = "stats-test-node"

func ctr(id, pod, name string, typ runtimeadapter.ContainerType, state runtimeadapter.State, started time.Time) runtimeadapter.Container {
	return runtimeadapter.Container{ID: id, State: state, StartedAt: started, Labels: map[string]string{
		runtimeadapter.LabelNode: testNode, runtimeadapter.LabelPodUID: "uid-" + pod, runtimeadapter.LabelPodName: pod,
		runtimeadapter.LabelPodNamespace: "default", runtimeadapter.LabelContainerName: name,
		runtimeadapter.LabelContainerType: string(typ), runtimeadapter.LabelPodStartTime: started.Add(-time.Second).UTC().Format(time.RFC3339),
	}}
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestSummaryShapeAndRates(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clk := &clock{t: t0}
	mib := uint64(1 << 20)
	rd := &stubReader{node: Usage{CPUNanos: 100e9, Memory: MemUsage{Usage: 1000 * mib, WorkingSet: 800 * mib}}, by: map[string]Usage{
		"sb-web":   {CPUNanos: 1e6, Memory: MemUsage{Usage: mib, WorkingSet: mib}},
		"app-web":  {CPUNanos: 0, Memory: MemUsage{Usage: 300 * mib, WorkingSet: 200 * mib, RSS: 190 * mib, Limit: 512 * mib}},
		"side-web": {CPUNanos: 0, Memory: MemUsage{Usage: 10 * mib, WorkingSet: 5 * mib}},
		"sb-db":    {CPUNanos: 0, Memory: MemUsage{Usage: mib, WorkingSet: mib}},
	}}
	ls := &fakeLister{containers: []runtimeadapter.Container{
		ctr("sb-web", "web", runtimeadapter.SandboxName, runtimeadapter.TypeSandbox, runtimeadapter.StateRunning, t0),
		ctr("app-web", "web", "app", runtimeadapter.TypeApp, runtimeadapter.StateRunning, t0),
		ctr("side-web", "web", "proxy", runtimeadapter.TypeInit, runtimeadapter.StateRunning, t0),
		ctr("old-web", "web", "app", runtimeadapter.TypeApp, runtimeadapter.StateExited, t0),    // exited: not listed
		ctr("gone-web", "web", "gone", runtimeadapter.TypeApp, runtimeadapter.StateRunning, t0), // no cgroup: left out
		ctr("sb-db", "db", runtimeadapter.SandboxName, runtimeadapter.TypeSandbox, runtimeadapter.StateRunning, t0),
	}}
	c, err := New(Options{NodeName: testNode, Runtime: ls, Cgroups: rd, RootDir: t.TempDir(), Now: clk.now, ProcRoot: filepath.Join("testdata", "v1")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// t0: the sampler's first sample. t0+10s: the app used 5 s of CPU,
	// the node 12 s; a summary at t0+10.5s compares with t0 (the sample
	// at t0+10s is younger than 1 s): app 5.5 s / 10.5 s.
	if err := c.Sample(ctx); err != nil {
		t.Fatal(err)
	}
	clk.add(10 * time.Second)
	rd.setCPU("app-web", 5e9)
	rd.setCPU(nodeKey, 112e9)
	if err := c.Sample(ctx); err != nil {
		t.Fatal(err)
	}
	clk.add(500 * time.Millisecond)
	rd.setCPU("app-web", 5.5e9)
	rd.setCPU(nodeKey, 112.5e9)
	s, err := c.Summary(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if s.Node.NodeName != testNode || s.Node.StartTime.Unix() != 1796162702 {
		t.Errorf("node %s started %v; want %s, btime of the fixture", s.Node.NodeName, s.Node.StartTime, testNode)
	}
	if got, want := *s.Node.CPU.UsageNanoCores, nanoCores(cpuSample{At: t0, Nanos: 100e9}, cpuSample{At: t0.Add(10500 * time.Millisecond), Nanos: 112.5e9}); got != want {
		t.Errorf("node usageNanoCores %d, want %d", got, want)
	}
	if got, want := *s.Node.Memory.AvailableBytes, uint64(24683548*1024)-800*mib; got != want {
		t.Errorf("node availableBytes %d, want MemTotal - working set = %d", got, want)
	}
	if s.Node.Fs == nil || *s.Node.Fs.CapacityBytes == 0 {
		t.Errorf("node fs %+v: want the root dir's filesystem", s.Node.Fs)
	}
	if len(s.Pods) != 2 || s.Pods[0].PodRef.Name != "db" || s.Pods[1].PodRef.Name != "web" {
		t.Fatalf("pods %+v, want db and web in order", s.Pods)
	}
	db, web := s.Pods[0], s.Pods[1]
	if len(db.Containers) != 0 || db.Containers == nil {
		t.Errorf("db containers %+v, want an empty list (the sandbox is not one)", db.Containers)
	}
	if len(web.Containers) != 2 || web.Containers[0].Name != "app" || web.Containers[1].Name != "proxy" {
		t.Fatalf("web containers %+v, want app and proxy", web.Containers)
	}
	app := web.Containers[0]
	if got, want := *app.CPU.UsageNanoCores, uint64(523809523); got != want { // 5.5 s / 10.5 s
		t.Errorf("app usageNanoCores %d, want %d", got, want)
	}
	if *app.CPU.UsageCoreNanoSeconds != 5.5e9 || *app.Memory.WorkingSetBytes != 200*mib || *app.Memory.UsageBytes != 300*mib ||
		*app.Memory.AvailableBytes != 312*mib || *app.Memory.RSSBytes != 190*mib {
		t.Errorf("app cpu %+v memory %+v", app.CPU, app.Memory)
	}
	if !app.StartTime.Time.Equal(t0) || !web.StartTime.Time.Equal(t0.Add(-time.Second)) {
		t.Errorf("start times: app %v, pod %v", app.StartTime, web.StartTime)
	}
	// The pod adds up every container, its sandbox included.
	if got := *web.CPU.UsageCoreNanoSeconds; got != 5.5e9+1e6 {
		t.Errorf("web usageCoreNanoSeconds %d", got)
	}
	if got := *web.Memory.WorkingSetBytes; got != 206*mib {
		t.Errorf("web workingSetBytes %d, want %d", got, 206*mib)
	}
	// The kubelet's JSON field names.
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{`"nodeName":"` + testNode, `"podRef":{"name":"db","namespace":"default","uid":"uid-db"}`,
		`"usageNanoCores":`, `"usageCoreNanoSeconds":`, `"workingSetBytes":`, `"capacityBytes":`, `"containers":[]`} {
		if !strings.Contains(string(data), f) {
			t.Errorf("summary JSON lacks %s:\n%s", f, data)
		}
	}
	// only_cpu_and_memory leaves the filesystem out.
	s, err = c.Summary(ctx, true)
	if err != nil || s.Node.Fs != nil {
		t.Fatalf("only CPU and memory: fs %+v, %v", s.Node.Fs, err)
	}
}

// A container started less than MinWindow ago, never sampled: no rate yet
// (as the kubelet's first seconds), its cumulative time all the same.
func TestSummaryNewContainerHasNoRate(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clk := &clock{t: t0.Add(300 * time.Millisecond)}
	rd := &stubReader{by: map[string]Usage{"app": {CPUNanos: 2e8}}}
	ls := &fakeLister{containers: []runtimeadapter.Container{ctr("app", "p", "app", runtimeadapter.TypeApp, runtimeadapter.StateRunning, t0)}}
	c, err := New(Options{NodeName: testNode, Runtime: ls, Cgroups: rd, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Summary(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	cpu := s.Pods[0].Containers[0].CPU
	if cpu.UsageNanoCores != nil || *cpu.UsageCoreNanoSeconds != 2e8 || s.Pods[0].CPU.UsageNanoCores != nil {
		t.Fatalf("cpu %+v, pod %+v: want no rate yet", cpu, s.Pods[0].CPU)
	}
	// 2 s after its start, never sampled: the mean since its start.
	clk.add(1700 * time.Millisecond)
	rd.setCPU("app", 1e9)
	s, _ = c.Summary(context.Background(), true)
	if got := *s.Pods[0].Containers[0].CPU.UsageNanoCores; got != 5e8 {
		t.Fatalf("usageNanoCores %d, want 5e8 (1 s of CPU in 2 s)", got)
	}
}

func TestSummaryListFails(t *testing.T) {
	ls := &fakeLister{err: fmt.Errorf("docker: %w", runtimeadapter.ErrUnavailable)}
	c, err := New(Options{NodeName: testNode, Runtime: ls, Cgroups: &stubReader{}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Summary(context.Background(), false)
	if !errors.Is(err, runtimeadapter.ErrUnavailable) || !strings.Contains(err.Error(), testNode) {
		t.Fatalf("error %v: want the runtime's, naming the node", err)
	}
	if err := c.Sample(context.Background()); err == nil {
		t.Fatal("a failed list sampled")
	}
}

// The sampler forgets containers that stopped.
func TestSampleForgetsGoneContainers(t *testing.T) {
	clk := &clock{t: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	rd := &stubReader{by: map[string]Usage{"a": {}, "b": {}}}
	ls := &fakeLister{containers: []runtimeadapter.Container{
		ctr("a", "p", "a", runtimeadapter.TypeApp, runtimeadapter.StateRunning, clk.t),
		ctr("b", "p", "b", runtimeadapter.TypeApp, runtimeadapter.StateRunning, clk.t),
	}}
	c, _ := New(Options{NodeName: testNode, Runtime: ls, Cgroups: rd, Now: clk.now})
	_ = c.Sample(context.Background())
	ls.containers = ls.containers[:1]
	_ = c.Sample(context.Background())
	if _, ok := c.hist["b"]; ok || len(c.hist) != 2 { // a and the node
		t.Fatalf("history %v: want a and the node only", c.hist)
	}
}

func TestNewRequiresOptions(t *testing.T) {
	if _, err := New(Options{Runtime: &fakeLister{}, Cgroups: &stubReader{}}); err == nil {
		t.Fatal("no node name accepted")
	}
}

// The Summary JSON decodes into the kubelet's own types (what a client
// such as metrics-server does).
func TestSummaryDecodesAsKubelets(t *testing.T) {
	rd := &stubReader{by: map[string]Usage{"x": {CPUNanos: 3}}}
	ls := &fakeLister{containers: []runtimeadapter.Container{ctr("x", "p", "c", runtimeadapter.TypeApp, runtimeadapter.StateRunning, time.Now())}}
	c, _ := New(Options{NodeName: testNode, Runtime: ls, Cgroups: rd})
	s, _ := c.Summary(context.Background(), false)
	data, _ := json.Marshal(s)
	var back statsapi.Summary
	if err := json.Unmarshal(data, &back); err != nil || *back.Pods[0].Containers[0].CPU.UsageCoreNanoSeconds != 3 {
		t.Fatalf("decoded %+v, %v", back, err)
	}
}

// countingLister counts List calls.
type countingLister struct {
	fakeLister
	calls int
}

func (c *countingLister) List(ctx context.Context, opts runtimeadapter.ListOptions) (runtimeadapter.ListResult, error) {
	c.calls++
	return c.fakeLister.List(ctx, opts)
}

// An answer covers the sampler's last listing while it is at most two
// intervals old, without asking the runtime; a container stopped since
// (its cgroup gone) is left out; past two intervals it lists again.
func TestSummaryUsesTheSamplersListing(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clk := &clock{t: t0}
	rd := &stubReader{by: map[string]Usage{"a": {CPUNanos: 1}, "b": {CPUNanos: 2}}}
	ls := &countingLister{fakeLister: fakeLister{containers: []runtimeadapter.Container{
		ctr("a", "pa", "app", runtimeadapter.TypeApp, runtimeadapter.StateRunning, t0),
		ctr("b", "pb", "app", runtimeadapter.TypeApp, runtimeadapter.StateRunning, t0),
	}}}
	c, _ := New(Options{NodeName: testNode, Runtime: ls, Cgroups: rd, Now: clk.now, Interval: 10 * time.Second})
	if err := c.Sample(context.Background()); err != nil {
		t.Fatal(err)
	}
	rd.mu.Lock()
	delete(rd.by, "b") // b stopped: its cgroup is gone
	rd.mu.Unlock()
	clk.add(20 * time.Second)
	s, err := c.Summary(context.Background(), true)
	if err != nil || ls.calls != 1 || len(s.Pods) != 1 || s.Pods[0].PodRef.Name != "pa" {
		t.Fatalf("at two intervals: %d list calls, pods %+v, %v; want the sample's list, pa only", ls.calls, s.Pods, err)
	}
	clk.add(time.Millisecond)
	if _, err := c.Summary(context.Background(), true); err != nil || ls.calls != 2 {
		t.Fatalf("past two intervals: %d list calls, %v; want a new list", ls.calls, err)
	}
}
