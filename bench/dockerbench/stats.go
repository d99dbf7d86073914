package dockerbench

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/bench/report"
	"github.com/actorlet/actorlet/bench/statsbench"
	"github.com/actorlet/actorlet/internal/api"
	"github.com/actorlet/actorlet/internal/nodeapi"
	"github.com/actorlet/actorlet/internal/stats"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/supervision"
)

// StatsOptions sizes the stats benchmark on Docker.
type StatsOptions struct {
	Pods     int // pods of a sandbox and one testworkload container each
	Requests int // timed /stats/summary answers
	Rounds   int // timed rounds of the baseline
	Parallel int // the baseline's requests in flight
}

// DefaultStatsOptions are make bench's sizes (110 pods: the kubelet's
// default maxPods), or small ones for -quick.
func DefaultStatsOptions(quick bool) StatsOptions {
	if quick {
		return StatsOptions{Pods: 10, Requests: 20, Rounds: 1, Parallel: 8}
	}
	return StatsOptions{Pods: 110, Requests: 200, Rounds: 1, Parallel: 8}
}

// TargetStatsP99 is issue 15's target for /stats/summary at 110 pods.
const TargetStatsP99 = 100 * time.Millisecond

// RunStats starts o.Pods pods on a node in this process on Docker, waits
// until every container runs, and times /stats/summary as the agent
// serves it: the collector of `actorlet run` (stats.New over this Docker
// and the host's cgroups, sampling every stats.DefaultInterval in the
// background) behind the API's handler, over loopback HTTP. In the same
// run, the baseline: Docker's one-shot stats (GET
// /containers/{id}/stats?stream=false&one-shot=true) of the same
// containers, o.Parallel at a time, which is what a summary read from
// Docker rather than the cgroups would cost.
func (e *Env) RunStats(o StatsOptions) (*report.Table, error) {
	name := NodeName("stats")
	defer e.CleanupNode(name)
	node, err := e.StartNode(name, NodeConfig{Backoff: supervision.DefaultBackoffPolicy()}, nil)
	if err != nil {
		return nil, err
	}
	defer node.Close()
	var ps []*v1.Pod
	for i := range o.Pods {
		ps = append(ps, WorkloadPod(fmt.Sprintf("stats-%d", i), nil))
	}
	t0 := time.Now()
	if err := node.SetPods(ps); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ids, err := e.waitRunning(ctx, name, 2*o.Pods)
	if err != nil {
		return nil, err
	}
	e.logf("stats: %d containers of %d pods running after %s (load %s)", len(ids), o.Pods, time.Since(t0).Round(time.Second), report.Load())

	cg, err := stats.Detect()
	if err != nil {
		return nil, fmt.Errorf("stats: the host's cgroups: %w", err)
	}
	sc, err := stats.New(stats.Options{NodeName: name, Runtime: e.RT, Cgroups: cg, RootDir: node.rootDir, Interval: stats.DefaultInterval})
	if err != nil {
		return nil, err
	}
	sctx, stopSampler := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() { defer close(sampled); sc.Run(sctx) }()
	defer func() { stopSampler(); <-sampled }()
	if err := waitRates(ctx, sc, o.Pods); err != nil {
		return nil, err
	}
	srv := httptest.NewServer(api.New(&nodeapi.Backend{Stats: sc}, api.Options{}))
	defer srv.Close()
	r, err := statsbench.Time(srv.Client(), srv.URL, "/stats/summary", o.Requests)
	if err != nil {
		return nil, err
	}
	// The floor: /spec (the machine's capacity, kept in memory) through
	// the same server and client, right after: what any answer waits on
	// this machine at this load, whatever its work.
	floor, err := statsbench.Time(srv.Client(), srv.URL, "/spec", o.Requests)
	if err != nil {
		return nil, err
	}
	// The node's own work (its relist lists 2 × pods containers every
	// second) is in the process's CPU time too: measure it with no answer
	// for as long as the answers took, and take it out.
	cpu0, wall0 := statsbench.CPUTime(), time.Now()
	time.Sleep(r.Wall) // an idle window as long as the answers' (nothing to wait for)
	idle := float64(statsbench.CPUTime()-cpu0) / float64(time.Since(wall0))
	answerCPU := r.CPU - time.Duration(idle*float64(r.Wall)/float64(o.Requests))
	e.logf("stats: /stats/summary p50 %s p99 %s, CPU %s per answer, %s without the node's idle share (load %s)",
		report.Ms(r.P50), report.Ms(r.P99), report.Ms(r.CPU), report.Ms(answerCPU), report.Load())

	var rounds []time.Duration
	for range o.Rounds {
		d, err := e.oneShotStats(ctx, ids, o.Parallel)
		if err != nil {
			return nil, err
		}
		rounds = append(rounds, d)
	}
	b50, bmax := report.Percentile(rounds, 50), report.Percentile(rounds, 100)
	e.logf("stats: baseline (Docker one-shot stats) p50 %s max %s (load %s)", report.Ms(b50), report.Ms(bmax), report.Load())

	t := &report.Table{
		Title:  fmt.Sprintf("Time to answer /stats/summary on Docker, %d pods × 2 running containers", o.Pods),
		Header: []string{"answer", "pods", "containers", "answers", "p50", "p99", "max", "CPU per answer", "baseline p50 / actorlet p50", "target"},
	}
	verdict := map[bool]string{true: "met", false: "missed"}[r.P99 <= TargetStatsP99]
	t.Add("actorlet /stats/summary (cgroups)", o.Pods, len(ids), o.Requests, report.Ms(r.P50), report.Ms(r.P99), report.Ms(r.Max), report.Ms(answerCPU),
		fmt.Sprintf("%.1f×", float64(b50)/float64(r.P50)), "p99 ≤ 100 ms: "+verdict)
	t.Add("floor: /spec on the same server (no work)", "", "", o.Requests, report.Ms(floor.P50), report.Ms(floor.P99), report.Ms(floor.Max), report.Ms(floor.CPU), "", "")
	t.Add(fmt.Sprintf("baseline: Docker one-shot stats, %d at a time", o.Parallel), o.Pods, len(ids), o.Rounds, report.Ms(b50), "", report.Ms(bmax), "", "", "")
	t.Notes = []string{fmt.Sprintf("The pods (a pause sandbox and one testworkload container each) were started by an actorlet node in this process; "+
		"each /stats/summary is a GET over loopback HTTP of the API handler over the agent's collector (the host's cgroups, the sampler's last Docker listing, "+
		"sampling every %s in the background as `actorlet run` does), %d answers one at a time after 10 of warm-up, body read whole; "+
		"CPU per answer: this process's CPU time over the answers (%s each) less the node's own over an idle window as long (%.0f ms of CPU per second). A baseline round reads every one of the node's containers through "+
		"Docker's stats API (stream=false, one-shot=true), %d requests in flight, bodies read whole. Load average at the end: %s.",
		stats.DefaultInterval, o.Requests, report.Ms(r.CPU), idle*1000, o.Parallel, report.Load())}
	return t, nil
}

