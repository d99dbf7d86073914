package dockerbench

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/actorlet/actorlet/bench/report"
)

// Options size the Docker benchmarks.
type Options struct {
	DetectPods, DetectExits int
	// DetectSpread adds a containerd row whose containers live 4–7.5 s
	// (fewer restarts under way at each exit).
	DetectSpread  bool
	IsolatedExits int // exits of a pod alone on its node
	DieViews      int
	Restarts      int
	// CreatedCost is how many created containers the cost of a standby
	// is measured on.
	CreatedCost int
	StartPods   int
	PodStart    PodStartOptions
	Idle        IdleOptions
}

// DefaultOptions are the sizes; quick ones are for iterating.
func DefaultOptions(quick bool) Options {
	if quick {
		return Options{DetectPods: 6, DetectExits: 20, IsolatedExits: 2, DieViews: 3, Restarts: 8, CreatedCost: 20, StartPods: 20,
			PodStart: PodStartOptions{Rounds: 1, Burst: 20},
			Idle:     IdleOptions{Pods: 20, Window: 15 * time.Second, Settle: 3 * time.Second}}
	}
	return Options{DetectPods: 8, DetectExits: 100, DetectSpread: true, IsolatedExits: 5, DieViews: 10, Restarts: 30, CreatedCost: 100, StartPods: 50,
		PodStart: PodStartOptions{Rounds: 5, Burst: 20},
		Idle:     IdleOptions{Pods: 100, Window: 60 * time.Second, Settle: 10 * time.Second}}
}

// Targets of the issue.
const (
	TargetDetectP99 = 20 * time.Millisecond
	// TargetDetectContainerdP99 is issue 16's, with containerd's task
	// events, over at least 100 exits.
	TargetDetectContainerdP99 = 10 * time.Millisecond
	TargetRestartRatio        = 1.0
	TargetStartRatio          = 1.1
	TargetIdlePercent         = 1.0
)

func pcts(xs []time.Duration) (p50, p90, p99, mx time.Duration) {
	return report.Percentile(xs, 50), report.Percentile(xs, 90), report.Percentile(xs, 99), report.Percentile(xs, 100)
}

func mean(xs []time.Duration) time.Duration {
	if len(xs) == 0 {
		return -1
	}
	var s time.Duration
	for _, x := range xs {
		s += x
	}
	return s / time.Duration(len(xs))
}

func triple(xs []time.Duration) string {
	return report.Ms(report.Percentile(xs, 50)) + " / " + report.Ms(report.Percentile(xs, 90)) + " / " + report.Ms(report.Percentile(xs, 99))
}

func pair(xs []time.Duration) string {
	return report.Ms(report.Percentile(xs, 50)) + " / " + report.Ms(report.Percentile(xs, 90))
}

