package e2ecri

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/cri"
	"github.com/actorlet/actorlet/test/support/containerdtest"
	"github.com/actorlet/actorlet/test/support/testbin"
	"github.com/actorlet/actorlet/test/support/testimages"
)

func TestMain(m *testing.M) { testbin.Main(containerdtest.Wrap(m)) }

// Timing: the agent relists every second and backs off 1 s, then 2 s.
const (
	relistPeriod = time.Second
	waitTimeout  = 30 * time.Second
	callTimeout  = 30 * time.Second
	killTimeout  = 10 * time.Second
)

// env is one test's node on the shared private containerd.
type env struct {
	t         *testing.T
	cd        *containerdtest.Containerd
	rt        *cri.Runtime // the test's own view of the runtime
	node      string
	rootDir   string
	manifests string
	podLogs   string
}

func newEnv(t *testing.T, prefix string) *env {
	t.Parallel()
	cd := containerdtest.Require(t)
	e := &env{t: t, cd: cd, node: testimages.NodeName(prefix), rootDir: t.TempDir(), manifests: t.TempDir(), podLogs: t.TempDir()}
	rt, err := cri.New(cri.Options{Endpoint: cd.Endpoint, LogRoot: e.podLogs})
	if err != nil {
		t.Fatal(err)
	}
	e.rt = rt
	t.Cleanup(func() { rt.Close() })
	cd.CleanupNode(t, e.node) // registered first: runs after the agents are killed
	return e
}

func (e *env) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(e.t.Context(), callTimeout)
}

// list lists every container and sandbox of the node.
func (e *env) list() []runtimeadapter.Container {
	e.t.Helper()
	ctx, cancel := e.ctx()
	defer cancel()
	res, err := e.rt.List(ctx, runtimeadapter.ListOptions{Node: e.node, All: true})
	if err != nil {
		e.t.Fatalf("list node %s: %v", e.node, err)
	}
	return res.Containers
}

// byName returns the node's containers whose container-name label is name.
func byName(cs []runtimeadapter.Container, name string) []runtimeadapter.Container {
	var out []runtimeadapter.Container
	for _, c := range cs {
		if c.Labels[runtimeadapter.LabelContainerName] == name {
			out = append(out, c)
		}
	}
	return out
}

// waitFor polls cond until it holds, failing the test after timeout.
func (e *env) waitFor(timeout time.Duration, what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for delay := 20 * time.Millisecond; !cond(); delay = min(2*delay, 200*time.Millisecond) {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out after %v waiting for %s; the node has %s", timeout, what, describe(e.list()))
		}
		time.Sleep(delay)
	}
}

func describe(cs []runtimeadapter.Container) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "\n  %s %s %s exit %d", c.ID[:12], c.Name, c.RawState, c.ExitCode)
	}
	return b.String()
}

// writeManifest writes a manifest file atomically.
func (e *env) writeManifest(name, content string) string {
	e.t.Helper()
	path := filepath.Join(e.manifests, name)
	if err := os.WriteFile(path+".tmp", []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// hostPod is a hostNetwork pod of one testworkload container app with
// args, its restartPolicy policy.
func hostPod(name, policy string, args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\nspec:\n  hostNetwork: true\n  restartPolicy: %s\n  terminationGracePeriodSeconds: 2\n", name, policy)
	fmt.Fprintf(&b, "  containers:\n  - name: app\n    image: %s\n", testimages.TestWorkloadTag)
	if len(args) > 0 {
		q, _ := json.Marshal(args)
		fmt.Fprintf(&b, "    args: %s\n", q)
	}
	return b.String()
}

// agent is one `actorlet run --container-runtime cri` process.
type agent struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

// startAgent starts an agent on the env's node; extra flags come last
// (and so win over the defaults).
func (e *env) startAgent(name string, extra ...string) *agent {
	e.t.Helper()
	args := []string{"run",
		"--container-runtime", "cri",
		"--container-runtime-endpoint", e.cd.Endpoint,
		"--pod-logs-dir", e.podLogs,
		"--manifests", e.manifests,
		"--node-name", e.node,
		"--root-dir", e.rootDir,
		"--backoff-initial", "1s",
		"--backoff-max", "2s",
		"--relist-period", relistPeriod.String(),
		"--log-format", "json",
		"--port", "0",
	}
	args = append(args, extra...)
	a := &agent{t: e.t, name: name, out: &syncBuffer{}, done: make(chan struct{})}
	a.cmd = exec.Command(testbin.Actorlet(e.t), args...)
	a.cmd.Stdout, a.cmd.Stderr = a.out, a.out
	if err := a.cmd.Start(); err != nil {
		e.t.Fatalf("start %s: %v", name, err)
	}
	go func() { _ = a.cmd.Wait(); close(a.done) }()
	e.t.Cleanup(func() {
		_ = a.cmd.Process.Kill()
		select {
		case <-a.done:
		case <-time.After(killTimeout):
			e.t.Errorf("%s not reaped after SIGKILL", name)
		}
		if e.t.Failed() {
			e.t.Logf("%s: %s", name, a.out.String())
		}
	})
	return a
}

// kill SIGKILLs the agent and waits until it is reaped.
func (a *agent) kill() {
	a.t.Helper()
	_ = a.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-a.done:
	case <-time.After(killTimeout):
		a.t.Fatalf("%s not reaped after SIGKILL", a.name)
	}
}

// waitLog waits for a JSON log line with message msg and returns it.
func (a *agent) waitLog(msg string) map[string]any {
	a.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for delay := 20 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		if ms := a.logs(msg); len(ms) > 0 {
			return ms[0]
		}
		select {
		case <-a.done:
			a.t.Fatalf("%s exited before logging %q", a.name, msg)
		default:
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("%s did not log %q within %v", a.name, msg, waitTimeout)
		}
		time.Sleep(delay)
	}
}

// logs returns the JSON log lines with message msg so far.
func (a *agent) logs(msg string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(a.out.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// api returns the base URL of the agent's HTTP API.
func (a *agent) api() string {
	a.t.Helper()
	m := a.waitLog("actorlet running")
	addr, _ := m["api"].(string)
	if addr == "" {
		a.t.Fatalf("%s logged no API address", a.name)
	}
	return "http://" + addr
}

// get GETs url and returns the body of a 200.
func get(t *testing.T, url string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b), resp.StatusCode == http.StatusOK
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