// waitRunning waits until node name has want running containers and
// returns their IDs.
func (e *Env) waitRunning(ctx context.Context, name string, want int) ([]string, error) {
	for {
		res, err := e.RT.List(ctx, runtimeadapter.ListOptions{Node: name})
		var ids []string
		if err == nil {
			for _, c := range res.Containers {
				if c.State == runtimeadapter.StateRunning {
					ids = append(ids, c.ID)
				}
			}
			if len(ids) >= want {
				return ids, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("stats: %d of %d containers of node %s running: %w (last list error: %v)", len(ids), want, name, ctx.Err(), err)
		case <-time.After(500 * time.Millisecond): // polling Docker; the context bounds it
		}
	}
}

// waitRates waits until the summary has pods pods, each container with a
// CPU rate (two samples of it taken).
func waitRates(ctx context.Context, sc *stats.Collector, pods int) error {
	for {
		s, err := sc.Summary(ctx, true)
		if err == nil && len(s.Pods) >= pods {
			ok := true
			for _, p := range s.Pods {
				for _, c := range p.Containers {
					ok = ok && c.CPU != nil && c.CPU.UsageNanoCores != nil
				}
			}
			if ok {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("stats: no rate for every container of %d pods: %w (last error: %v)", pods, ctx.Err(), err)
		case <-time.After(200 * time.Millisecond): // polling the sampler; the context bounds it
		}
	}
}

// oneShotStats reads Docker's one-shot stats of every container in ids,
// parallel at a time, and returns the time the round took.
func (e *Env) oneShotStats(ctx context.Context, ids []string, parallel int) (time.Duration, error) {
	t0 := time.Now()
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for _, id := range ids {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			resp, err := e.Cli.ContainerStatsOneShot(ctx, id)
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			if err != nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("docker stats of container %s: %w", id, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return time.Since(t0), first
}
