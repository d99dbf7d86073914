package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/actorlet/actorlet/test/support/testimages"
	"github.com/actorlet/actorlet/test/support/testpki"
)

// kubectlBin is the real kubectl: missing, the test fails under CI=true
// (.ci/run installs it) and skips otherwise.
func kubectlBin(t *testing.T) string {
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

// kube runs kubectl against one agent with a kubeconfig of its own.
type kube struct {
	t          *testing.T
	bin, home  string
	kubeconfig string
}

func (k *kube) cmd(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, k.bin, append([]string{"--cache-dir", k.home + "/cache"}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+k.home, "KUBECONFIG="+k.kubeconfig)
	return cmd
}

// run runs kubectl (at most 60 s) and returns stdout, stderr and its exit
// code.
func (k *kube) run(args ...string) (string, string, int) {
	k.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := k.cmd(ctx, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errb.String(), 0
	case errors.As(err, &ee):
		return out.String(), errb.String(), ee.ExitCode()
	}
	k.t.Fatalf("kubectl %v: %v", args, err)
	return "", "", -1
}

// startKubectlAgent starts agent "agent" on e with a token and a
// self-signed certificate, and returns it, a kubectl (bin) whose
// kubeconfig uses both, and a directory for the test's files.
func (e *env) startKubectlAgent(bin string) (*agent, *kube, string) {
	t := e.t
	t.Helper()
	dir := t.TempDir()
	ca := testpki.NewCA(t, "e2e-ca")
	certFile, keyFile := testpki.WriteKeyPair(t, dir, "tls", ca.Issue(t, "actorlet", true))
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("e2e-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.agentArgs = append(e.agentArgs, "--api-token-file", tokenFile, "--tls-cert-file", certFile, "--tls-private-key-file", keyFile)
	a := e.startAgent("agent")
	addr := a.waitLog(30*time.Second, "actorlet running").str("api")
	k := &kube{t: t, bin: bin, home: t.TempDir()}
	k.kubeconfig = filepath.Join(k.home, "kubeconfig")
	cfg := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://%s\", insecure-skip-tls-verify: true}\n"+
		"users:\n- name: u\n  user: {token: e2e-token}\ncontexts:\n- name: x\n  context: {cluster: c, user: u, namespace: default}\ncurrent-context: x\n", addr)
	if err := os.WriteFile(k.kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return a, k, dir
}

// words joins each line's white-space separated words with one space.
func words(s string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return strings.Join(lines, "\n")
}

// The real kubectl against an agent on Docker: get (wide, a label
// selector, a watch that sees a restart), describe with events, logs,
// exec with the command's exit code, apply then delete of a pushed pod,
// nodes and events.
func TestKubectlEndToEnd(t *testing.T) {
	bin := kubectlBin(t)
	e := newEnv(t, "e2e-kubectl")
	e.writeManifest("talker.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: talker
  labels: {app: talker}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: %s
    env:
    - {name: TW_LOG_EVERY, value: 200ms}
`, testimages.TestWorkloadTag))
	e.writeManifest("crasher.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: crasher
  labels: {app: crasher}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: crash
    image: %s
    env:
    - {name: TW_EXIT_AFTER, value: 2s}
    - {name: TW_EXIT_CODE, value: "1"}
`, testimages.TestWorkloadTag))
	a, k, dir := e.startKubectlAgent(bin)

	// A watch from the start, to see crasher restart.
	wctx, stopWatch := context.WithCancel(context.Background())
	defer stopWatch()
	watch := k.cmd(wctx, "get", "pods", "-w")
	stdout, err := watch.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var watched []string
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			mu.Lock()
			watched = append(watched, words(sc.Text()))
			mu.Unlock()
		}
	}()
	defer func() { stopWatch(); <-watchDone; _ = watch.Wait() }()

	eventually(t, podUpTimeout, "talker Running in kubectl get pods", func() (bool, string) {
		out, errOut, _ := k.run("get", "pods")
		return strings.Contains(words(out), "talker 1/1 Running 0"), out + errOut
	})
	out, errOut, code := k.run("get", "pods", "-o", "wide", "-l", "app=talker")
	if lines := strings.Split(words(out), "\n"); code != 0 || len(lines) != 2 ||
		lines[0] != "NAME READY STATUS RESTARTS AGE IP NODE NOMINATED NODE READINESS GATES" ||
		!strings.HasPrefix(lines[1], "talker 1/1 Running 0 ") || !strings.HasSuffix(lines[1], " "+e.node+" <none> <none>") {
		t.Errorf("get pods -o wide -l app=talker: exit %d, %q %q", code, out, errOut)
	}
	eventually(t, 30*time.Second, "kubectl get pods -w shows crasher restarted", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range watched {
			if strings.HasPrefix(l, "crasher ") && strings.Contains(l, " 1 (") {
				return true, ""
			}
		}
		return false, strings.Join(watched, "\n")
	})
	out, errOut, code = k.run("describe", "pod", "crasher")
	if w := words(out); code != 0 || !strings.Contains(w, "Node: "+e.node+"/") || !strings.Contains(w, "Events:") || !strings.Contains(w, "actorlet Started container crash") {
		t.Errorf("describe pod crasher: exit %d, %q %q", code, out, errOut)
	}
	out, errOut, code = k.run("logs", "talker", "--tail=1")
	if code != 0 || !strings.HasPrefix(out, "testworkload: ") || strings.Count(out, "\n") != 1 {
		t.Errorf("logs talker --tail=1: exit %d, %q %q", code, out, errOut)
	}
	out, errOut, code = k.run("exec", "talker", "--", "/testworkload", "-exit-after", "1ms", "-exit-code", "3")
	if code != 3 || !strings.Contains(out+errOut, "testworkload: exiting 3") || !strings.Contains(errOut, "command terminated with exit code 3") {
		t.Errorf("exec talker -- exit 3: exit %d, %q %q; want 3", code, out, errOut)
	}

	pushed := filepath.Join(dir, "pushed.yaml")
	if err := os.WriteFile(pushed, []byte(podManifest("pushed", 1, "app")), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := k.run("apply", "-f", pushed); code != 0 || strings.TrimSpace(out) != "pod/pushed created" {
		t.Fatalf("apply -f: exit %d, %q %q", code, out, errOut)
	}
	e.waitPodRunning(a, "pushed", "app")
	if out, errOut, code := k.run("delete", "pod", "pushed"); code != 0 || strings.TrimSpace(out) != `pod "pushed" deleted` {
		t.Errorf("delete pod pushed: exit %d, %q %q", code, out, errOut)
	}
	if cs := e.list().ofPod("pushed"); len(cs) != 0 {
		t.Errorf("after kubectl delete returned, pushed still has containers: %v", cs)
	}
	if _, errOut, code := k.run("delete", "pod", "talker"); code != 1 || !strings.Contains(errOut, `pods "talker" is forbidden: it comes from file `+filepath.Join(e.manifests, "talker.yaml")) {
		t.Errorf("delete pod talker (a file's): exit %d, %q", code, errOut)
	}

	out, errOut, code = k.run("get", "nodes")
	if lines := strings.Split(words(out), "\n"); code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[1], e.node+" Ready <none> ") {
		t.Errorf("get nodes: exit %d, %q %q", code, out, errOut)
	}
	out, errOut, code = k.run("get", "events", "--field-selector", "involvedObject.name=crasher")
	if code != 0 || !strings.Contains(words(out), "Normal Started pod/crasher Started container crash") {
		t.Errorf("get events: exit %d, %q %q", code, out, errOut)
	}
}