// RunDetect measures detection latency with events and relist only.
func (e *Env) RunDetect(o Options) ([]*report.Table, []report.Series, error) {
	t := &report.Table{
		Title:  "Detection latency on Docker: container exit → the pod's status shows it (in-process subscriber)",
		Header: []string{"mode", "exits", "p50", "p90", "p99", "max", "p50 from die event", "p99 from die event", "target p99", "vs target", "p50 / p99 to the pod actor", "pod actor: vs target"},
	}
	stages := &report.Table{
		Title:  "Where detection time goes (p50 / p90 of each stage, exits whose stages were all logged)",
		Header: []string{"mode", "exits", "FinishedAt → die event (Docker)", "die event → relist actor has it", "→ pod actor has the transition (list, inspect, diff, router)", "→ subscriber has the status (pod sync, node)"},
	}
	stages.Notes = []string{"Stage times come from actorlet's own debug logs (\"runtime event\", \"PLEG event\"), recorded in memory by a zap core that keeps only those two messages."}
	cstages := &report.Table{
		Title:  "Where detection time goes with containerd's task events (p50 / p90 / p99 of each stage)",
		Header: []string{"mode", "exits", "exited_at → shim publishes", "→ follower reads it (containerd, gRPC)", "→ pod actor has it (actorlet)", "exited_at → pod actor (p50 / p90 / p99 / max)", "→ subscriber has the status (pod sync, node)", "exited_at → Docker's die event, for comparison"},
	}
	cstages.Notes = []string{"exited_at is containerd's, which Docker copies as FinishedAt; \"shim publishes\" is the envelope's timestamp (the runc shim's publish to containerd, on the same host clock); the follower's read is taken as stream.Recv returns; the pod actor's receipt is its \"PLEG event\" debug log."}
	var series []report.Series
	p50s := map[string]time.Duration{}
	type run struct {
		mode        string
		how         string
		pods, exits int
		target      time.Duration
		// life, spread: the containers' lives (0: Detect's 1.2–2.1 s)
		life, spread time.Duration
	}
	var runs []run
	if e.RTC != nil {
		runs = append(runs, run{mode: fmt.Sprintf("containerd task events (default), %d pods", o.DetectPods), how: ModeContainerd, pods: o.DetectPods, exits: o.DetectExits, target: TargetDetectContainerdP99})
		if o.DetectSpread {
			// The same exits, fewer restarts under way at each: lives of
			// 4–7.5 s, so that a restart (0.1–0.3 s of the daemons' work)
			// rarely coincides with another pod's exit.
			runs = append(runs, run{mode: fmt.Sprintf("containerd task events, %d pods, lives 4–7.5 s", o.DetectPods), how: ModeContainerd, pods: o.DetectPods, exits: o.DetectExits,
				target: TargetDetectContainerdP99, life: 4 * time.Second, spread: 3500 * time.Millisecond})
		}
	} else {
		e.logf("detect: the containerd rows are left out: %v", e.ContainerdErr)
	}
	runs = append(runs,
		run{mode: fmt.Sprintf("Docker events only, %d pods", o.DetectPods), how: ModeEvents, pods: o.DetectPods, exits: o.DetectExits, target: TargetDetectP99},
		run{mode: fmt.Sprintf("relist only (1 s), %d pods", o.DetectPods), how: ModeRelist, pods: o.DetectPods, exits: o.DetectExits},
	)
	if o.IsolatedExits > 0 {
		if e.RTC != nil {
			runs = append(runs, run{mode: "containerd task events, 1 pod alone", how: ModeContainerd, pods: 1, exits: o.IsolatedExits})
		}
		runs = append(runs, run{mode: "Docker events only, 1 pod alone", how: ModeEvents, pods: 1, exits: o.IsolatedExits})
	}
	for _, r := range runs {
		mode := r.mode
		e.logf("detect: %s, until %d exits (load %s)", mode, r.exits, report.Load())
		if r.life == 0 {
			r.life, r.spread = 1200*time.Millisecond, 900*time.Millisecond
		}
		ds, err := e.DetectLives(r.how, r.pods, r.exits, 3*time.Minute, r.life, r.spread)
		if err != nil {
			return nil, nil, err
		}
		var fin, die, pod []time.Duration
		for _, d := range ds {
			fin = append(fin, d.FromFinished())
			if !d.PLEG.IsZero() {
				pod = append(pod, d.PLEG.Sub(d.Finished))
			}
			if x := d.FromDie(); x >= 0 {
				die = append(die, x)
			}
		}
		p50, p90, p99, mx := pcts(fin)
		tgt, vs := "", ""
		if r.target > 0 {
			tgt, vs = "≤ "+report.Ms(r.target), report.Ratio(float64(p99), float64(r.target))
		}
		podp, podvs := "", ""
		if len(pod) > 0 {
			podp = report.Ms(report.Percentile(pod, 50)) + " / " + report.Ms(report.Percentile(pod, 99)) + fmt.Sprintf(" (%d)", len(pod))
			if r.target > 0 {
				podvs = report.Ratio(float64(report.Percentile(pod, 99)), float64(r.target))
			}
		}
		t.Add(mode, len(fin), report.Ms(p50), report.Ms(p90), report.Ms(p99), report.Ms(mx),
			report.Ms(report.Percentile(die, 50)), report.Ms(report.Percentile(die, 99)), tgt, vs, podp, podvs)
		series = append(series, report.Series{Name: mode, Samples: fin})
		if r.pods > 1 && p50s[r.how] == 0 {
			p50s[r.how] = p50
		}
		var st [4][]time.Duration
		var cst [8][]time.Duration
		for _, d := range ds {
			if r.how == ModeContainerd {
				if d.PLEG.IsZero() || d.Published.IsZero() || d.Received.IsZero() {
					continue
				}
				cst[0] = append(cst[0], d.Published.Sub(d.Finished))
				cst[1] = append(cst[1], d.Received.Sub(d.Published))
				cst[2] = append(cst[2], d.PLEG.Sub(d.Received))
				cst[3] = append(cst[3], d.PLEG.Sub(d.Finished))
				cst[4] = append(cst[4], d.Known.Sub(d.PLEG))
				if !d.Die.IsZero() {
					cst[5] = append(cst[5], d.Die.Sub(d.Finished))
				}
				continue
			}
			if d.Die.IsZero() || d.EventIn.IsZero() || d.PLEG.IsZero() {
				continue
			}
			st[0] = append(st[0], d.Die.Sub(d.Finished))
			st[1] = append(st[1], d.EventIn.Sub(d.Die))
			st[2] = append(st[2], d.PLEG.Sub(d.EventIn))
			st[3] = append(st[3], d.Known.Sub(d.PLEG))
		}
		if r.how == ModeContainerd && len(cst[0]) > 0 {
			p4 := func(xs []time.Duration) string {
				a, b, c, m := pcts(xs)
				return report.Ms(a) + " / " + report.Ms(b) + " / " + report.Ms(c) + " / " + report.Ms(m)
			}
			cstages.Add(mode, len(cst[0]), triple(cst[0]), triple(cst[1]), triple(cst[2]), p4(cst[3]), triple(cst[4]), triple(cst[5]))
			e.logSlowest(mode, ds, 8)
		}
		switch {
		case len(st[0]) == 0:
		case r.how == ModeContainerd:
		default:
			stages.Add(mode, len(st[0]), pair(st[0]), pair(st[1]), pair(st[2]), pair(st[3]))
		}
	}
	t.Notes = []string{
		fmt.Sprintf("Each of %d pods runs a testworkload container that exits by itself after 1.2–2.1 s (different per pod) and is restarted at once (CrashLoopBackOff 0), so exits keep coming; every exit until %d is a sample. Latency runs from the container's FinishedAt as Docker reports it (containerd's exited_at; the die event's timestamp in the next columns) to the arrival of the PodStatusChanged, at a subscriber in the same process, that shows that container not running. \"containerd task events\" follows Docker's containerd (docker.WithContainerd, what `actorlet run` does when it finds the socket); \"Docker events only\" does not; relist only is EventRelistPeriod -1.", o.DetectPods, o.DetectExits),
		fmt.Sprintf("p50, relist only vs Docker events: %s; Docker events vs containerd: %s. The pod alone: the same workload on a node with one pod, so that no other container's event triggers a relist.",
			report.Ratio(float64(p50s[ModeRelist]), float64(p50s[ModeEvents])), report.Ratio(float64(p50s[ModeEvents]), float64(p50s[ModeContainerd]))),
	}
	if o.DieViews > 0 {
		vs, err := e.DieViews(o.DieViews)
		if err != nil {
			return nil, nil, err
		}
		running := 0
		var took []time.Duration
		for _, v := range vs {
			if v.ListState == "running" {
				running++
			}
			took = append(took, v.InspectTook)
		}
		stages.Notes = append(stages.Notes, fmt.Sprintf("What Docker says right after a die event (%d containers exiting by themselves, no actorlet): ContainerList, asked at once, still showed the container running %d times out of %d; ContainerInspect then blocked %s (median) and said exited. actorlet's relist on a die event reads ContainerList, then inspects the containers the events named.", len(vs), running, len(vs), report.Ms(report.Percentile(took, 50))))
	}
	return []*report.Table{t, stages, cstages}, series, nil
}

