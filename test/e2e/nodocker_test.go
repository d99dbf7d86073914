package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/test/support/dockerproxy"
)

// deadSocket makes a Docker socket path whose daemon is down (the file is
// there, nothing listens: connections are refused) and returns it.
func deadSocket(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ald") // short: unix socket paths are limited to ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	sock := filepath.Join(dir, "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return sock
}

// healthz is one GET /healthz: the status code and the checks.
func healthz(base string) (int, map[string]bool, string, error) {
	c := &http.Client{Timeout: 5 * time.Second}
	r, err := c.Get(base + "/healthz")
	if err != nil {
		return 0, nil, "", err
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	var h struct {
		Checks []struct {
			Name string `json:"name"`
			OK   bool   `json:"ok"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return r.StatusCode, nil, string(b), fmt.Errorf("decode /healthz: %w", err)
	}
	checks := map[string]bool{}
	for _, c := range h.Checks {
		checks[c.Name] = c.OK
	}
	return r.StatusCode, checks, string(b), nil
}

// Issue 12 #5: an agent started while Docker is down keeps running, says
// so in its log and in /healthz (503, the runtime check failing), retries,
// and once Docker answers converges — a pod added meanwhile comes up —
// without recreating, restarting or stopping anything that was running (a
// pod of the previous agent run).
func TestAgentStartsBeforeDocker(t *testing.T) {
	e := newEnv(t, "e2e-nodocker")
	e.writeManifest("web.yaml", podManifest("web", 1, "app", "sidecar"))
	a1 := e.startAgent("agent#1")
	e.waitPodRunning(a1, "web", "app", "sidecar")
	want := e.list().ofPod("web").ids()
	started := e.startTimes(want)
	a1.signal(syscall.SIGTERM)
	if !a1.waitExit(exitTimeout) {
		t.Fatalf("agent#1 did not exit within %v of SIGTERM", exitTimeout)
	}

	sock := deadSocket(t)
	e.writeManifest("late.yaml", podManifest("late", 1, "app")) // added while Docker is down
	a2 := e.startAgentEnv("agent#2", []string{"DOCKER_HOST=unix://" + sock})
	addr := a2.waitLog(30*time.Second, "actorlet running").str("api")
	if addr == "" {
		t.Fatal(`the "actorlet running" log line has no api address`)
	}
	base := "http://" + addr
	if len(a2.findLogs("Docker does not answer; running anyway: /healthz reports it, and the node lists again with backoff (1 s doubling to 30 s) until it answers")) == 0 {
		t.Error("agent#2 did not log that Docker does not answer")
	}
	// It stays up, failing its runtime check, and lists again.
	consistently(t, 4*time.Second, "agent#2 up, /healthz 503 with the runtime check failing", func() (bool, string) {
		a2.requireRunning()
		code, checks, body, err := healthz(base)
		if err != nil {
			return false, err.Error()
		}
		ok, named := checks["runtime"]
		return code == http.StatusServiceUnavailable && named && !ok, fmt.Sprintf("%d %s", code, body)
	})
	if n := len(a2.findLogs("relist failed; no transitions this round")); n < 2 {
		t.Errorf("%d failed relists logged while Docker is down, want retries", n)
	}

	// Docker comes up, through a proxy that counts what the agent asks.
	p, err := dockerproxy.Start(t, "")
	if err != nil {
		t.Fatal(err)
	}
	tmp := sock + ".up"
	if err := os.Symlink(strings.TrimPrefix(p.Addr(), "unix://"), tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, sock); err != nil {
		t.Fatal(err)
	}
	up := time.Now()
	e.waitPodRunning(a2, "late", "app")
	eventually(t, 30*time.Second, "/healthz 200", func() (bool, string) {
		code, _, body, err := healthz(base)
		if err != nil {
			return false, err.Error()
		}
		return code == http.StatusOK, fmt.Sprintf("%d %s", code, body)
	})
	t.Logf("converged %v after Docker came up", time.Since(up).Round(time.Millisecond))
	// Nothing of web was recreated, restarted or stopped.
	consistently(t, 3*relistPeriod, "web's containers the same, running", func() (bool, string) {
		a2.requireRunning()
		return sameContainers(e.list().ofPod("web"), want)
	})
	e.requireNotRestarted(want, started)
	for _, r := range p.Requests() {
		if r.Method == http.MethodGet {
			continue
		}
		for id, name := range want {
			if strings.Contains(r.Path, id) || r.Container == id || r.Container == name ||
				(r.Path == "/containers/create" && strings.Contains(r.RawQuery, "_web_")) {
				t.Errorf("agent#2 asked Docker %s %s?%s (container %s), about web's %s", r.Method, r.Path, r.RawQuery, r.Container, name)
			}
		}
	}
	if n := len(e.list().ofPod("late").running(runtimeadapter.SandboxName)); n != 1 {
		t.Errorf("late has %d running sandboxes", n)
	}
}
