package kubeapi

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/internal/api"
	"github.com/actorlet/actorlet/messages"
)

// kubectlPath finds the real kubectl: missing, the test fails under CI=true
// and skips otherwise.
func kubectlPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("kubectl")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("kubectl is needed (CI=true): %v", err)
		}
		t.Skipf("kubectl not installed: %v", err)
	}
	return p
}

// kubectlCmd builds a kubectl command against server, with its own
// discovery cache and no kubeconfig of the machine.
func kubectlCmd(ctx context.Context, t *testing.T, server string, args ...string) *exec.Cmd {
	t.Helper()
	home := t.TempDir()
	all := append([]string{"--server", server, "--cache-dir", home + "/cache"}, args...)
	cmd := exec.CommandContext(ctx, kubectlPath(t), all...)
	cmd.Env = append(os.Environ(), "HOME="+home, "KUBECONFIG="+home+"/none")
	return cmd
}

// kubectl runs kubectl (at most 30 s) and returns stdout, stderr and its
// exit code.
func kubectl(t *testing.T, server string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := kubectlCmd(ctx, t, server, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errb.String(), 0
	case errors.As(err, &ee):
		return out.String(), errb.String(), ee.ExitCode()
	default:
		t.Fatalf("kubectl %v: %v", args, err)
	}
	return "", "", -1
}

// fields splits kubectl's table output into lines of white-space
// separated words, for comparisons that do not depend on column widths.
func tableWords(s string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return strings.Join(lines, "\n")
}

func TestKubectlReads(t *testing.T) {
	kubectlPath(t)
	now := t0.Add(time.Hour)
	fb := &fakeBackend{logs: map[string]string{"default/web/app": "hello\nworld\n"}, health: api.Health{OK: true}}
	web := runningPod("default", "web", map[string]string{"app": "web"})
	fb.setPods(web, crashing(runningPod("default", "crasher", map[string]string{"app": "crasher"}), 5, now.Add(-2*time.Minute)))
	fb.addEvent(messages.Event{Time: now.Add(-time.Minute), Type: messages.EventNormal, Reason: "Started", Namespace: "default", Pod: "web", UID: web.UID, Container: "app", Message: "Started container app"})
	srv, _ := serve(t, fb)

	cases := []struct {
		args []string
		want string
	}{
		{[]string{"get", "pods"}, "NAME READY STATUS RESTARTS AGE\ncrasher 0/1 CrashLoopBackOff 5 (2m ago) 60m\nweb 1/1 Running 0 60m"},
		{[]string{"get", "pods", "-o", "wide", "-l", "app=web"}, "NAME READY STATUS RESTARTS AGE IP NODE NOMINATED NODE READINESS GATES\nweb 1/1 Running 0 60m 172.17.0.5 node-1 <none> <none>"},
		{[]string{"get", "pods", "-A", "--field-selector", "metadata.name=crasher"}, "NAMESPACE NAME READY STATUS RESTARTS AGE\ndefault crasher 0/1 CrashLoopBackOff 5 (2m ago) 60m"},
		{[]string{"get", "nodes"}, "NAME STATUS ROLES AGE VERSION\nnode-1 Ready <none> 60m v0.1.0"},
		{[]string{"get", "events"}, "LAST SEEN TYPE REASON OBJECT MESSAGE\n60s Normal Started pod/web Started container app"},
		{[]string{"get", "pod", "web", "-o", "jsonpath={.metadata.uid} {.status.phase}"}, "uid-web Running"},
		{[]string{"logs", "web"}, "hello\nworld"},
	}
	for _, c := range cases {
		out, errOut, code := kubectl(t, srv.URL, c.args...)
		if code != 0 || tableWords(out) != c.want {
			t.Errorf("kubectl %s: exit %d, stderr %q, stdout\n%s\nwant\n%s", strings.Join(c.args, " "), code, errOut, tableWords(out), c.want)
		}
	}
	out, errOut, code := kubectl(t, srv.URL, "describe", "pod", "web")
	if code != 0 || !strings.Contains(tableWords(out), "Node: node-1/") || !strings.Contains(tableWords(out), "Normal Started") || !strings.Contains(tableWords(out), "actorlet Started container app") {
		t.Errorf("kubectl describe pod web: exit %d, stderr %q, stdout\n%s", code, errOut, out)
	}
	out, errOut, code = kubectl(t, srv.URL, "get", "pod", "nope")
	if code != 1 || strings.TrimSpace(errOut) != `Error from server (NotFound): pods "nope" not found` {
		t.Errorf("kubectl get pod nope: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = kubectl(t, srv.URL, "get", "services")
	if code != 1 || !strings.Contains(errOut, `the server doesn't have a resource type "services"`) {
		t.Errorf("kubectl get services: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestKubectlWatchSeesRestart(t *testing.T) {
	kubectlPath(t)
	fb := &fakeBackend{}
	web := runningPod("default", "web", nil)
	fb.setPods(web)
	srv, _ := serve(t, fb)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := kubectlCmd(ctx, t, srv.URL, "get", "pods", "-w")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	lines := make(chan string, 10)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- strings.Join(strings.Fields(sc.Text()), " ")
		}
	}()
	expect := func(want string) {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("kubectl -w ended before %q", want)
				}
				if l == want {
					return
				}
			case <-ctx.Done():
				t.Fatalf("kubectl -w: no line %q", want)
			}
		}
	}
	expect("web 1/1 Running 0 60m")
	fb.setPods(crashing(web, 1, t0.Add(time.Hour-10*time.Second)))
	expect("web 0/1 CrashLoopBackOff 1 (10s ago) 60m")
}
