// Command actorlet-bench runs actorlet's benchmarks (issue 7) and prints
// each as a Markdown table, with the ratios of every comparison and the
// issue's targets:
//
//	relist    PLEG relist cost on the fake runtime's listings, against a
//	          map-rebuilding relist (the kubelet's generic PLEG)
//	pipeline  transitions/s through router → pod actors, and memory per
//	          idle pod actor, at 10,000 pods on the fake runtime
//	detect    detection latency on Docker, events and relist only
//	restart   restart latency on Docker against --restart=always
//	start     50 pods on Docker against a docker CLI script
//	pstart    1 pod against two docker runs, and a burst of 20 pods
//	          against the agent of -base-rev (issue 16)
//	idle      idle CPU of the actorlet binary with 100 pods, events on/off
//	stats     time to answer /stats/summary and /metrics/resource, 110 pods
//	          (fixture cgroups, fake listing)
//	stats-docker  time to answer /stats/summary, 110 pods on Docker,
//	          against Docker's one-shot stats of the same containers
//
// Usage (from the repository; `make bench` runs it all):
//
//	go run ./bench/cmd/actorlet-bench [-only detect,restart] [-quick] [-out bench/results]
//
// The Docker benchmarks need a Docker daemon; they build the test images
// and create containers only under their own node names (and the label
// io.actorlet-bench.run), removing them when done. The tables are also
// written to OUT/latest.md, latency CDFs to OUT/*.svg.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/bench/dockerbench"
	"github.com/actorlet/actorlet/bench/pipeline"
	"github.com/actorlet/actorlet/bench/relist"
	"github.com/actorlet/actorlet/bench/report"
	"github.com/actorlet/actorlet/bench/statsbench"
)

var all = []string{"relist", "pipeline", "detect", "restart", "start", "pstart", "idle", "stats", "stats-docker"}

