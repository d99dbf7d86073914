package e2e

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

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/docker"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// Timing of the tests. The agent runs with a 1 s relist period and a
// 1 s..2 s CrashLoopBackOff, so everything it does should be visible within
// a few seconds; the deadlines leave room for a loaded machine.
const (
	pollInterval  = 100 * time.Millisecond
	relistPeriod  = time.Second
	podUpTimeout  = 30 * time.Second // a new pod's sandbox and containers running
	dockerTimeout = 30 * time.Second // one Docker API call
	exitTimeout   = 15 * time.Second // an agent told to stop (or refusing to start) has exited
	killTimeout   = 10 * time.Second // a SIGKILLed agent has been reaped
)

// env is one test's node: Docker, a node name, a root dir and a manifest
// dir of its own. Containers labelled for the node are removed at test end.
type env struct {
	t         *testing.T
	rt        *docker.Runtime
	cli       *client.Client
	node      string
	rootDir   string
	manifests string
	// agentArgs are extra flags for the agents startAgent runs.
	agentArgs []string
}

// newEnv builds the test images (skipping or failing without Docker, see
// testimages.EnsureTestImages) and sets up a fresh node called
// prefix-<random>. It marks the test parallel.
func newEnv(t *testing.T, prefix string) *env {
	t.Parallel()
	rt := testimages.EnsureTestImages(t)
	e := &env{
		t:         t,
		rt:        rt,
		cli:       dockerClient(t),
		node:      testimages.NodeName(prefix),
		rootDir:   t.TempDir(),
		manifests: t.TempDir(),
	}
	// Registered first, so it runs last: after the agents are killed.
	testimages.CleanupNode(t, rt, e.node)
	t.Logf("node %s, root dir %s, manifests %s", e.node, e.rootDir, e.manifests)
	return e
}

// dockerClient is a Docker API client for outside actions, closed at test end.
func dockerClient(t testing.TB) *client.Client {
	t.Helper()
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatalf("docker client: %v", err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// ctx is a context for one Docker call.
func (e *env) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(e.t.Context(), dockerTimeout)
}

// ---------------------------------------------------------------------------
// The agent subprocess.

// agent is one `actorlet run` process.
type agent struct {
	t    *testing.T
	name string
	args []string
	cmd  *exec.Cmd
	out  *syncBuffer // stdout and stderr, interleaved
	done chan struct{}
	err  error // cmd.Wait's result; read only after done is closed
}

// startAgent runs `actorlet run` on e's node, root dir and manifests with
// the e2e timing flags and JSON logs. At test end the process is killed
// (SIGKILL) if it still runs, and its output is logged if the test failed.
func (e *env) startAgent(name string) *agent {
	e.t.Helper()
	return e.startAgentEnv(name, nil)
}

// startAgentEnv is startAgent with extra environment variables
// ("KEY=value", e.g. DOCKER_HOST) for the process.
func (e *env) startAgentEnv(name string, environ []string) *agent {
	e.t.Helper()
	args := []string{"run",
		"--manifests", e.manifests,
		"--node-name", e.node,
		"--root-dir", e.rootDir,
		"--backoff-initial", "1s",
		"--backoff-max", "2s",
		"--relist-period", relistPeriod.String(),
		"--log-format", "json",
		"--port", "0", // any free port: tests run side by side
	}
	args = append(args, e.agentArgs...)
	a := &agent{t: e.t, name: name, args: args, out: &syncBuffer{}, done: make(chan struct{})}
	a.cmd = exec.Command(actorletBinary(e.t), args...)
	if environ != nil {
		a.cmd.Env = append(os.Environ(), environ...)
	}
	a.cmd.Stdout = a.out
	a.cmd.Stderr = a.out
	if err := a.cmd.Start(); err != nil {
		e.t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		a.err = a.cmd.Wait()
		close(a.done)
	}()
	e.t.Cleanup(func() {
		if !a.exited() {
			_ = a.cmd.Process.Kill()
			select {
			case <-a.done:
			case <-time.After(killTimeout):
				e.t.Errorf("%s (pid %d) not reaped %v after SIGKILL", a.name, a.cmd.Process.Pid, killTimeout)
			}
		}
		if e.t.Failed() {
			e.t.Logf("%s: actorlet %s\n%s", a.name, strings.Join(a.args, " "), a.out.String())
		}
	})
	return a
}

// exited reports whether the process has ended.
func (a *agent) exited() bool {
	select {
	case <-a.done:
		return true
	default:
		return false
	}
}

// requireRunning fails the test at once if the agent has exited: waiting
// for it to do something would be pointless.
func (a *agent) requireRunning() {
	a.t.Helper()
	if a.exited() {
		a.t.Fatalf("%s exited unexpectedly: %v", a.name, a.err)
	}
}

// signal sends sig to the agent.
func (a *agent) signal(sig os.Signal) {
	a.t.Helper()
	if err := a.cmd.Process.Signal(sig); err != nil {
		a.t.Fatalf("%s: send %v: %v", a.name, sig, err)
	}
}

// kill SIGKILLs the agent and waits until it has been reaped.
func (a *agent) kill() {
	a.t.Helper()
	a.signal(syscall.SIGKILL)
	if !a.waitExit(killTimeout) {
		a.t.Fatalf("%s not reaped %v after SIGKILL", a.name, killTimeout)
	}
}

// waitExit waits up to timeout for the process to end and reports whether
// it did.
func (a *agent) waitExit(timeout time.Duration) bool {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-a.done:
		return true
	case <-timer.C:
		return false
	}
}

