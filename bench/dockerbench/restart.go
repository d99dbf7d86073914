package dockerbench

import (
	"context"
	"fmt"
	"time"

	"github.com/docker/docker/api/types/container"
	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/supervision"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// restartStagger separates the starts of the fresh containers, so that
// few restart at once and restarts are not queued behind each other's
// creates in dockerd.
const restartStagger = 1500 * time.Millisecond

// restartLife is how long each container of the restart benchmark runs
// before it exits by itself: long enough for a standby to be created
// behind it on a loaded machine (a create takes 0.3–1 s there).
const restartLife = "3s"

// RestartActorlet runs n fresh pods whose one container exits by itself
// restartLife after it starts, on a node configured by nc with CrashLoopBackOff 0
// (initial and max), events on, and returns for each the time from the
// die event of its first container to the start event of its replacement
// (Docker's event timestamps), and from the first container's
// State.FinishedAt to the replacement's State.StartedAt.
//
// A pod whose replacement has not started by timeout (after the last pod
// was given) is counted in lost, and the others are returned if there are
// at least min(MinRestarts, n).
func (e *Env) RestartActorlet(n int, timeout time.Duration, nc NodeConfig) (_ RestartTimes, lost int, _ error) {
	name := NodeName("restart")
	defer e.CleanupNode(name)
	w := e.Watch(runtimeadapter.LabelNode + "=" + name)
	defer w.Stop()
	nc.Backoff = supervision.BackoffPolicy{}
	tr := newTracer()
	if nc.Logger == nil {
		nc.Logger = tr.Logger()
	}
	node, err := e.StartNode(name, nc, nil)
	if err != nil {
		return RestartTimes{}, 0, err
	}
	defer node.Close()
	var ps []*v1.Pod
	exits := map[string]time.Duration{} // pod name → FinishedAt → StartedAt
	var stages []restartStages
	type st struct {
		dieID   string
		die     time.Time
		lat     time.Duration
		done    bool
		startID string
	}
	var byPod map[string]*st
	var evs []Ev
	// collect reads the restarts so far (per pod: the first die of an app
	// container, then the first start of another app container of the
	// pod after it; container IDs, not the restart-count label, decide),
	// and removes the pods whose restart it has, so that they do not keep
	// restarting (and loading dockerd) while the others are timed.
	collect := func() (RestartTimes, error) {
		var err error
		if evs, err = w.Events(); err != nil {
			return RestartTimes{}, fmt.Errorf("docker events: %w", err)
		}
		byPod = map[string]*st{}
		for _, ev := range evs {
			pod := ev.Attrs[runtimeadapter.LabelPodName]
			if ev.Attrs[runtimeadapter.LabelContainerType] != string(runtimeadapter.TypeApp) || pod == "" {
				continue
			}
			s := byPod[pod]
			if s == nil {
				s = &st{}
				byPod[pod] = s
			}
			switch {
			case ev.Action == "die" && s.dieID == "":
				s.dieID, s.die = ev.ID, ev.Time
			case ev.Action == "start" && s.dieID != "" && ev.ID != s.dieID && !s.done:
				s.lat, s.done, s.startID = ev.Time.Sub(s.die), true, ev.ID
			}
		}
		var out RestartTimes
		for pod, s := range byPod {
			if !s.done {
				continue
			}
			out.Events = append(out.Events, s.lat)
			if _, ok := exits[pod]; !ok {
				fin, started := e.exitAndStart(s.dieID, s.startID)
				exits[pod] = -1
				if !fin.IsZero() && !started.IsZero() && !started.Before(fin) {
					exits[pod] = started.Sub(fin)
					stages = append(stages, restartStages{Finished: fin, Started: started,
						Received: tr.field("runtime exit", "", s.dieID, "receivedAt"), Died: tr.at("PLEG event", "ContainerDied", s.dieID),
						Call: tr.at("start call", "", s.startID), Returned: tr.at("start returned", "", s.startID)})
				}
			}
			if d := exits[pod]; d >= 0 {
				out.Exit = append(out.Exit, d)
			}
		}
		out.Stages = stages
		out.Node, out.Replacements = name, map[string]bool{}
		for _, s := range byPod {
			if s.done {
				out.Replacements[s.startID] = true
			}
		}
		kept := ps[:0:0]
		for _, p := range ps {
			if _, timed := exits[p.Name]; !timed {
				kept = append(kept, p)
			}
		}
		if len(kept) < len(ps) {
			ps = kept
			if err := node.SetPods(ps); err != nil {
				return out, err
			}
		}
		return out, nil
	}
	for i := range n {
		ps = append(ps, WorkloadPod(fmt.Sprintf("restart-%d", i), map[string]string{"TW_EXIT_AFTER": restartLife}))
		if err := node.SetPods(ps); err != nil {
			return RestartTimes{}, 0, err
		}
		next := time.Now().Add(restartStagger)
		if _, err := collect(); err != nil {
			return RestartTimes{}, 0, err
		}
		time.Sleep(time.Until(next))
	}
	deadline := time.Now().Add(timeout)
	for {
		out, err := collect()
		if err != nil {
			return RestartTimes{}, 0, err
		}
		if len(out.Events) >= n {
			return out, 0, nil
		}
		if time.Now().After(deadline) {
			for pod, s := range byPod {
				if !s.done {
					var seq []string
					for _, ev := range evs {
						if ev.Attrs[runtimeadapter.LabelPodName] == pod {
							seq = append(seq, fmt.Sprintf("%s %s %s/%s", ev.Time.Format("15:04:05.000"), ev.Action, ev.Attrs[runtimeadapter.LabelContainerName], ev.ID[:8]))
						}
					}
					e.logf("restart (actorlet): pod %s without a restart: %v", pod, seq)
				}
			}
			if len(out.Events) >= min(MinRestarts, n) {
				e.logf("restart (actorlet): only %d of %d restarts within %s; reporting those", len(out.Events), n, timeout)
				return out, n - len(out.Events), nil
			}
			return RestartTimes{}, n - len(out.Events), fmt.Errorf("restart (actorlet): %d of %d restarts within %s", len(out.Events), n, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// RestartTimes are the restarts of one restarter: Events from the die
// event of the old instance to the start event of the replacement
// (Docker's event timestamps, which include dockerd's lag in handling the
// exit), Exit from the old instance's State.FinishedAt (containerd's
// exited_at) to the replacement's State.StartedAt.
type RestartTimes struct {
	Events, Exit []time.Duration
	// Stages of actorlet's restarts (empty for Docker's).
	Stages []restartStages
	// Node is actorlet's node name, Replacements the IDs of the
	// replacements it started.
	Node         string
	Replacements map[string]bool
}

// exitAndStart is container oldID's State.FinishedAt and container
// newID's State.StartedAt (zero when either cannot be read).
func (e *Env) exitAndStart(oldID, newID string) (fin, started time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	old, err := e.Cli.ContainerInspect(ctx, oldID)
	if err != nil || old.State == nil {
		return
	}
	nw, err := e.Cli.ContainerInspect(ctx, newID)
	if err != nil || nw.State == nil {
		return
	}
	f, err1 := time.Parse(time.RFC3339Nano, old.State.FinishedAt)
	st, err2 := time.Parse(time.RFC3339Nano, nw.State.StartedAt)
	if err1 != nil || err2 != nil || f.IsZero() {
		return
	}
	return f, st
}

// restartStages date one restart of actorlet's: the old instance's
// FinishedAt, the follower's read of containerd's exit, the pod actor's
// receipt of the death, the start call of the replacement (a standby's;
// zero for a create and start) and its return, and the replacement's
// StartedAt.
type restartStages struct {
	Finished, Received, Died, Call, Returned, Started time.Time
}

// MinRestarts is the fewest restarts a restart benchmark reports (the
// issue asks for at least 20 fresh containers).
const MinRestarts = 20

// RestartDocker runs n fresh containers of the same workload (exits
// restartLife after it starts) with Docker's restart policy "always" (no actorlet),
// and returns for each the time from its first die event to its next start
// event, and from its first State.FinishedAt to its second
// State.StartedAt (inspected as soon as the second start event is seen,
// well before the second exit 1 s later).
func (e *Env) RestartDocker(n int, timeout time.Duration) (RestartTimes, error) {
	label := BenchLabel + "=" + e.RunID
	defer e.CleanupRun()
	w := e.Watch(label)
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	runs := map[string]*dockerRuns{}
	// collect reads the restarts so far from the events, and inspects the
	// containers whose first exit or restart it saw: called between the
	// creates too, so that a container is inspected within its second
	// run (1 s).
	collect := func() (RestartTimes, error) {
		evs, err := w.Events()
		if err != nil {
			return RestartTimes{}, fmt.Errorf("docker events: %w", err)
		}
		type st struct {
			starts int
			die    time.Time
			lat    time.Duration
			done   bool
		}
		byID := map[string]*st{}
		for _, ev := range evs {
			s := byID[ev.ID]
			if s == nil {
				s = &st{}
				byID[ev.ID] = s
			}
			switch {
			case ev.Action == "start":
				s.starts++
				if s.starts == 2 && !s.die.IsZero() && !s.done {
					s.lat, s.done = ev.Time.Sub(s.die), true
				}
			case ev.Action == "die" && s.starts == 1 && s.die.IsZero():
				s.die = ev.Time
			}
		}
		var out RestartTimes
		for id, s := range byID {
			if s.die.IsZero() {
				continue
			}
			r := runs[id]
			if r == nil {
				r = &dockerRuns{}
				runs[id] = r
			}
			if r.fin.IsZero() || (s.done && r.started.IsZero()) {
				e.inspectRuns(id, r)
			}
			if !s.done {
				continue
			}
			out.Events = append(out.Events, s.lat)
			if !r.bad && !r.fin.IsZero() && !r.started.IsZero() {
				out.Exit = append(out.Exit, r.started.Sub(r.fin))
			}
			if !r.removed && (r.bad || !r.started.IsZero()) {
				// Timed: removed, so that it does not keep restarting
				// while the others are timed.
				r.removed = true
				t0 := time.Now()
				_ = e.Cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true})
				e.calls.add(runtimeCall{Op: "remove", Node: "docker", ID: id, Begin: t0, End: time.Now()})
			}
		}
		return out, nil
	}
	for i := range n {
		t0 := time.Now()
		resp, err := e.Cli.ContainerCreate(ctx, &container.Config{
			Image:  testimages.TestWorkloadTag,
			Env:    []string{"TW_EXIT_AFTER=" + restartLife},
			Labels: map[string]string{BenchLabel: e.RunID},
		}, &container.HostConfig{RestartPolicy: container.RestartPolicy{Name: container.RestartPolicyAlways}}, nil, nil,
			fmt.Sprintf("bench-restart-%s-%d", e.RunID, i))
		if err != nil {
			return RestartTimes{}, err
		}
		t1 := time.Now()
		e.calls.add(runtimeCall{Op: "create", Node: "docker", ID: resp.ID, Begin: t0, End: t1})
		if err := e.Cli.ContainerStart(ctx, resp.ID, container.StartOptions{}); err != nil {
			return RestartTimes{}, err
		}
		e.calls.add(runtimeCall{Op: "start", Node: "docker", ID: resp.ID, Begin: t1, End: time.Now()})
		next := time.Now().Add(restartStagger)
		if _, err := collect(); err != nil {
			return RestartTimes{}, err
		}
		time.Sleep(time.Until(next))
	}
	for {
		out, err := collect()
		if err != nil {
			return RestartTimes{}, err
		}
		if len(out.Events) >= n {
			return out, nil
		}
		if ctx.Err() != nil {
			if len(out.Events) >= min(MinRestarts, n) {
				e.logf("restart (docker): only %d of %d restarts within %s; reporting those", len(out.Events), n, timeout)
				return out, nil
			}
			return RestartTimes{}, fmt.Errorf("restart (docker): %d of %d restarts within %s", len(out.Events), n, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// dockerRuns are the first run's State.FinishedAt and the second run's
// State.StartedAt of a container Docker restarts; bad: one was missed
// (Docker keeps only the latest of each, and a run lasts restartLife).
type dockerRuns struct {
	fin, started time.Time
	bad, removed bool
}

// inspectRuns reads what r still lacks from container id. Docker counts
// a restart when its restart manager takes the exit (RestartCount 1,
// Restarting, FinishedAt the first run's), then starts it (RestartCount
// 1, StartedAt the second run's); the second exit makes RestartCount 2.
func (e *Env) inspectRuns(id string, r *dockerRuns) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	in, err := e.Cli.ContainerInspect(ctx, id)
	if err != nil || in.State == nil || r.bad {
		return
	}
	fin, err1 := time.Parse(time.RFC3339Nano, in.State.FinishedAt)
	st, err2 := time.Parse(time.RFC3339Nano, in.State.StartedAt)
	switch {
	case err1 != nil || err2 != nil:
	case in.RestartCount == 1:
		r.fin = fin
		if !in.State.Restarting {
			r.started = st
		}
	case in.RestartCount > 1:
		r.bad = r.fin.IsZero() || r.started.IsZero()
	}
}