// restartWait is how long a pod's restart is waited for after the last
// pod was given.
const restartWait = 90 * time.Second

// RunRestart measures restart latency, Docker's restart policy first,
// then actorlet without and with standby containers (issue 16), then the
// floor (a bare `docker start` of a created container) and what a
// created container costs.
func (e *Env) RunRestart(o Options) ([]*report.Table, []report.Series, error) {
	nc := NodeConfig{Containerd: e.RTC != nil}
	path := "Docker events"
	if nc.Containerd {
		path = "containerd task events"
	}
	// The three restarters run side by side, their starts interleaved
	// (0.5 s apart), so that each meets the same load on a shared machine.
	e.logf("restart: Docker --restart=always, actorlet and actorlet with standby containers side by side, %d each (load %s)", o.Restarts, report.Load())
	e.calls = &callLog{}
	defer func() { e.calls = nil }()
	var (
		wg               sync.WaitGroup
		dk, al, as       RestartTimes
		lost, lostS      int
		errD, errA, errS error
	)
	wg.Add(3)
	go func() {
		defer wg.Done()
		dk, errD = e.RestartDocker(o.Restarts, time.Duration(o.Restarts)*10*time.Second+restartWait)
	}()
	go func() {
		defer wg.Done()
		time.Sleep(restartStagger / 3)
		al, lost, errA = e.RestartActorlet(o.Restarts, restartWait, nc)
	}()
	go func() {
		defer wg.Done()
		time.Sleep(2 * restartStagger / 3)
		ns := nc
		ns.Standby = true
		as, lostS, errS = e.RestartActorlet(o.Restarts, restartWait, ns)
	}()
	wg.Wait()
	if err := errors.Join(errD, errA, errS); err != nil {
		return nil, nil, err
	}
	e.logf("restart: bare docker start of %d created containers (load %s)", o.Restarts, report.Load())
	call, err := e.BareStart(o.Restarts)
	if err != nil {
		return nil, nil, err
	}
	e.logf("restart: the cost of %d created containers (load %s)", o.CreatedCost, report.Load())
	cost, err := e.MeasureCreatedCost(o.CreatedCost)
	if err != nil {
		return nil, nil, err
	}

	off, on := "actorlet, CrashLoopBackOff 0", "actorlet, CrashLoopBackOff 0, --standby-containers"
	ev := &report.Table{
		Title:  "Restart latency on Docker: die event → start event of the replacement (first restart of fresh containers)",
		Header: []string{"restarter", "restarts", "not restarted in 90 s", "p50", "p90", "p99", "mean", "ratio p50 (actorlet / Docker)", "ratio mean", "target"},
	}
	d50, d90, d99, _ := pcts(dk.Events)
	ev.Add("Docker --restart=always", len(dk.Events), 0, report.Ms(d50), report.Ms(d90), report.Ms(d99), report.Ms(mean(dk.Events)), "", "", "")
	for _, r := range []struct {
		name string
		t    RestartTimes
		lost int
	}{{off, al, lost}, {on, as, lostS}} {
		a50, a90, a99, _ := pcts(r.t.Events)
		ev.Add(r.name, len(r.t.Events), r.lost, report.Ms(a50), report.Ms(a90), report.Ms(a99), report.Ms(mean(r.t.Events)),
			report.Ratio(float64(a50), float64(d50)), report.Ratio(float64(mean(r.t.Events)), float64(mean(dk.Events))), "≤ 1.00×")
	}
	ev.Notes = []string{"Both sides run the testworkload image exiting by itself " + restartLife + " after each start (TW_EXIT_AFTER; a `docker kill` would cancel Docker's policy), started 1.5 s apart, a pod (container) removed once its first restart is timed, side by side in the same run, their starts interleaved 0.5 s apart. Docker restarts the same container after its restart manager's 100 ms initial delay; actorlet (" + path + ") creates and starts a new container in the pod's sandbox, or with --standby-containers starts the standby created while the first instance ran. Times are Docker's event timestamps: they hide Docker's own lag between an exit and its die event (see the next table). A pod \"not restarted\" had its first container die and no replacement start within 90 s of the last pod being given (it is left out of the percentiles)."}

	ex := &report.Table{
		Title:  "Restart latency on Docker (issue 16): the old instance's State.FinishedAt → the replacement's State.StartedAt",
		Header: []string{"restarter", "restarts", "p50", "p90", "p99", "ratio p50 (/ Docker)", "ratio p99 (/ Docker)", "target"},
	}
	x50, x90, x99, _ := pcts(dk.Exit)
	ex.Add("Docker --restart=always", len(dk.Exit), report.Ms(x50), report.Ms(x90), report.Ms(x99), "", "", "")
	for _, r := range []struct {
		name string
		t    RestartTimes
	}{{off, al}, {on, as}} {
		a50, a90, a99, _ := pcts(r.t.Exit)
		ex.Add(r.name, len(r.t.Exit), report.Ms(a50), report.Ms(a90), report.Ms(a99),
			report.Ratio(float64(a50), float64(x50)), report.Ratio(float64(a99), float64(x99)), "p50 ≤ 0.35×, p99 ≤ 0.50×")
	}
	c50, c90, c99, _ := pcts(call)
	ex.Add("floor: `docker start` of a created container (the API call)", len(call), report.Ms(c50), report.Ms(c90), report.Ms(c99),
		report.Ratio(float64(c50), float64(x50)), report.Ratio(float64(c99), float64(x99)), "")
	ex.Notes = []string{"The same restarts as the table above, timed by the containers' own clocks: from the first instance's State.FinishedAt (containerd's exited_at) to its replacement's State.StartedAt (Docker: the same container's next StartedAt, inspected as soon as its second start event is seen, before it exits again). The floor row starts, one after the other, containers created beforehand (what a standby's restart is left with), timed around the API call."}

	sg := &report.Table{
		Title:  "Where an actorlet restart's time goes (p50 / p90 / p99 of each stage)",
		Header: []string{"restarter", "restarts", "FinishedAt → follower reads containerd's exit", "→ pod actor has the death", "→ start call issued (plan, executor)", "→ StartedAt (dockerd, containerd, runc)", "start call → it returns", "FinishedAt → StartedAt"},
	}
	sg.Notes = []string{"From actorlet's debug logs (\"runtime exit\" with the follower's read time, \"PLEG event\", \"start call\", \"start returned\"), recorded in memory; the start call is logged for a standby's start only, so the row without standbys shows n/a there. StartedAt is Docker's, set while the start call runs."}
	for _, r := range []struct {
		name string
		t    RestartTimes
	}{{off, al}, {on, as}} {
		var st [6][]time.Duration
		for _, x := range r.t.Stages {
			if x.Received.IsZero() || x.Died.IsZero() {
				continue
			}
			st[0] = append(st[0], x.Received.Sub(x.Finished))
			st[1] = append(st[1], x.Died.Sub(x.Received))
			if !x.Call.IsZero() && !x.Returned.IsZero() {
				st[2] = append(st[2], x.Call.Sub(x.Died))
				st[3] = append(st[3], x.Started.Sub(x.Call))
				st[4] = append(st[4], x.Returned.Sub(x.Call))
			}
			st[5] = append(st[5], x.Started.Sub(x.Finished))
		}
		sg.Add(r.name, len(st[0]), triple(st[0]), triple(st[1]), triple(st[2]), triple(st[3]), triple(st[4]), triple(st[5]))
	}

	bs := besideStarts(overlaps(e.calls.all(), as.Node, as.Replacements))
	e.calls = nil

	mib := func(b int64) string { return fmt.Sprintf("%.1f KiB", float64(b)/1024) }
	ct := &report.Table{
		Title:  "What a created, never started container costs on Docker (a standby)",
		Header: []string{"containers", "storage driver", "dockerd live heap per container", "dockerd VmRSS before → after", "dockerd RSS per container", "containerd RSS per container", "disk per container"},
	}
	ct.Add(cost.N, cost.Driver, mib(cost.HeapAfterGC), fmt.Sprintf("%.1f → %.1f MiB", float64(cost.DockerdBefore)/(1<<20), float64(cost.DockerdAfter)/(1<<20)),
		mib(cost.DockerdRSS), mib(cost.ContainerdRSS), mib(cost.DiskBytes))
	ct.Notes = []string{"Containers of the testworkload image created one after the other (no process, no cgroup, no network namespace: Docker makes those at start). dockerd's live heap is read from its /debug/vars (on the API socket) as NextGC / 2 after its garbage collections (GOGC 100), the median of 5 before the creates and of 5 after them, the difference divided by the count; RSS is the daemons' VmRSS before and after, divided by the count (Go returns memory to the system when it will: approximate, and a negative value is noise; other clients' containers come and go meanwhile); disk is st_blocks of each container's directory under the Docker root and of its read-write and init layers."}
	return []*report.Table{ev, ex, sg, bs, ct}, []report.Series{
		{Name: "Docker --restart=always", Samples: dk.Exit}, {Name: "actorlet, backoff 0", Samples: al.Exit},
		{Name: "actorlet, backoff 0, standby", Samples: as.Exit}, {Name: "docker start of a created container", Samples: call},
	}, nil
}