// exitCode is the exit status of an exited agent (-1 when killed by a signal).
func (a *agent) exitCode() int {
	return a.cmd.ProcessState.ExitCode()
}

// logEntry is one JSON log line of the agent.
type logEntry map[string]any

func (l logEntry) str(key string) string {
	s, _ := l[key].(string)
	return s
}

// logs returns the agent's JSON log entries so far; lines that are not JSON
// (e.g. the final "actorlet: <error>") are skipped.
func (a *agent) logs() []logEntry {
	var out []logEntry
	for line := range strings.Lines(a.out.String()) {
		var l logEntry
		if json.Unmarshal([]byte(line), &l) == nil {
			out = append(out, l)
		}
	}
	return out
}

// findLogs returns the entries with message msg (all entries if msg is "").
func (a *agent) findLogs(msg string) []logEntry {
	var out []logEntry
	for _, l := range a.logs() {
		if msg == "" || l.str("msg") == msg {
			out = append(out, l)
		}
	}
	return out
}

// waitLog waits until the agent has logged a line with message msg.
func (a *agent) waitLog(timeout time.Duration, msg string) logEntry {
	a.t.Helper()
	var found logEntry
	eventually(a.t, timeout, fmt.Sprintf("%s to log %q", a.name, msg), func() (bool, string) {
		if ls := a.findLogs(msg); len(ls) > 0 {
			found = ls[0]
			return true, ""
		}
		a.requireRunning()
		return false, fmt.Sprintf("%d log lines, none with that message", len(a.logs()))
	})
	return found
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

// ---------------------------------------------------------------------------
// Waiting without sleeping.

// eventually polls cond every 100 ms until it holds, and fails the test if
// it does not within timeout. cond returns whether it holds and, when not,
// what it saw, which the failure reports.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() (ok bool, seen string)) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		ok, seen := cond()
		if ok {
			t.Logf("%s: after %v", what, time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; last seen: %s", timeout, what, seen)
		}
		<-tick.C
	}
}

