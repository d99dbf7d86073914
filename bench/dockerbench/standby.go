package dockerbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/actorlet/actorlet/test/support/testimages"
)

// BareStart is the floor of a restart that is one start call: n
// containers of the testworkload image are created, then each is started
// with one `docker start` (ContainerStart), one after the other; it
// returns each call's time.
func (e *Env) BareStart(n int) ([]time.Duration, error) {
	defer e.CleanupRun()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ids, err := e.createIdle(ctx, n, "bench-start")
	if err != nil {
		return nil, err
	}
	var call []time.Duration
	for _, id := range ids {
		t0 := time.Now()
		if err := e.Cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
			return nil, fmt.Errorf("start container %s: %w", id[:12], err)
		}
		call = append(call, time.Since(t0))
	}
	return call, nil
}

// createIdle creates (does not start) n long-running testworkload
// containers labelled with the run's ID, as a standby is made.
func (e *Env) createIdle(ctx context.Context, n int, prefix string) ([]string, error) {
	var ids []string
	for i := range n {
		resp, err := e.Cli.ContainerCreate(ctx, &container.Config{
			Image:  testimages.TestWorkloadTag,
			Labels: map[string]string{BenchLabel: e.RunID, "io.actorlet.standby": "true"},
		}, &container.HostConfig{}, nil, nil, fmt.Sprintf("%s-%s-%d", prefix, e.RunID, i))
		if err != nil {
			return ids, err
		}
		ids = append(ids, resp.ID)
	}
	return ids, nil
}

// CreatedCost is what one created, never started container costs a
// node on Docker, from n of them: dockerd's resident memory (VmRSS)
// before and after their creates, divided by n (dockerd's heap is
// garbage-collected, so this is approximate), containerd's likewise (a
// container Docker has not started has no containerd object), and the
// disk its own files take (st_blocks of its directory under
// <DockerRootDir>/containers and of its read-write and init layers, as
// inspect's GraphDriver names them).
type CreatedCost struct {
	N                         int
	DockerdRSS, ContainerdRSS int64 // bytes per container (negative: noise)
	DiskBytes                 int64 // bytes per container
	// HeapAfterGC is dockerd's live Go heap per container: the median,
	// over 5 of its garbage collections, of NextGC / (1 + GOGC/100) from
	// its /debug/vars (GOGC 100), after the creates less before them.
	HeapAfterGC                 int64
	DockerdBefore, DockerdAfter int64 // VmRSS in bytes
	Driver                      string
}

// MeasureCreatedCost creates n containers and measures CreatedCost.
func (e *Env) MeasureCreatedCost(n int) (CreatedCost, error) {
	defer e.CleanupRun()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := CreatedCost{N: n}
	dockerd, containerd := pidOf("dockerd"), pidOf("containerd")
	c.DockerdBefore = rss(dockerd)
	cdBefore := rss(containerd)
	heapBefore := e.liveHeap(ctx)
	ids, err := e.createIdle(ctx, n, "bench-cost")
	if err != nil {
		return c, err
	}
	c.HeapAfterGC = (e.liveHeap(ctx) - heapBefore) / int64(n)
	c.DockerdAfter = rss(dockerd)
	c.DockerdRSS = (c.DockerdAfter - c.DockerdBefore) / int64(n)
	c.ContainerdRSS = (rss(containerd) - cdBefore) / int64(n)
	info, err := e.Cli.Info(ctx)
	if err != nil {
		return c, err
	}
	c.Driver = info.Driver
	var disk int64
	for _, id := range ids {
		in, err := e.Cli.ContainerInspect(ctx, id)
		if err != nil {
			return c, err
		}
		dirs := []string{filepath.Join(info.DockerRootDir, "containers", id)}
		if up := in.GraphDriver.Data["UpperDir"]; up != "" {
			layer := filepath.Dir(up)
			dirs = append(dirs, layer, layer+"-init")
		}
		for _, d := range dirs {
			disk += blocks(d)
		}
	}
	c.DiskBytes = disk / int64(n)
	return c, nil
}

// pidOf is the PID of the first process whose command name is comm (0:
// none).
func pidOf(comm string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err == nil && strings.TrimSpace(string(b)) == comm {
			return pid
		}
	}
	return 0
}

// rss is the VmRSS of pid in bytes (0 when unknown).
func rss(pid int) int64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// blocks is the disk (st_blocks × 512) of everything under dir.
func blocks(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			}
		}
		return nil
	})
	return n
}

// liveHeap is dockerd's live heap as its last garbage collection left it
// (NextGC / 2, GOGC 100), the median over its next 5 collections (within
// 20 s; fewer if it collects less often); 0 when /debug/vars does not
// answer.
func (e *Env) liveHeap(ctx context.Context) int64 {
	var samples []int64
	lastGC := int64(-1)
	deadline := time.Now().Add(20 * time.Second)
	for len(samples) < 5 && time.Now().Before(deadline) {
		ms, err := e.memstats(ctx)
		if err != nil {
			return 0
		}
		if lastGC >= 0 && ms.NumGC != lastGC {
			samples = append(samples, ms.NextGC/2)
		}
		lastGC = ms.NumGC
		time.Sleep(50 * time.Millisecond)
	}
	if len(samples) == 0 {
		return 0
	}
	slices.Sort(samples)
	return samples[len(samples)/2]
}

type dockerdMemstats struct {
	NextGC int64 `json:"NextGC"`
	NumGC  int64 `json:"NumGC"`
}

// memstats reads dockerd's runtime.MemStats from its /debug/vars (served
// on the API socket).
func (e *Env) memstats(ctx context.Context) (dockerdMemstats, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/debug/vars", nil)
	if err != nil {
		return dockerdMemstats{}, err
	}
	resp, err := e.Cli.HTTPClient().Do(req)
	if err != nil {
		return dockerdMemstats{}, err
	}
	defer resp.Body.Close()
	var vars struct {
		Memstats dockerdMemstats `json:"memstats"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&vars); err != nil {
		return dockerdMemstats{}, err
	}
	return vars.Memstats, nil
}