// RunStart measures the start of o.StartPods pods, CLI script first.
func (e *Env) RunStart(o Options) (*report.Table, error) {
	e.logf("start: docker CLI script, %d pods (load %s)", o.StartPods, report.Load())
	cli, err := e.StartCLI(o.StartPods, 5*time.Minute)
	if err != nil {
		return nil, err
	}
	e.logf("start: actorlet, %d pods (load %s)", o.StartPods, report.Load())
	al, err := e.StartActorlet(o.StartPods, 5*time.Minute)
	if err != nil {
		return nil, err
	}
	t := &report.Table{
		Title:  fmt.Sprintf("Starting %d pods (sandbox + 1 container each) on Docker", o.StartPods),
		Header: []string{"starter", "time", "ratio (actorlet / CLI)", "target"},
	}
	t.Add(fmt.Sprintf("docker CLI script, %d pods in parallel (2 × docker run -d each)", o.StartPods), report.Ms(cli), "", "")
	t.Add("actorlet: SetHostPods → every pod Running", report.Ms(al), report.Ratio(float64(al), float64(cli)), "≤ 1.10×")
	t.Notes = []string{"The script runs one subshell per pod, all at once: `docker run -d` of the pause sandbox, then of the testworkload container in its network namespace, with actorlet's log options; its time ends when every docker run has returned. actorlet's time runs from SetHostPods with all the pods (in process) to the PodStatusChanged showing the last pod Running with its container running; its pod actors work in parallel too. Docker's side first, then actorlet's, each on a fresh set of containers."}
	return t, nil
}

