package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/client"
	clientv3 "go.etcd.io/etcd/client/v3"
	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/docker"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// Timing. The agents relist every second and hold 4 s heartbeat leases,
// so everything should be visible within seconds; the deadlines leave
// room for a loaded 2-core machine.
const (
	pollInterval  = 100 * time.Millisecond
	relistPeriod  = time.Second
	leaseDuration = 4 * time.Second
	podUpTimeout  = 60 * time.Second // a new pod's sandbox and containers running
	podGoneTime   = 60 * time.Second // a removed pod's containers gone
	etcdTimeout   = 15 * time.Second // a write or read of etcd seen by the test
	dockerTimeout = 30 * time.Second // one Docker API call
	cliTimeout    = 30 * time.Second // one actorlet client command
	killTimeout   = 10 * time.Second // a SIGKILLed agent has been reaped
)

// agent is one `actorlet run` process of the fleet.
type agent struct {
	t    *testing.T
	node string
	args []string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error // cmd.Wait's result; read only after done is closed
}

// startAgent runs `actorlet run` as node, fed from etcd at endpoint only,
// with the test timing, a root dir of its own and any free API port. It
// is SIGKILLed at test end if it still runs, and its output is logged if
// the test failed.
func startAgent(t *testing.T, node, endpoint string) *agent {
	t.Helper()
	args := []string{"run",
		"--etcd-endpoints", endpoint,
		"--node-name", node,
		"--node-lease-duration", leaseDuration.String(),
		"--root-dir", t.TempDir(),
		"--relist-period", relistPeriod.String(),
		"--backoff-initial", "1s", "--backoff-max", "2s",
		"--log-format", "json",
		"--port", "0",
	}
	a := &agent{t: t, node: node, args: args, out: &syncBuffer{}, done: make(chan struct{})}
	a.cmd = exec.Command(actorletBinary(t), args...)
	a.cmd.Stdout, a.cmd.Stderr = a.out, a.out
	if err := a.cmd.Start(); err != nil {
		t.Fatalf("start agent %s: %v", node, err)
	}
	go func() {
		a.err = a.cmd.Wait()
		close(a.done)
	}()
	t.Cleanup(func() {
		if !a.exited() {
			_ = a.cmd.Process.Kill()
			select {
			case <-a.done:
			case <-time.After(killTimeout):
				t.Errorf("agent %s (pid %d) not reaped %v after SIGKILL", node, a.cmd.Process.Pid, killTimeout)
			}
		}
		if t.Failed() {
			t.Logf("agent %s: actorlet %s\n%s", node, strings.Join(a.args, " "), a.out.String())
		}
	})
	return a
}

func (a *agent) exited() bool {
	select {
	case <-a.done:
		return true
	default:
		return false
	}
}

// requireRunning fails the test at once if the agent has exited.
func (a *agent) requireRunning() {
	a.t.Helper()
	if a.exited() {
		a.t.Fatalf("agent %s exited unexpectedly: %v", a.node, a.err)
	}
}

// kill SIGKILLs the agent and waits until it has been reaped.
func (a *agent) kill() {
	a.t.Helper()
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		a.t.Fatalf("agent %s: SIGKILL: %v", a.node, err)
	}
	select {
	case <-a.done:
	case <-time.After(killTimeout):
		a.t.Fatalf("agent %s not reaped %v after SIGKILL", a.node, killTimeout)
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// eventually polls cond every 100 ms until it holds, failing the test
// after timeout with what cond last saw.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	start := time.Now()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		ok, seen := cond()
		if ok {
			t.Logf("%s: after %v", what, time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Since(start) > timeout {
			t.Fatalf("timed out after %v waiting for %s; last seen: %s", timeout, what, seen)
		}
		<-tick.C
	}
}

// ---------------------------------------------------------------------------
// Containers.

// containers is one listing of a node's managed containers.
type containers []runtimeadapter.Container

// list returns every container labelled for node, exited ones included.
func list(t *testing.T, rt *docker.Runtime, node string) containers {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), dockerTimeout)
	defer cancel()
	res, err := rt.List(ctx, runtimeadapter.ListOptions{Node: node, All: true})
	if err != nil {
		t.Fatalf("list node %s: %v", node, err)
	}
	return res.Containers
}

// ofPod returns the containers of the pod named pod.
func (cs containers) ofPod(pod string) containers {
	var out containers
	for _, c := range cs {
		if c.Labels[runtimeadapter.LabelPodName] == pod {
			out = append(out, c)
		}
	}
	return out
}

// podNames returns the sorted names of the pods the containers belong to.
func (cs containers) podNames() []string {
	seen := map[string]bool{}
	for _, c := range cs {
		seen[c.Labels[runtimeadapter.LabelPodName]] = true
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// runningApp reports whether the pod has exactly one running sandbox and
// one running container named app.
func (cs containers) runningApp() bool {
	sandboxes, apps := 0, 0
	for _, c := range cs {
		if c.State != runtimeadapter.StateRunning {
			continue
		}
		switch c.Labels[runtimeadapter.LabelContainerName] {
		case runtimeadapter.SandboxName:
			sandboxes++
		case "app":
			apps++
		}
	}
	return sandboxes == 1 && apps == 1
}

func (cs containers) String() string {
	if len(cs) == 0 {
		return "no containers"
	}
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s(%s %s)", c.Name, c.ID[:min(12, len(c.ID))], c.RawState))
	}
	sort.Strings(parts)
	return "[" + strings.Join(parts, " ") + "]"
}

// startedAt maps each container's ID to Docker's State.StartedAt, read
// fresh: a container restarted keeps its ID but not its start time.
func startedAt(t *testing.T, cli *client.Client, cs containers) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range cs {
		ctx, cancel := context.WithTimeout(context.Background(), dockerTimeout)
		in, err := cli.ContainerInspect(ctx, c.ID)
		cancel()
		if err != nil {
			t.Fatalf("inspect %s: %v", c.Name, err)
		}
		out[c.ID] = in.State.Status + " " + in.State.StartedAt
	}
	return out
}

// dockerClient is a Docker API client, closed at test end.
func dockerClient(t *testing.T) *client.Client {
	t.Helper()
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatalf("docker client: %v", err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// ---------------------------------------------------------------------------
// Manifests, the CLI and etcd.

// podManifest is a pod of one testworkload container "app" that stops
// within a second.
func podManifest(name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: %s
`, name, testimages.TestWorkloadTag)
}

// writeManifest writes a pod manifest for name and returns its path.
func writeManifest(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(path, []byte(podManifest(name)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// actorlet runs a client command of the binary and returns its standard
// output, failing the test on an error.
func actorlet(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, actorletBinary(t), args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("actorlet %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String()
}

// etcdValue reads key; found is false when it does not exist.
func etcdValue(t *testing.T, c *clientv3.Client, key string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), etcdTimeout)
	defer cancel()
	resp, err := c.Get(ctx, key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	if len(resp.Kvs) == 0 {
		return "", false
	}
	return string(resp.Kvs[0].Value), true
}

// statusPhase reads a status key's pod phase ("" if none).
func statusPhase(t *testing.T, c *clientv3.Client, key string) (v1.PodPhase, string) {
	t.Helper()
	v, ok := etcdValue(t, c, key)
	if !ok {
		return "", "no key " + key
	}
	var p v1.Pod
	if err := json.Unmarshal([]byte(v), &p); err != nil {
		t.Fatalf("status %s = %q: %v", key, v, err)
	}
	return p.Status.Phase, v
}
