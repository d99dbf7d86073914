package dockerbench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/actorlet/actorlet/bench/report"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// Issue 16's pod-start targets: one pod, manifest written → its app
// container's StartedAt, against the same two containers made by two
// `docker run`s one after the other; a burst of pods against the agent
// built from a base revision, in the same run.
const (
	TargetPodStart1Ratio     = 0.85
	TargetPodStartBurstRatio = 0.7
	TargetPodStartBurstFirst = time.Second
)

// PodStartOptions size PodStart.
type PodStartOptions struct {
	Rounds int // alternating rounds of each side
	Burst  int // pods written at once
	// BaseRev is the git revision whose agent is the burst's base (built
	// in a temporary directory); "" leaves the base out.
	BaseRev string
	// Flags are extra flags of the new agent (e.g. --parallel-pod-starts).
	Flags []string
}

// PodStarts is one side's samples: per round, the first and the last
// app container's StartedAt after the manifests were written.
type PodStarts struct {
	Name        string
	First, Last []time.Duration
	// Whole: every pod's sandbox and app running (agents' bursts only).
	Whole []time.Duration
}

// podStartManifest is a pod as the kubelet oracle's harness writes them
// (../shared/kubelet-oracle): host network, one sleeping testworkload
// container, grace 1 s.
func podStartManifest(name string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"namespace":"default"},`+
		`"spec":{"hostNetwork":true,"terminationGracePeriodSeconds":1,"containers":[{"name":"app","image":%q}]}}`, name, testimages.TestWorkloadTag)
}

// buildRev builds the agent of git revision rev into dir (its embedded
// pause binary first, as make does).
func buildRev(dir, rev string) (string, error) {
	root, err := testimages.ModuleRoot()
	if err != nil {
		return "", err
	}
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin := filepath.Join(dir, "actorlet-"+rev)
	steps := [][]string{
		{"sh", "-c", fmt.Sprintf("git -C %q archive %q | tar -x -C %q", root, rev, src)},
		{"go", "build", "-ldflags=-s -w", "-o", "internal/pauseimage/bin/pause", "./images/pause"},
		{"go", "build", "-o", bin, "./cmd/actorlet"},
	}
	for _, s := range steps {
		cmd := exec.CommandContext(ctx, s[0], s[1:]...)
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("build %s: %s: %w\n%s", rev, strings.Join(s, " "), err, out)
		}
	}
	return bin, nil
}

// agentPodStart runs the agent bin on an empty manifest directory, writes
// n manifests at once (each atomically, as the oracle's harness) and
// returns when the first and the last app container started (Docker's
// StartedAt) after the first write, and when every pod's sandbox and app
// ran (the last sandbox's or app's StartedAt).
func (e *Env) agentPodStart(bin string, flags []string, n int, dir string) (first, last, whole time.Duration, err error) {
	name := NodeName("pstart")
	defer e.CleanupNode(name)
	run, err := os.MkdirTemp(dir, "run-")
	if err != nil {
		return 0, 0, 0, err
	}
	manifests := filepath.Join(run, "manifests")
	if err := os.Mkdir(manifests, 0o755); err != nil {
		return 0, 0, 0, err
	}
	args := append([]string{"run", "--manifests", manifests, "--node-name", name, "--root-dir", filepath.Join(run, "root"),
		"--port", "-1", "--log-format", "json"}, flags...)
	a, err := startAgent(bin, args, filepath.Join(run, "agent.log"))
	if err != nil {
		return 0, 0, 0, err
	}
	defer a.stop()
	if err := a.waitLog("runtime event stream up", 30*time.Second); err != nil {
		return 0, 0, 0, err
	}
	time.Sleep(500 * time.Millisecond) // the first relist's and the exits' subscriptions settle
	for i := range n {
		tmp := filepath.Join(manifests, fmt.Sprintf(".p%d.tmp", i))
		if err := os.WriteFile(tmp, []byte(podStartManifest(fmt.Sprintf("ps-%d", i))), 0o644); err != nil {
			return 0, 0, 0, err
		}
	}
	t0 := time.Now()
	for i := range n {
		if err := os.Rename(filepath.Join(manifests, fmt.Sprintf(".p%d.tmp", i)), filepath.Join(manifests, fmt.Sprintf("ps-%d.json", i))); err != nil {
			return 0, 0, 0, err
		}
	}
	starts, err := e.appStarts(runtimeadapter.LabelNode+"="+name, n, 2*time.Minute)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%w (agent log: %s)", err, a.tail())
	}
	sbs, err := e.appStarts(runtimeadapter.LabelNode+"="+name, n, 2*time.Minute, runtimeadapter.LabelContainerType+"="+string(runtimeadapter.TypeSandbox))
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%w (agent log: %s)", err, a.tail())
	}
	return starts[0].Sub(t0), starts[len(starts)-1].Sub(t0), max(starts[len(starts)-1].Sub(t0), sbs[len(sbs)-1].Sub(t0)), nil
}

// appStarts waits until n app containers matching label (and more) run
// and returns their StartedAt, earliest first. With a node's label and
// no more, only its app containers count.
func (e *Env) appStarts(label string, n int, timeout time.Duration, more ...string) ([]time.Time, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	f := filters.NewArgs(filters.Arg("label", label), filters.Arg("status", "running"))
	for _, l := range more {
		f.Add("label", l)
	}
	if strings.HasPrefix(label, runtimeadapter.LabelNode) && len(more) == 0 {
		f.Add("label", runtimeadapter.LabelContainerType+"="+string(runtimeadapter.TypeApp))
	}
	for {
		list, err := e.Cli.ContainerList(ctx, container.ListOptions{Filters: f})
		if err != nil {
			return nil, fmt.Errorf("%d app containers running: %w", n, err)
		}
		if len(list) >= n {
			var out []time.Time
			for _, c := range list {
				t, err := e.startedAt(ctx, c.ID)
				if err != nil {
					return nil, err
				}
				out = append(out, t)
			}
			slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
			return out, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%d of %d app containers running after %s", len(list), n, timeout)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// cliPodStart makes one pod's two containers as the oracle's
// runtime-compare.sh does — `docker run -d` of the pause sandbox, then of
// the testworkload container, host network, actorlet's log options — and
// returns the app's StartedAt after the first command began.
func (e *Env) cliPodStart(round int) (time.Duration, error) {
	label := BenchLabel + "=" + e.RunID
	defer e.CleanupRun()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	common := []string{"run", "-d", "--net=host", "--label", label, "--log-driver", "json-file", "--log-opt", "max-size=10m", "--log-opt", "max-file=5"}
	t0 := time.Now()
	for _, img := range []string{testimages.PauseTag, testimages.TestWorkloadTag} {
		kind := "sb"
		if img == testimages.TestWorkloadTag {
			kind = "app"
		}
		args := append(slices.Clone(common), "--name", fmt.Sprintf("bench-pstart-%s-%s-%d", e.RunID, kind, round), img)
		if out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput(); err != nil {
			return 0, fmt.Errorf("docker %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	t, err := e.startedAt(ctx, fmt.Sprintf("bench-pstart-%s-app-%d", e.RunID, round))
	if err != nil {
		return 0, err
	}
	return t.Sub(t0), nil
}

// apiMode is how apiPod makes a pod's two containers.
type apiMode int

const (
	// apiSequential: create and start the sandbox, then the app.
	apiSequential apiMode = iota
	// apiPrecreated: both created before the clock starts; then the
	// sandbox's start, then the app's (the floor of any agent that
	// creates ahead and starts the app after its sandbox).
	apiPrecreated
	// apiParallel: the sandbox's create + start and the app's at once
	// (the floor for a pod whose app joins no namespace of its sandbox,
	// started beside it).
	apiParallel
	// apiAppsFirst (bursts only): every pod's app created and started
	// first; each pod's sandbox created and started once every app of the
	// burst runs (the floor of an order that puts the apps of pods whose
	// app joins nothing of the sandbox before all sandboxes).
	apiAppsFirst
	// apiAppStartsFirst (bursts only): each pod's sandbox and app created
	// at once, the app started once both exist; the sandboxes started
	// once every app of the burst runs (the floor of an agent that keeps
	// a sandbox's create before its app's start and defers only the
	// sandbox's start behind the burst's apps).
	apiAppStartsFirst
)

// apiPodStart is the runtime's own work for one pod, through its API with
// no CLI and no agent (see apiMode). It returns the app's StartedAt after
// the first call began.
func (e *Env) apiPodStart(mode apiMode) (time.Duration, error) {
	defer e.CleanupRun()
	return e.apiPod(mode)
}

// benchAppLabel marks the app containers made through the API.
const benchAppLabel = BenchLabel + ".app"

// apiPod is apiPodStart without the clean-up; its containers carry
// BenchLabel, the app benchAppLabel too.
func (e *Env) apiPod(mode apiMode) (time.Duration, error) {
	precreate := mode == apiPrecreated
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	create := func(img string) (string, error) { return e.apiCreate(ctx, img) }
	var ids []string
	if precreate {
		for _, img := range []string{testimages.PauseTag, testimages.TestWorkloadTag} {
			id, err := create(img)
			if err != nil {
				return 0, err
			}
			ids = append(ids, id)
		}
	}
	t0 := time.Now()
	if mode == apiParallel {
		ids = make([]string, 2)
		errs := make(chan error, 2)
		for i, img := range []string{testimages.PauseTag, testimages.TestWorkloadTag} {
			go func() {
				id, err := create(img)
				if err == nil {
					ids[i] = id
					err = e.Cli.ContainerStart(ctx, id, container.StartOptions{})
				}
				errs <- err
			}()
		}
		for range 2 {
			if err := <-errs; err != nil {
				return 0, err
			}
		}
	}
	for i, img := range []string{testimages.PauseTag, testimages.TestWorkloadTag} {
		if mode == apiParallel {
			break
		}
		if !precreate {
			id, err := create(img)
			if err != nil {
				return 0, err
			}
			ids = append(ids, id)
		}
		if err := e.Cli.ContainerStart(ctx, ids[i], container.StartOptions{}); err != nil {
			return 0, err
		}
	}
	t, err := e.startedAt(ctx, ids[1])
	if err != nil {
		return 0, err
	}
	return t.Sub(t0), nil
}

// apiBurst is the runtime's floor for a burst: n pods' sandbox and app
// created and started through Docker's API, all pods at once, no agent.
// It returns the first and the last app's StartedAt after the calls
// began.
func (e *Env) apiBurst(n int, mode apiMode) (first, last time.Duration, err error) {
	defer e.CleanupRun()
	t0 := time.Now()
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := e.apiPod(mode)
			errs <- err
		}()
	}
	return e.burstStarts(errs, n, t0)
}

// apiBurstAppsFirst is apiBurst for apiAppsFirst and apiAppStartsFirst:
// each pod in its own goroutine; the sandboxes' starts (and, for
// apiAppsFirst, creates) wait until every app of the burst started.
func (e *Env) apiBurstAppsFirst(n int, mode apiMode) (first, last time.Duration, err error) {
	defer e.CleanupRun()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	create := func(img string) (string, error) { return e.apiCreate(ctx, img) }
	var appsUp sync.WaitGroup
	appsUp.Add(n)
	errs := make(chan error, n)
	t0 := time.Now()
	for range n {
		go func() {
			appDone := sync.OnceFunc(appsUp.Done)
			defer appDone()
			sb := make(chan error, 1)
			var sbID string
			if mode == apiAppStartsFirst {
				go func() {
					var err error
					sbID, err = create(testimages.PauseTag)
					sb <- err
				}()
			}
			app, err := create(testimages.TestWorkloadTag)
			if mode == apiAppStartsFirst {
				if serr := <-sb; err == nil {
					err = serr
				}
			}
			if err == nil {
				err = e.Cli.ContainerStart(ctx, app, container.StartOptions{})
			}
			appDone()
			if err != nil {
				errs <- err
				return
			}
			appsUp.Wait()
			if mode == apiAppsFirst {
				if sbID, err = create(testimages.PauseTag); err != nil {
					errs <- err
					return
				}
			}
			errs <- e.Cli.ContainerStart(ctx, sbID, container.StartOptions{})
		}()
	}
	return e.burstStarts(errs, n, t0)
}

// burstFloors are the bursts made through Docker's API with no agent, in
// each round after the agents'.
var burstFloors = []struct {
	name string
	mode apiMode
}{
	{"Docker API, every pod at once, no agent (the floor)", apiSequential},
	{"Docker API, every pod at once, sandbox and app at once (the floor, app beside)", apiParallel},
	{"Docker API, every app first, then the sandboxes (the floor, apps first)", apiAppsFirst},
	{"Docker API, sandbox and app created at once, every app started first, then the sandboxes (the floor, app starts first)", apiAppStartsFirst},
}

// PodStart measures issue 16's pod starts: per round, in turn, one pod
// by the new agent, by the base agent, by two `docker run`s, through the
// API (create + start ×2) and as two bare starts of created containers;
// then a burst of o.Burst pods by the base agent and by the new one. It
// returns the samples of each side.
func (e *Env) PodStart(o PodStartOptions) (one, burst []PodStarts, err error) {
	dir, err := os.MkdirTemp("", "actorlet-bench-pstart-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	newBin, err := buildAgent(dir)
	if err != nil {
		return nil, nil, err
	}
	type side struct {
		name  string
		bin   string
		flags []string
	}
	sides := []side{{"actorlet (this tree)", newBin, o.Flags}}
	if o.BaseRev != "" {
		e.logf("pstart: building the base agent at %s", o.BaseRev)
		baseBin, err := buildRev(dir, o.BaseRev)
		if err != nil {
			return nil, nil, err
		}
		sides = append(sides, side{"actorlet at " + o.BaseRev + " (base)", baseBin, nil})
	}
	one = make([]PodStarts, len(sides)+4)
	burst = make([]PodStarts, len(sides)+len(burstFloors))
	for j, f := range burstFloors {
		burst[len(sides)+j].Name = f.name
	}
	for i, s := range sides {
		one[i].Name, burst[i].Name = s.name, s.name
	}
	one[len(sides)].Name = "2 × docker run -d, one after the other (CLI)"
	one[len(sides)+1].Name = "Docker API: create + start, sandbox then app (no CLI, no agent)"
	one[len(sides)+2].Name = "Docker API: start + start of the two created containers (the floor)"
	one[len(sides)+3].Name = "Docker API: sandbox and app at once, each create + start (the floor, app beside)"
	for r := range o.Rounds {
		e.logf("pstart: round %d of %d, 1 pod (load %s)", r+1, o.Rounds, report.Load())
		for k := range sides {
			i := (k + r) % len(sides) // alternate which side goes first
			s := sides[i]
			_, d, _, err := e.agentPodStart(s.bin, s.flags, 1, dir)
			if err != nil {
				return nil, nil, fmt.Errorf("1 pod, %s: %w", s.name, err)
			}
			one[i].First, one[i].Last = append(one[i].First, d), append(one[i].Last, d)
		}
		measures := []func() (time.Duration, error){
			func() (time.Duration, error) { return e.cliPodStart(r) },
			func() (time.Duration, error) { return e.apiPodStart(apiSequential) },
			func() (time.Duration, error) { return e.apiPodStart(apiPrecreated) },
			func() (time.Duration, error) { return e.apiPodStart(apiParallel) },
		}
		for j, m := range measures {
			d, err := m()
			if err != nil {
				return nil, nil, fmt.Errorf("1 pod, %s: %w", one[len(sides)+j].Name, err)
			}
			k := len(sides) + j
			one[k].First, one[k].Last = append(one[k].First, d), append(one[k].Last, d)
		}
	}
	for r := range o.Rounds {
		for k := range sides {
			i := (k + r) % len(sides) // alternate which side goes first
			s := sides[i]
			e.logf("pstart: round %d of %d, %d pods, %s (load %s)", r+1, o.Rounds, o.Burst, s.name, report.Load())
			f, l, w, err := e.agentPodStart(s.bin, s.flags, o.Burst, dir)
			if err != nil {
				return nil, nil, fmt.Errorf("%d pods, %s: %w", o.Burst, s.name, err)
			}
			burst[i].First, burst[i].Last, burst[i].Whole = append(burst[i].First, f), append(burst[i].Last, l), append(burst[i].Whole, w)
		}
		for j, fl := range burstFloors {
			e.logf("pstart: round %d of %d, %d pods through the API, %s (load %s)", r+1, o.Rounds, o.Burst, fl.name, report.Load())
			burstOf := e.apiBurst
			if fl.mode == apiAppsFirst || fl.mode == apiAppStartsFirst {
				burstOf = e.apiBurstAppsFirst
			}
			f, l, err := burstOf(o.Burst, fl.mode)
			if err != nil {
				return nil, nil, fmt.Errorf("%d pods through the API: %w", o.Burst, err)
			}
			k := len(sides) + j
			burst[k].First, burst[k].Last = append(burst[k].First, f), append(burst[k].Last, l)
		}
	}
	return one, burst, nil
}

// waitLog waits for a log line of the agent whose message is msg.
func (a *agent) waitLog(msg string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(a.logPath); err == nil && strings.Contains(string(b), `"msg":"`+msg) {
			return nil
		}
		if a.exited() {
			return fmt.Errorf("agent exited: %s", a.tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("agent did not log %q within %s: %s", msg, timeout, a.tail())
}

// spread is "min–max" of xs in ms.
func spread(xs []time.Duration) string {
	return report.Ms(slices.Min(xs)) + "–" + report.Ms(slices.Max(xs))
}

// RunPodStart measures issue 16's pod starts (see PodStart).
func (e *Env) RunPodStart(o PodStartOptions) ([]*report.Table, error) {
	one, burst, err := e.PodStart(o)
	if err != nil {
		return nil, err
	}
	med := func(xs []time.Duration) time.Duration { return report.Percentile(xs, 50) }
	t1 := &report.Table{
		Title:  "Pod start, 1 pod: manifest written → app container's StartedAt (Docker, host network)",
		Header: []string{"starter", "rounds", "median", "min–max", "ratio to 2 × docker run (median)", "target"},
	}
	nAgents := len(burst) - len(burstFloors)
	cli := med(one[nAgents].Last)
	for i, s := range one {
		ratio, tgt := report.Ratio(float64(med(s.Last)), float64(cli)), ""
		if i == 0 {
			tgt = fmt.Sprintf("≤ %.2f×", TargetPodStart1Ratio)
		}
		t1.Add(s.Name, len(s.Last), report.Ms(med(s.Last)), spread(s.Last), ratio, tgt)
	}
	t1.Notes = []string{fmt.Sprintf("Each round, in turn: the agent built from this tree and the base agent (which goes first alternates round by round), two `docker run -d` (pause, then testworkload; the CLI's own start included), the same through Docker's API, two bare starts of containers created beforehand, and the sandbox's and the app's create + start at once through the API. An agent runs on an empty manifest directory until its event stream is up, then the manifest is renamed into it; its time ends at the app container's StartedAt (Docker's). Extra flags of the new agent: %q.", strings.Join(o.Flags, " "))}
	tb := &report.Table{
		Title:  fmt.Sprintf("Pod start, %d pods written at once: the first and the last app container's StartedAt", o.Burst),
		Header: []string{"agent", "rounds", "first, median", "first, min–max", "all started, median", "all, min–max", "all: ratio to base", "targets", "every sandbox too, median"},
	}
	for i, s := range burst {
		ratio, tgt := "", ""
		if nAgents > 1 && i == 0 {
			ratio = report.Ratio(float64(med(s.Last)), float64(med(burst[1].Last)))
			tgt = fmt.Sprintf("all ≤ %.1f× base; first ≤ %s", TargetPodStartBurstRatio, report.Ms(TargetPodStartBurstFirst))
		}
		whole := ""
		if len(s.Whole) > 0 {
			whole = report.Ms(med(s.Whole))
		}
		tb.Add(s.Name, len(s.Last), report.Ms(med(s.First)), spread(s.First), report.Ms(med(s.Last)), spread(s.Last), ratio, tgt, whole)
	}
	tb.Notes = []string{"The agents alternate which goes first, round by round, then the API's burst; each agent is a fresh process on a fresh node name. Pods as the kubelet oracle's harness writes them (host network, one sleeping container, grace 1 s). The API's bursts: each pod's create + start of the sandbox, then of the app, every pod in its own goroutine at once; the same with each pod's sandbox and app at once; every pod's app created and started first, each pod's sandbox created and started once all apps run; and each pod's sandbox and app created at once, the app started, the sandboxes started once all apps run. The last column: the last of the agent's sandboxes and apps running (Docker's StartedAt), when every pod can be reported running."}
	return []*report.Table{t1, tb}, nil
}

// startedAt is container id's StartedAt, as Docker records it.
func (e *Env) startedAt(ctx context.Context, id string) (time.Time, error) {
	in, err := e.Cli.ContainerInspect(ctx, id)
	if err != nil {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, in.State.StartedAt)
	if err != nil {
		return time.Time{}, fmt.Errorf("container %s: StartedAt %q: %w", id, in.State.StartedAt, err)
	}
	return t, nil
}

// burstStarts waits for the n goroutines of a burst made through the API
// (each sends its error on errs), then reads the first and the last app's
// StartedAt after t0.
func (e *Env) burstStarts(errs <-chan error, n int, t0 time.Time) (first, last time.Duration, err error) {
	for range n {
		if err := <-errs; err != nil {
			return 0, 0, err
		}
	}
	starts, err := e.appStarts(BenchLabel+"="+e.RunID, n, time.Minute, benchAppLabel+"=true")
	if err != nil {
		return 0, 0, err
	}
	return starts[0].Sub(t0), starts[len(starts)-1].Sub(t0), nil
}

// apiCreate creates a host-network container of img through the API, as
// the kubelet oracle's pods are, labelled BenchLabel (and benchAppLabel
// for the app's image).
func (e *Env) apiCreate(ctx context.Context, img string) (string, error) {
	labels := map[string]string{BenchLabel: e.RunID}
	if img == testimages.TestWorkloadTag {
		labels[benchAppLabel] = "true"
	}
	hc := &container.HostConfig{NetworkMode: "host", LogConfig: container.LogConfig{Type: "json-file", Config: map[string]string{"max-size": "10m", "max-file": "5"}}}
	r, err := e.Cli.ContainerCreate(ctx, &container.Config{Image: img, Labels: labels}, hc, nil, nil, "")
	if err != nil {
		return "", fmt.Errorf("create %s: %w", img, err)
	}
	return r.ID, nil
}
