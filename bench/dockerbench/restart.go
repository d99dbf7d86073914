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
// their exits (1 s later) do not all coincide.
const restartStagger = 150 * time.Millisecond

// RestartActorlet runs n fresh pods whose one container exits by itself
// 1 s after it starts, on a node with CrashLoopBackOff 0 (initial and max),
// events on, and returns for each the time from the die event of its first
// container to the start event of its replacement (Docker's event
// timestamps).
//
// A pod whose replacement has not started by timeout (after the last pod
// was given) is counted in lost, and the others are returned if there are
// at least min(MinRestarts, n).
func (e *Env) RestartActorlet(n int, timeout time.Duration) (_ []time.Duration, lost int, _ error) {
	name := NodeName("restart")
	defer e.CleanupNode(name)
	w := e.Watch(runtimeadapter.LabelNode + "=" + name)
	defer w.Stop()
	node, err := e.StartNode(name, NodeConfig{Backoff: supervision.BackoffPolicy{}}, nil)
	if err != nil {
		return nil, 0, err
	}
	defer node.Close()
	var ps []*v1.Pod
	for i := range n {
		ps = append(ps, WorkloadPod(fmt.Sprintf("restart-%d", i), map[string]string{"TW_EXIT_AFTER": "1s"}))
		if err := node.SetPods(ps); err != nil {
			return nil, 0, err
		}
		time.Sleep(restartStagger)
	}
	// Per pod: the first die of an app container, then the first start of
	// another app container of the pod after it (container IDs, not the
	// restart-count label, decide).
	deadline := time.Now().Add(timeout)
	for {
		evs, err := w.Events()
		if err != nil {
			return nil, 0, fmt.Errorf("docker events: %w", err)
		}
		type st struct {
			dieID string
			die   time.Time
			lat   time.Duration
			done  bool
		}
		byPod := map[string]*st{}
		for _, ev := range evs {
			pod := ev.Attrs[runtimeadapter.LabelPodUID]
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
				s.lat, s.done = ev.Time.Sub(s.die), true
			}
		}
		var out []time.Duration
		for _, s := range byPod {
			if s.done {
				out = append(out, s.lat)
			}
		}
		if len(out) >= n {
			return out, 0, nil
		}
		if time.Now().After(deadline) {
			for pod, s := range byPod {
				if !s.done {
					var seq []string
					for _, ev := range evs {
						if ev.Attrs[runtimeadapter.LabelPodUID] == pod {
							seq = append(seq, fmt.Sprintf("%s %s %s/%s", ev.Time.Format("15:04:05.000"), ev.Action, ev.Attrs[runtimeadapter.LabelContainerName], ev.ID[:8]))
						}
					}
					e.logf("restart (actorlet): pod %s without a restart: %v", pod, seq)
				}
			}
			if len(out) >= min(MinRestarts, n) {
				e.logf("restart (actorlet): only %d of %d restarts within %s; reporting those", len(out), n, timeout)
				return out, n - len(out), nil
			}
			return nil, n - len(out), fmt.Errorf("restart (actorlet): %d of %d restarts within %s", len(out), n, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// MinRestarts is the fewest restarts a restart benchmark reports (the
// issue asks for at least 20 fresh containers).
const MinRestarts = 20

// RestartDocker runs n fresh containers of the same workload (exits 1 s
// after it starts) with Docker's restart policy "always" (no actorlet),
// and returns for each the time from its first die event to its next start
// event.
func (e *Env) RestartDocker(n int, timeout time.Duration) ([]time.Duration, error) {
	label := BenchLabel + "=" + e.RunID
	defer e.CleanupRun()
	w := e.Watch(label)
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for i := range n {
		resp, err := e.Cli.ContainerCreate(ctx, &container.Config{
			Image:  testimages.TestWorkloadTag,
			Env:    []string{"TW_EXIT_AFTER=1s"},
			Labels: map[string]string{BenchLabel: e.RunID},
		}, &container.HostConfig{RestartPolicy: container.RestartPolicy{Name: container.RestartPolicyAlways}}, nil, nil,
			fmt.Sprintf("bench-restart-%s-%d", e.RunID, i))
		if err != nil {
			return nil, err
		}
		if err := e.Cli.ContainerStart(ctx, resp.ID, container.StartOptions{}); err != nil {
			return nil, err
		}
		time.Sleep(restartStagger)
	}
	for {
		evs, err := w.Events()
		if err != nil {
			return nil, fmt.Errorf("docker events: %w", err)
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
		var out []time.Duration
		for _, s := range byID {
			if s.done {
				out = append(out, s.lat)
			}
		}
		if len(out) >= n {
			return out, nil
		}
		if ctx.Err() != nil {
			if len(out) >= min(MinRestarts, n) {
				e.logf("restart (docker): only %d of %d restarts within %s; reporting those", len(out), n, timeout)
				return out, nil
			}
			return nil, fmt.Errorf("restart (docker): %d of %d restarts within %s", len(out), n, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