func main() {
	// Sample the heap finely enough to attribute a pod's few kilobytes to
	// allocation sites (pipeline); set before anything allocates much.
	runtime.MemProfileRate = 64 << 10
	if err := run(os.Args[1:]); errors.Is(err, flag.ErrHelp) {
		return
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "actorlet-bench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("actorlet-bench", flag.ContinueOnError)
	only := fs.String("only", strings.Join(all, ","), "benchmarks to run, comma-separated: "+strings.Join(all, ", "))
	quick := fs.Bool("quick", false, "small sizes and short runs, for iterating (numbers not comparable to the targets)")
	out := fs.String("out", "bench/results", "directory for latest.md and the SVG plots (empty: none)")
	profiles := fs.String("profiles", "", "directory for CPU profiles of the idle agents (makes them run with --enable-pprof)")
	rounds := fs.Int("rounds", 3, "relist: interleaved rounds of each side; the fastest round is kept")
	benchtime := fs.Duration("benchtime", 400*time.Millisecond, "relist: time of each benchmark round")
	pods := fs.Int("pods", 10000, "pipeline: idle pods on the fake runtime")
	pipeProf := fs.String("pipeline-cpuprofile", "", "pipeline: write a CPU profile of the router → pod actors tries to this file")
	baseRev := fs.String("base-rev", "", "pstart: git revision whose agent is the base of the burst (built in a temporary directory); empty: no base")
	pstartRounds := fs.Int("pstart-rounds", 5, "pstart: alternating rounds of each side")
	pstartFlags := fs.String("pstart-flags", "", "pstart: extra flags of this tree's agent, space-separated")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var sel []string
	for _, s := range strings.Split(*only, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !slices.Contains(all, s) {
			return fmt.Errorf("-only %s: unknown benchmark (have %s)", s, strings.Join(all, ", "))
		}
		sel = append(sel, s)
	}
	if *quick {
		*rounds, *benchtime = 1, 100*time.Millisecond
		if *pods == 10000 {
			*pods = 1000
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	var md bytes.Buffer
	w := io.MultiWriter(os.Stdout, &md)
	log := os.Stderr
	fmt.Fprintf(w, "## actorlet benchmarks, %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	for _, l := range report.Machine() {
		fmt.Fprintf(w, "- %s\n", l)
	}
	if *quick {
		fmt.Fprintln(w, "- **quick mode**: small sizes, not comparable to the targets")
	}
	start := time.Now()
	var failed []string
	var denv *dockerbench.Env
	defer func() {
		if denv != nil {
			denv.CleanupRun()
			denv.Close()
		}
	}()
	dockerEnv := func() (*dockerbench.Env, error) {
		if denv == nil {
			fmt.Fprintf(log, "docker: connecting and building the test images\n")
			e, err := dockerbench.Setup(ctx, log)
			if err != nil {
				return nil, fmt.Errorf("docker: %w", err)
			}
			denv = e
		}
		return denv, nil
	}
	dopts := dockerbench.DefaultOptions(*quick)
	dopts.PodStart.BaseRev, dopts.PodStart.Flags = *baseRev, strings.Fields(*pstartFlags)
	if !*quick {
		dopts.PodStart.Rounds = *pstartRounds
	}
	if *profiles != "" {
		if err := os.MkdirAll(*profiles, 0o755); err != nil {
			return err
		}
		dopts.Idle.ProfileDir = *profiles
	}
	for _, b := range sel {
		if ctx.Err() != nil {
			break
		}
		t0 := time.Now()
		fmt.Fprintf(log, "== %s (load %s)\n", b, report.Load())
		var tables []*report.Table
		var err error
		switch b {
		case "relist":
			tables, err = runRelist(*rounds, *benchtime, log)
		case "pipeline":
			kills := max(*pods/10, 1)
			_, tables, err = pipeline.Run(pipeline.Options{Pods: *pods, Rounds: 3, Tries: 3, Kills: kills, Log: log, CPUProfile: *pipeProf})
		case "stats":
			var t *report.Table
			requests := 200
			if *quick {
				requests = 20
			}
			_, t, err = statsbench.Run(statsbench.Options{Requests: requests, Log: log})
			tables = []*report.Table{t}
		case "stats-docker":
			var e *dockerbench.Env
			if e, err = dockerEnv(); err == nil {
				var t *report.Table
				t, err = e.RunStats(dockerbench.DefaultStatsOptions(*quick))
				tables = []*report.Table{t}
			}
		default:
			var e *dockerbench.Env
			if e, err = dockerEnv(); err == nil {
				tables, err = runDocker(e, b, dopts, *out)
			}
		}
		if err != nil {
			fmt.Fprintf(w, "\n### %s\n\nFAILED: %v\n", b, err)
			failed = append(failed, b)
			continue
		}
		for _, t := range tables {
			t.Write(w)
		}
		fmt.Fprintf(log, "== %s done in %s\n", b, time.Since(t0).Round(time.Second))
	}
	fmt.Fprintf(w, "\nTotal time: %s; load average at the end: %s.\n", time.Since(start).Round(time.Second), report.Load())
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(*out, "latest.md"), md.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("failed: %s", strings.Join(failed, ", "))
	}
	return ctx.Err()
}

// runRelist times both relists on every size and scenario, interleaving
// the sides round by round and keeping each side's fastest round (other
// processes only ever add time).
func runRelist(rounds int, benchtime time.Duration, log io.Writer) ([]*report.Table, error) {
	testing.Init()
	if err := flag.CommandLine.Set("test.benchtime", benchtime.String()); err != nil {
		return nil, err
	}
	t := &report.Table{
		Title: "Relist cost (fake runtime's listings: pods × 3 running containers with actorlet's labels)",
		Header: []string{"scenario", "pods", "changed", "baseline ns/op", "baseline allocs/op", "baseline B/op",
			"actorlet ns/op", "actorlet allocs/op", "actorlet B/op", "speed-up (baseline/actorlet)", "target"},
	}
	for _, s := range relist.Scenarios {
		for _, pods := range relist.Sizes {
			in := relist.NewInputs(pods, s)
			best := make([]relist.Result, len(relist.Impls))
			for r := range max(rounds, 1) {
				for i, impl := range relist.Impls {
					res, ok := relist.Measure(impl, in)
					if !ok {
						return nil, fmt.Errorf("relist %s/%s/%d pods: benchmark failed", impl.Name, s.Name, pods)
					}
					if r == 0 || res.NsPerOp < best[i].NsPerOp {
						best[i] = res
					}
				}
			}
			fmt.Fprintf(log, "relist %s, %d pods: baseline %.0f ns/op, actorlet %.0f ns/op (load %s)\n", s.Name, pods, best[0].NsPerOp, best[1].NsPerOp, report.Load())
			tgt := ""
			if s.Stride == 0 && pods == 10000 {
				tgt = "< 10 ms: " + map[bool]string{true: "met", false: "missed"}[best[1].NsPerOp < 10e6]
			}
			t.Add(s.Name, pods, in.Changed,
				fmt.Sprintf("%.0f", best[0].NsPerOp), best[0].AllocsPerOp, best[0].BytesPerOp,
				fmt.Sprintf("%.0f", best[1].NsPerOp), best[1].AllocsPerOp, best[1].BytesPerOp,
				report.Ratio(best[0].NsPerOp, best[1].NsPerOp), tgt)
			in = nil
			runtime.GC()
		}
	}
	t.Notes = []string{fmt.Sprintf("Each relist diffs a listing against the previous one; every listing is in its own memory (no string compares equal by pointer), pre-built so that the runtime's work of producing it is not timed. \"changed\": containers whose state differs between the two listings that alternate in the loop (1 changed: one container; 1%%: every 100th). Baseline: bench/relist.Baseline, the kubelet generic PLEG's relist (a map of pods rebuilt per listing, records old/current, linear search per container, events map), producing the same batches as actorlet's internal/pleg.Relister (tested equal). testing.Benchmark, %s per round, %d rounds interleaved, fastest kept; `go test -bench RelistVsBaseline ./internal/pleg/` runs the same cases.", benchtime, rounds)}
	return []*report.Table{t}, nil
}

func runDocker(e *dockerbench.Env, b string, o dockerbench.Options, out string) ([]*report.Table, error) {
	plot := func(file, title string, series []report.Series) {
		if out == "" {
			return
		}
		if err := os.MkdirAll(out, 0o755); err != nil {
			return
		}
		var buf bytes.Buffer
		if err := report.CDF(&buf, title, series); err == nil {
			_ = os.WriteFile(filepath.Join(out, file), buf.Bytes(), 0o644)
		}
	}
	switch b {
	case "detect":
		ts, s, err := e.RunDetect(o)
		if err != nil {
			return nil, err
		}
		plot("detect-cdf.svg", "Detection latency on Docker (exit → pod actor's status)", s)
		return ts, nil
	case "restart":
		ts, s, err := e.RunRestart(o)
		if err != nil {
			return nil, err
		}
		plot("restart-cdf.svg", "Restart latency on Docker (exit → StartedAt of the replacement)", s)
		return ts, nil
	case "pstart":
		return e.RunPodStart(o.PodStart)
	case "start":
		t, err := e.RunStart(o)
		if err != nil {
			return nil, err
		}
		return []*report.Table{t}, nil
	case "idle":
		t, err := e.RunIdle(o)
		if err != nil {
			return nil, err
		}
		return []*report.Table{t}, nil
	}
	return nil, fmt.Errorf("unknown benchmark %s", b)
}