// RunIdle measures the agent's idle CPU with events on and off.
func (e *Env) RunIdle(o Options) (*report.Table, error) {
	e.logf("idle: building actorlet and starting %d pods (load %s)", o.Idle.Pods, report.Load())
	rs, err := e.IdleCPU(o.Idle)
	if err != nil {
		return nil, err
	}
	t := &report.Table{
		Title:  fmt.Sprintf("Idle CPU of the actorlet binary with %d running pods", o.Idle.Pods),
		Header: []string{"mode", "window", "CPU (utime+stime)", "% of one core", "relists in window", "target", "vs target"},
	}
	for _, r := range rs {
		mode := "events on (default)"
		if !r.Events {
			mode = "--runtime-events=false"
		}
		t.Add(mode, r.Window.Round(time.Second), r.CPU, fmt.Sprintf("%.2f%%", r.Percent()), fmt.Sprintf("%.0f", r.Relists),
			fmt.Sprintf("< %.0f%%", TargetIdlePercent), report.Ratio(r.Percent(), TargetIdlePercent))
	}
	t.Notes = []string{fmt.Sprintf("`actorlet run --manifests DIR --port 0 --log-format json` on %d manifests (pause sandbox + a sleeping testworkload container each). CPU is utime+stime of the agent process from /proc/<pid>/stat (clock ticks of 10 ms) over the window, which starts %s after every container runs. The second run is the same agent restarted with --runtime-events=false, adopting the running pods. Docker's own CPU for the agent's calls is not included.", o.Idle.Pods, o.Idle.Settle)}
	return t, nil
}

