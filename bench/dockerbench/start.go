package dockerbench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/supervision"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// StartActorlet gives a fresh node n pods at once (SetHostPods: the
// manifests appear), each a sandbox and one long-running testworkload
// container, and returns the time until the node has reported every pod
// Running with its container running (PodStatusChanged to a subscriber in
// this process).
func (e *Env) StartActorlet(n int, timeout time.Duration) (time.Duration, error) {
	name := NodeName("start")
	defer e.CleanupNode(name)
	var mu sync.Mutex
	running := map[types.UID]bool{}
	done := make(chan time.Time, 1)
	onStatus := func(at time.Time, m *messages.PodStatusChanged) {
		if m.Pod.Status.Phase != v1.PodRunning || len(m.Pod.Status.ContainerStatuses) == 0 {
			return
		}
		for _, cs := range m.Pod.Status.ContainerStatuses {
			if cs.State.Running == nil {
				return
			}
		}
		mu.Lock()
		defer mu.Unlock()
		running[m.Pod.UID] = true
		if len(running) == n {
			select {
			case done <- at:
			default:
			}
		}
	}
	node, err := e.StartNode(name, NodeConfig{Backoff: supervision.DefaultBackoffPolicy()}, onStatus)
	if err != nil {
		return 0, err
	}
	defer node.Close()
	var ps []*v1.Pod
	for i := range n {
		ps = append(ps, WorkloadPod(fmt.Sprintf("start-%d", i), nil))
	}
	time.Sleep(time.Second) // the node's first relist and event subscription
	t0 := time.Now()
	if err := node.SetPods(ps); err != nil {
		return 0, err
	}
	select {
	case t1 := <-done:
		return t1.Sub(t0), nil
	case <-time.After(timeout):
		mu.Lock()
		defer mu.Unlock()
		return 0, fmt.Errorf("start (actorlet): %d of %d pods running within %s", len(running), n, timeout)
	}
}

// cliScript creates and starts, with the docker CLI, n pods' worth of
// containers (a pause sandbox and a testworkload container in its network
// namespace, json-file logs rotated as actorlet's), all n pods at once,
// each pod's two containers in order — actorlet's parallelism.
const cliScript = `#!/bin/sh
# $1: number of pods, $2: name prefix, $3: label (key=value), $4 pause image, $5 workload image
i=0
while [ "$i" -lt "$1" ]; do
  (
    docker run -d --name "$2-sb-$i" --hostname "start-$i" --label "$3" \
      --log-driver json-file --log-opt max-size=10m --log-opt max-file=5 "$4" >/dev/null &&
    docker run -d --name "$2-c-$i" --network "container:$2-sb-$i" --label "$3" \
      --log-driver json-file --log-opt max-size=10m --log-opt max-file=5 "$5" >/dev/null
  ) &
  i=$((i + 1))
done
wait
`

// StartCLI runs cliScript for n pods and returns its duration (until
// every docker run has returned, i.e. every container has started).
func (e *Env) StartCLI(n int, timeout time.Duration) (time.Duration, error) {
	defer e.CleanupRun()
	dir, err := os.MkdirTemp("", "actorlet-bench-cli-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "start.sh")
	if err := os.WriteFile(script, []byte(cliScript), 0o755); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	label := BenchLabel + "=" + e.RunID
	cmd := exec.CommandContext(ctx, "sh", script, fmt.Sprint(n), "bench-start-"+e.RunID, label, testimages.PauseTag, testimages.TestWorkloadTag)
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(t0)
	if err != nil {
		return 0, fmt.Errorf("start (CLI): %w\n%s", err, out)
	}
	list, err := e.Cli.ContainerList(ctx, container.ListOptions{Filters: filters.NewArgs(filters.Arg("label", label), filters.Arg("status", "running"))})
	if err != nil {
		return 0, err
	}
	if len(list) != 2*n {
		return 0, fmt.Errorf("start (CLI): %d containers running, want %d\n%s", len(list), 2*n, out)
	}
	return d, nil
}