// consistently polls cond every 100 ms for d and fails the test the first
// time it does not hold, reporting what it saw then.
func consistently(t testing.TB, d time.Duration, what string, cond func() (ok bool, seen string)) {
	t.Helper()
	start := time.Now()
	end := start.Add(d)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	polls := 0
	for {
		ok, seen := cond()
		polls++
		if !ok {
			t.Fatalf("%s stopped holding after %v: %s", what, time.Since(start).Round(time.Millisecond), seen)
		}
		if time.Now().After(end) {
			t.Logf("%s held for %v (%d polls)", what, d, polls)
			return
		}
		<-tick.C
	}
}

// ---------------------------------------------------------------------------
// Observing the node's containers.

// containers is one listing of a node's managed containers.
type containers []runtimeadapter.Container

// list returns every container labelled for e's node, exited ones included.
func (e *env) list() containers {
	e.t.Helper()
	ctx, cancel := e.ctx()
	defer cancel()
	res, err := e.rt.List(ctx, runtimeadapter.ListOptions{Node: e.node, All: true})
	if err != nil {
		e.t.Fatalf("list node %s: %v", e.node, err)
	}
	return res.Containers
}

// running returns the running containers whose container-name label is
// name (runtimeadapter.SandboxName for sandboxes).
func (cs containers) running(name string) containers {
	var out containers
	for _, c := range cs {
		if c.State == runtimeadapter.StateRunning && c.Labels[runtimeadapter.LabelContainerName] == name {
			out = append(out, c)
		}
	}
	return out
}

// ofPod returns the containers of the pod named podName.
func (cs containers) ofPod(podName string) containers {
	var out containers
	for _, c := range cs {
		if c.Labels[runtimeadapter.LabelPodName] == podName {
			out = append(out, c)
		}
	}
	return out
}

// ids maps each container's ID to its runtime name.
func (cs containers) ids() map[string]string {
	out := map[string]string{}
	for _, c := range cs {
		out[c.ID] = c.Name
	}
	return out
}

// String describes the listing for failure messages.
func (cs containers) String() string {
	if len(cs) == 0 {
		return "no containers"
	}
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s(%s %s rc=%s)", c.Name, short(c.ID), c.RawState, c.Labels[runtimeadapter.LabelRestartCount]))
	}
	sort.Strings(parts)
	return "[" + strings.Join(parts, " ") + "]"
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// waitPodRunning waits until pod podName has exactly one running sandbox
// and exactly one running container per name in apps, and returns the
// listing then.
func (e *env) waitPodRunning(a *agent, podName string, apps ...string) containers {
	e.t.Helper()
	var got containers
	eventually(e.t, podUpTimeout, fmt.Sprintf("pod %s running (sandbox + %v)", podName, apps), func() (bool, string) {
		cs := e.list()
		pod := cs.ofPod(podName)
		ok := len(pod.running(runtimeadapter.SandboxName)) == 1
		for _, n := range apps {
			ok = ok && len(pod.running(n)) == 1
		}
		if ok {
			got = pod
			return true, ""
		}
		a.requireRunning()
		return false, cs.String()
	})
	return got
}

// sameContainers reports whether cs holds exactly the containers of want
// (ID → name), all running.
func sameContainers(cs containers, want map[string]string) (bool, string) {
	got := cs.ids()
	for id, name := range want {
		if _, ok := got[id]; !ok {
			return false, fmt.Sprintf("container %s (%s) gone; now %s", name, short(id), cs)
		}
	}
	for _, c := range cs {
		if _, ok := want[c.ID]; !ok {
			return false, fmt.Sprintf("new container %s (%s); now %s", c.Name, short(c.ID), cs)
		}
		if c.State != runtimeadapter.StateRunning {
			return false, fmt.Sprintf("container %s (%s) is %s; now %s", c.Name, short(c.ID), c.RawState, cs)
		}
	}
	return true, ""
}

// startTimes inspects the containers of ids and returns each one's
// State.StartedAt, straight from Docker (no cache): a container stopped and
// started again keeps its ID but not its start time.
func (e *env) startTimes(ids map[string]string) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	for id, name := range ids {
		in, found := e.inspect(id)
		if !found {
			e.t.Fatalf("container %s (%s) is gone", name, short(id))
		}
		out[id] = in.State.StartedAt
	}
	return out
}

