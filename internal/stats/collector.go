// Package stats reads the resource use of the node and of its pods'
// containers and answers it in the kubelet's shape: the Summary API
// (k8s.io/kubelet/pkg/apis/stats/v1alpha1, served at /stats/summary) and
// the resource metrics (/metrics/resource).
//
// The numbers come straight from the cgroup filesystem (v1 or v2, see
// Cgroups), read when asked: a few small files per container, kept open.
// Which containers run comes from the sampler's last listing (at most two
// intervals old), so an answer makes no call to the runtime. CPU
// use in nanocores needs two samples, as cAdvisor's: a sampler (Run) keeps
// each container's cumulative CPU time every Interval, and an answer
// divides what was used since the newest kept sample at least MinWindow
// old by the time between them.
package stats

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// Defaults of Options.
const (
	// DefaultInterval is the sampler's period, cAdvisor's housekeeping
	// interval (the kubelet's stats are that old at most).
	DefaultInterval = 10 * time.Second
	// DefaultMinWindow is the shortest span a CPU rate is computed over.
	DefaultMinWindow = time.Second
)

// Lister lists the node's containers; runtimeadapter.Runtime is one.
type Lister interface {
	List(ctx context.Context, opts runtimeadapter.ListOptions) (runtimeadapter.ListResult, error)
}

// Reader reads cgroups; *Cgroups is the real one.
type Reader interface {
	Container(id string) (Usage, error)
	Node() (Usage, error)
}

// Options configures a Collector.
type Options struct {
	// NodeName is the node whose containers are read (their
	// io.actorlet.node label) and the Summary's nodeName. Required.
	NodeName string
	// Runtime lists the node's running containers. Required.
	Runtime Lister
	// Cgroups reads usage. Required (see Detect).
	Cgroups Reader
	// RootDir is the node's root dir: node.fs is its filesystem, as the
	// kubelet's is that of its --root-dir. Empty: no node.fs.
	RootDir string
	// Interval is the sampler's period; 0 means DefaultInterval.
	Interval time.Duration
	// MinWindow is the shortest span a CPU rate is computed over; 0 means
	// DefaultMinWindow.
	MinWindow time.Duration
	// ProcRoot prefixes /proc/stat and /proc/meminfo (fixtures); "" the
	// host's.
	ProcRoot string
	// Now is the clock; nil means time.Now.
	Now    func() time.Time
	Logger *zap.Logger
}

// Collector answers the node's stats. Its methods are safe for concurrent
// use.
type Collector struct {
	opts     Options
	log      *zap.Logger
	boot     time.Time // the node's StartTime
	memTotal uint64    // the node's memory capacity (0: unknown)

	mu   sync.Mutex
	hist map[string]cpuHistory // by container ID; nodeKey for the node
	// list is the sampler's last listing of running containers, taken at
	// listAt: answers read the cgroups of its containers rather than ask
	// the runtime (Docker's list of 330 containers took 130–390 ms on a
	// loaded machine).
	list   []runtimeadapter.Container
	listAt time.Time
}

// nodeKey is the node's entry in Collector.hist (no container ID is empty).
const nodeKey = ""