// besideStarts tabulates the standby start calls of a run by what ran
// beside them (see overlaps).
func besideStarts(os []startOverlap) *report.Table {
	t := &report.Table{
		Title:  "A standby's start call (ContainerStart of the replacement) and the runtime calls under way beside it",
		Header: []string{"start calls", "n", "p50 / p90 / p99"},
	}
	row := func(name string, keep func(startOverlap) bool) {
		var d []time.Duration
		for _, o := range os {
			if keep(o) {
				d = append(d, o.Took)
			}
		}
		t.Add(name, len(d), triple(d))
	}
	row("all", func(startOverlap) bool { return true })
	row("a standby create of the same node under way", func(o startOverlap) bool { return o.SameNodeStandby > 0 })
	row("no standby create of the same node under way", func(o startOverlap) bool { return o.SameNodeStandby == 0 })
	row("any create under way (any node, Docker's restarter)", func(o startOverlap) bool { return o.SameNodeStandby+o.OtherCreates > 0 })
	row("no create under way", func(o startOverlap) bool { return o.SameNodeStandby+o.OtherCreates == 0 })
	row("no create, start or remove under way", func(o startOverlap) bool { return o.SameNodeStandby+o.OtherCreates+o.OtherStarts+o.Removes == 0 })
	row("another start under way", func(o startOverlap) bool { return o.OtherStarts > 0 })
	row("a remove under way", func(o startOverlap) bool { return o.Removes > 0 })
	t.Notes = []string{"Every Create, Start and Remove call of the benchmark's actorlet nodes (a recording wrapper of their Docker runtime) and of the Docker restarter, with its begin and end; a call is beside a start call when their intervals meet. Docker's own restarts (its restart manager) make no API call and are not counted."}
	return t
}