// requireNotRestarted fails the test if a container of before (ID → start
// time, see startTimes) has been started again since.
func (e *env) requireNotRestarted(ids map[string]string, before map[string]string) {
	e.t.Helper()
	for id, now := range e.startTimes(ids) {
		if now != before[id] {
			e.t.Errorf("container %s (%s) was restarted: started %s, before %s", ids[id], short(id), now, before[id])
		}
	}
}

// ---------------------------------------------------------------------------
// Manifests.

// writeManifest writes content to file name in e's manifest dir atomically
// (through a *.tmp file, which the agent ignores, and a rename) and returns
// its path.
func (e *env) writeManifest(name, content string) string {
	e.t.Helper()
	path := filepath.Join(e.manifests, name)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		e.t.Fatalf("write manifest: %v", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		e.t.Fatalf("write manifest: %v", err)
	}
	return path
}

// podManifest is a pod of testworkload containers named apps; grace < 0
// leaves terminationGracePeriodSeconds to its default (30).
func podManifest(name string, grace int, apps ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\nspec:\n", name)
	if grace >= 0 {
		fmt.Fprintf(&b, "  terminationGracePeriodSeconds: %d\n", grace)
	}
	b.WriteString("  containers:\n")
	for _, a := range apps {
		fmt.Fprintf(&b, "  - name: %s\n    image: %s\n", a, testimages.TestWorkloadTag)
	}
	return b.String()
}

// ---------------------------------------------------------------------------
// Containers made from outside the agent.

// runWorkload creates and starts a testworkload container called name with
// labels, straight through the Docker API, and removes it at test end
// (it may be gone by then).
func (e *env) runWorkload(name string, labels map[string]string) string {
	e.t.Helper()
	ctx, cancel := e.ctx()
	defer cancel()
	resp, err := e.cli.ContainerCreate(ctx,
		&container.Config{Image: testimages.TestWorkloadTag, Labels: labels},
		&container.HostConfig{RestartPolicy: container.RestartPolicy{Name: container.RestartPolicyDisabled}},
		nil, nil, name)
	if err != nil {
		e.t.Fatalf("create container %s: %v", name, err)
	}
	id := resp.ID
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), dockerTimeout)
		defer cancel()
		err := e.cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true})
		if err != nil && !cerrdefs.IsNotFound(err) {
			e.t.Errorf("remove container %s: %v", name, err)
		}
	})
	if err := e.cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		e.t.Fatalf("start container %s: %v", name, err)
	}
	return id
}

// inspect inspects a container; found is false when it does not exist.
func (e *env) inspect(id string) (in container.InspectResponse, found bool) {
	e.t.Helper()
	ctx, cancel := e.ctx()
	defer cancel()
	in, err := e.cli.ContainerInspect(ctx, id)
	if cerrdefs.IsNotFound(err) {
		return in, false
	}
	if err != nil {
		e.t.Fatalf("inspect container %s: %v", short(id), err)
	}
	return in, true
}

// dockerCLI runs the docker command line (an operator's outside action).
func dockerCLI(t testing.TB, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), dockerTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// orphanLabels are the labels of a complete actorlet app container of
// node, in a pod (uid, name) in the default namespace, 1 s grace.
func orphanLabels(node, uid, podName, containerName string) map[string]string {
	return runtimeadapter.Meta{
		Node: node, PodUID: uid, PodName: podName, PodNamespace: "default",
		ContainerName: containerName, Type: runtimeadapter.TypeApp, Hash: "e2e",
		GracePeriod: time.Second,
	}.Labels()
}

// exitDescription describes how an agent ended.
func (a *agent) exitDescription() string {
	if !a.exited() {
		return "still running"
	}
	if a.err == nil {
		return "exit status 0"
	}
	return a.err.Error()
}