// New returns a Collector; call Run to start its sampler.
func New(opts Options) (*Collector, error) {
	if opts.NodeName == "" || opts.Runtime == nil || opts.Cgroups == nil {
		return nil, errors.New("stats: NodeName, Runtime and Cgroups are required")
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.MinWindow <= 0 {
		opts.MinWindow = DefaultMinWindow
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &Collector{opts: opts, log: opts.Logger, hist: map[string]cpuHistory{}}
	if c.log == nil {
		c.log = zap.NewNop()
	}
	if data, err := os.ReadFile(filepath.Join(opts.ProcRoot, "/proc/stat")); err == nil {
		if bt, err := parseBootTime(data); err == nil {
			c.boot = time.Unix(bt, 0)
		}
	}
	if data, err := os.ReadFile(filepath.Join(opts.ProcRoot, "/proc/meminfo")); err == nil {
		if mi, err := parseMeminfo(data, "MemTotal"); err == nil {
			c.memTotal = mi["MemTotal"]
		}
	}
	return c, nil
}

// Machine returns the machine's capacity: the CPUs this process may use
// and MemTotal, as the node's allocatable (internal/nodeinfo) counts them.
func (c *Collector) Machine() MachineInfo {
	return MachineInfo{NumCores: runtime.NumCPU(), MemoryCapacity: c.memTotal}
}

// Interval is the sampler's period.
func (c *Collector) Interval() time.Duration { return c.opts.Interval }

// Run samples every Interval until ctx ends, then closes the cgroup files
// the Reader keeps open (when it is an io.Closer).
func (c *Collector) Run(ctx context.Context) {
	t := time.NewTicker(c.opts.Interval)
	defer t.Stop()
	if cl, ok := c.opts.Cgroups.(io.Closer); ok {
		defer cl.Close()
	}
	for {
		if err := c.Sample(ctx); err != nil && ctx.Err() == nil {
			c.log.Debug("stats sample failed", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// listing returns the running containers an answer covers: the sampler's
// last listing while it is at most two intervals old (so a container
// started since shows within an interval, and one stopped since is left
// out as its cgroup is gone), else a new listing.
func (c *Collector) listing(ctx context.Context) ([]runtimeadapter.Container, error) {
	c.mu.Lock()
	list, at := c.list, c.listAt
	c.mu.Unlock()
	if !at.IsZero() && c.opts.Now().Sub(at) <= 2*c.opts.Interval {
		return list, nil
	}
	return c.running(ctx)
}

// Sample records the cumulative CPU time of the node and of each running
// container, and forgets the containers no longer running (a Reader with
// a Retain method, as *Cgroups, closes their files).
func (c *Collector) Sample(ctx context.Context) error {
	list, err := c.running(ctx)
	if err != nil {
		return err
	}
	now := c.opts.Now()
	samples := make(map[string]cpuSample, len(list)+1)
	if u, err := c.opts.Cgroups.Node(); err == nil {
		samples[nodeKey] = cpuSample{At: now, Nanos: u.CPUNanos}
	}
	for _, ctr := range list {
		if u, err := c.opts.Cgroups.Container(ctr.ID); err == nil {
			samples[ctr.ID] = cpuSample{At: now, Nanos: u.CPUNanos}
		}
	}
	if r, ok := c.opts.Cgroups.(interface{ Retain(map[string]bool) }); ok {
		keep := make(map[string]bool, len(list))
		for _, ctr := range list {
			keep[ctr.ID] = true
		}
		r.Retain(keep) // close the files of stopped containers
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.list, c.listAt = list, now
	for id := range c.hist {
		if _, ok := samples[id]; !ok {
			delete(c.hist, id)
		}
	}
	for id, s := range samples {
		c.hist[id] = c.hist[id].add(s)
	}
	return nil
}

// running lists the node's running managed containers.
func (c *Collector) running(ctx context.Context) ([]runtimeadapter.Container, error) {
	res, err := c.opts.Runtime.List(ctx, runtimeadapter.ListOptions{Node: c.opts.NodeName})
	if err != nil {
		return nil, fmt.Errorf("stats: list containers of node %s: %w", c.opts.NodeName, err)
	}
	out := res.Containers[:0:0]
	for _, ctr := range res.Containers {
		if ctr.State == runtimeadapter.StateRunning {
			out = append(out, ctr)
		}
	}
	return out, nil
}

// cpuStats builds the CPU part of an answer for the cgroup key read at cur.
func (c *Collector) cpuStats(key string, started time.Time, cur cpuSample) *statsapi.CPUStats {
	c.mu.Lock()
	h := c.hist[key]
	c.mu.Unlock()
	st := &statsapi.CPUStats{Time: metav1.NewTime(cur.At), UsageCoreNanoSeconds: ptr(cur.Nanos)}
	if base, ok := rateBase(h, started, cur, c.opts.MinWindow); ok {
		st.UsageNanoCores = ptr(nanoCores(base, cur))
	}
	return st
}

func memStats(at time.Time, m MemUsage) *statsapi.MemoryStats {
	st := &statsapi.MemoryStats{
		Time:            metav1.NewTime(at),
		UsageBytes:      ptr(m.Usage),
		WorkingSetBytes: ptr(m.WorkingSet),
		RSSBytes:        ptr(m.RSS),
		PageFaults:      ptr(m.PageFaults),
		MajorPageFaults: ptr(m.MajorPageFaults),
	}
	if m.Limit > 0 {
		st.AvailableBytes = ptr(m.Limit - min(m.Limit, m.WorkingSet))
	}
	return st
}

// Summary answers /stats/summary: the node and each pod with a running
// container. onlyCPUAndMemory leaves the filesystem out (the kubelet's
// only_cpu_and_memory=true, what metrics-server asks for).
func (c *Collector) Summary(ctx context.Context, onlyCPUAndMemory bool) (*statsapi.Summary, error) {
	list, err := c.listing(ctx)
	if err != nil {
		return nil, err
	}
	now := c.opts.Now()
	out := &statsapi.Summary{Node: statsapi.NodeStats{NodeName: c.opts.NodeName, StartTime: metav1.NewTime(c.boot)}}
	if u, err := c.opts.Cgroups.Node(); err == nil {
		out.Node.CPU = c.cpuStats(nodeKey, time.Time{}, cpuSample{At: now, Nanos: u.CPUNanos})
		out.Node.Memory = memStats(now, u.Memory)
		if c.memTotal > 0 {
			out.Node.Memory.AvailableBytes = ptr(c.memTotal - min(c.memTotal, u.Memory.WorkingSet))
		}
	} else {
		c.log.Debug("stats: node cgroup not read", zap.Error(err))
	}
	if !onlyCPUAndMemory && c.opts.RootDir != "" {
		out.Node.Fs = fsStats(now, c.opts.RootDir)
	}

	usages, errs := c.readAll(list)
	pods := map[string]*podAcc{}
	for i, ctr := range list {
		meta, err := runtimeadapter.ParseMeta(ctr.Labels)
		if err != nil {
			continue
		}
		u, err := usages[i], errs[i]
		if err != nil {
			// Stopped since the list, or a cgroup where none is looked for.
			c.log.Debug("stats: container not read", zap.String("pod", meta.PodNamespace+"/"+meta.PodName),
				zap.String("container", meta.ContainerName), zap.Error(err))
			continue
		}
		p := pods[meta.PodUID]
		if p == nil {
			p = &podAcc{ref: statsapi.PodReference{Name: meta.PodName, Namespace: meta.PodNamespace, UID: meta.PodUID}}
			pods[meta.PodUID] = p
		}
		started := ctr.StartedAt
		if started.IsZero() {
			started = ctr.CreatedAt
		}
		podStart := started // the pod's status.startTime, else its earliest container's
		if t, err := time.Parse(time.RFC3339, ctr.Labels[runtimeadapter.LabelPodStartTime]); err == nil {
			podStart = t
		}
		if p.start.IsZero() || podStart.Before(p.start) {
			p.start = podStart
		}
		cpu := c.cpuStats(ctr.ID, started, cpuSample{At: now, Nanos: u.CPUNanos})
		p.cpuNanos += u.CPUNanos
		if cpu.UsageNanoCores != nil {
			p.nanoCores += *cpu.UsageNanoCores
			p.hasRate = true
		}
		p.mem.Usage += u.Memory.Usage
		p.mem.WorkingSet += u.Memory.WorkingSet
		p.mem.RSS += u.Memory.RSS
		p.mem.PageFaults += u.Memory.PageFaults
		p.mem.MajorPageFaults += u.Memory.MajorPageFaults
		if meta.Type == runtimeadapter.TypeSandbox {
			continue // its use counts for the pod; the kubelet lists no sandbox
		}
		p.containers = append(p.containers, statsapi.ContainerStats{
			Name:      meta.ContainerName,
			StartTime: metav1.NewTime(started),
			CPU:       cpu,
			Memory:    memStats(now, u.Memory),
		})
	}
	out.Pods = make([]statsapi.PodStats, 0, len(pods))
	for _, p := range pods {
		sort.Slice(p.containers, func(i, j int) bool { return p.containers[i].Name < p.containers[j].Name })
		ps := statsapi.PodStats{
			PodRef:     p.ref,
			StartTime:  metav1.NewTime(p.start),
			Containers: p.containers,
			CPU:        &statsapi.CPUStats{Time: metav1.NewTime(now), UsageCoreNanoSeconds: ptr(p.cpuNanos)},
			Memory:     memStats(now, p.mem),
		}
		if ps.Containers == nil {
			ps.Containers = []statsapi.ContainerStats{}
		}
		if p.hasRate {
			ps.CPU.UsageNanoCores = ptr(p.nanoCores)
		}
		out.Pods = append(out.Pods, ps)
	}
	sort.Slice(out.Pods, func(i, j int) bool {
		a, b := out.Pods[i].PodRef, out.Pods[j].PodRef
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.UID < b.UID
	})
	return out, nil
}

// readParallel is how many containers' cgroups an answer reads at once:
// the reads are system calls (three or four files each), which a second
// core and a few threads in the kernel at a time speed up.
const readParallel = 4

// readAll reads the cgroup of each container of list, readParallel at a
// time.
func (c *Collector) readAll(list []runtimeadapter.Container) ([]Usage, []error) {
	usages, errs := make([]Usage, len(list)), make([]error, len(list))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(readParallel, len(list)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(list) {
					return
				}
				usages[i], errs[i] = c.opts.Cgroups.Container(list[i].ID)
			}
		})
	}
	wg.Wait()
	return usages, errs
}

// podAcc adds up a pod's containers, its sandbox included (the kubelet
// reads the pod's cgroup, which holds them all).
type podAcc struct {
	ref        statsapi.PodReference
	start      time.Time
	containers []statsapi.ContainerStats
	cpuNanos   uint64
	nanoCores  uint64
	hasRate    bool
	mem        MemUsage
}

// fsStats is the use of the filesystem holding dir (statfs(2)); nil when
// it cannot be read.
func fsStats(at time.Time, dir string) *statsapi.FsStats {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return nil
	}
	bs := uint64(st.Bsize)
	return &statsapi.FsStats{
		Time:           metav1.NewTime(at),
		AvailableBytes: ptr(st.Bavail * bs),
		CapacityBytes:  ptr(st.Blocks * bs),
		UsedBytes:      ptr((st.Blocks - st.Bfree) * bs),
		InodesFree:     ptr(st.Ffree),
		Inodes:         ptr(st.Files),
		InodesUsed:     ptr(st.Files - st.Ffree),
	}
}

func ptr[T any](v T) *T { return &v }
