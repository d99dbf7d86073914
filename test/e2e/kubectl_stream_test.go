package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/actorlet/actorlet/test/support/testimages"
)

// kubectlProc is a kubectl left running (logs -f, exec -it).
type kubectlProc struct {
	t       *testing.T
	args    []string
	cmd     *exec.Cmd
	out     *syncBuffer
	started time.Time
	done    chan struct{}
	err     error // cmd.Wait's; read after done
}

// startProc starts kubectl with stdout and stderr into one buffer; it is
// killed at test end if it still runs.
func (k *kube) startProc(args ...string) *kubectlProc {
	k.t.Helper()
	p := &kubectlProc{t: k.t, args: args, cmd: k.cmd(context.Background(), args...), out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		k.t.Fatalf("kubectl %v: %v", args, err)
	}
	p.watch()
	return p
}

// watch waits for the process in the background and kills it at test end.
func (p *kubectlProc) watch() {
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	p.t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
}

// wait waits for kubectl to exit and returns its exit code; it fails the
// test if kubectl is still running after timeout.
func (p *kubectlProc) wait(timeout time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.t.Fatalf("kubectl %v still running after %v; output: %q", p.args, timeout, p.out.String())
	}
	var ee *exec.ExitError
	switch {
	case p.err == nil:
		return 0
	case errors.As(p.err, &ee):
		return ee.ExitCode()
	}
	p.t.Fatalf("kubectl %v: %v", p.args, p.err)
	return -1
}

// waitOutput waits until kubectl's output contains want.
func (p *kubectlProc) waitOutput(timeout time.Duration, want string) {
	p.t.Helper()
	eventually(p.t, timeout, fmt.Sprintf("kubectl %v prints %q", p.args, want), func() (bool, string) {
		return strings.Contains(p.out.String(), want), p.out.String()
	})
}

// checkFollowed checks the output of kubectl logs -f --timestamps: it
// ends with last, and some line was written after kubectl started (the
// follow streamed, rather than printing a finished log).
func (p *kubectlProc) checkFollowed(last string) {
	p.t.Helper()
	lines := strings.Split(strings.TrimRight(p.out.String(), "\n"), "\n")
	after := 0
	for _, l := range lines {
		ts, _, ok := strings.Cut(l, " ")
		if when, err := time.Parse(time.RFC3339Nano, ts); ok && err == nil && when.After(p.started) {
			after++
		}
	}
	if after == 0 || !strings.HasSuffix(lines[len(lines)-1], " "+last) {
		p.t.Errorf("kubectl %v (started %s): %d lines written after it started, last %q; want some, and %q last; output:\n%s",
			p.args, p.started.Format(time.RFC3339Nano), after, lines[len(lines)-1], last, p.out.String())
	}
}

// startOnTerminal starts kubectl on a new pseudo-terminal of size sz
// (its stdin, stdout and stderr, as a shell would give it) and returns it
// with the terminal's controlling side, closed at test end.
func (k *kube) startOnTerminal(sz *pty.Winsize, args ...string) (*kubectlProc, *os.File) {
	k.t.Helper()
	cmd := k.cmd(context.Background(), args...)
	term, err := pty.StartWithSize(cmd, sz)
	if err != nil {
		k.t.Fatalf("kubectl %v on a pty: %v", args, err)
	}
	k.t.Cleanup(func() { term.Close() })
	p := &kubectlProc{t: k.t, args: args, cmd: cmd, out: &syncBuffer{}, started: time.Now(), done: make(chan struct{})}
	go func() { _, _ = io.Copy(p.out, term) }() // ends with EIO when kubectl exits
	p.watch()
	return p, term
}

// The real kubectl's streams against an agent on Docker: logs -f sees lines
// written after it started and exits 0 when the container ends by itself
// and when its pod is deleted; exec -it on a real terminal gives the
// command a TTY of the terminal's size, delivers a resize, carries input
// and Ctrl-C and exits with the command's code; without a terminal kubectl
// runs it without a TTY.
func TestKubectlFollowAndTTY(t *testing.T) {
	bin := kubectlBin(t)
	e := newEnv(t, "e2e-kubectl-tty")
	e.writeManifest("ender.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: ender
spec:
  restartPolicy: Never
  containers:
  - name: app
    image: %s
    env:
    - {name: TW_LOG_EVERY, value: 200ms}
    - {name: TW_EXIT_AFTER, value: 15s}
`, testimages.TestWorkloadTag))
	a, k, dir := e.startKubectlAgent(bin)
	shell := filepath.Join(dir, "shell.yaml")
	manifest := podManifest("shell", 2, "app") + "    env:\n    - {name: TW_LOG_EVERY, value: 200ms}\n"
	if err := os.WriteFile(shell, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := k.run("apply", "-f", shell); code != 0 {
		t.Fatalf("apply -f shell.yaml: exit %d, %q %q", code, out, errOut)
	}
	// ender's follow starts as soon as it runs: it ends by itself 15 s
	// after it started.
	e.waitPodRunning(a, "ender", "app")
	enderLog := k.startProc("logs", "-f", "--timestamps", "ender")
	e.waitPodRunning(a, "shell", "app")
	eventually(t, podUpTimeout, "shell Running in kubectl get pods", func() (bool, string) {
		out, errOut, _ := k.run("get", "pods")
		return strings.Contains(words(out), "shell 1/1 Running"), out + errOut
	})
	shellLog := k.startProc("logs", "-f", "--timestamps", "shell")
	enderLog.waitOutput(10*time.Second, "testworkload: alive")
	shellLog.waitOutput(10*time.Second, "testworkload: alive")

	// exec -it on a pseudo-terminal of 100x30.
	p, term := k.startOnTerminal(&pty.Winsize{Cols: 100, Rows: 30}, "exec", "-it", "shell", "--", "/testworkload", "tty")
	p.waitOutput(15*time.Second, "tty: stdin=true stdout=true")
	eventually(t, 10*time.Second, "the command's terminal is 100x30", func() (bool, string) {
		return strings.Contains(p.out.String(), "size=100x30"), p.out.String()
	})
	if err := pty.Setsize(term, &pty.Winsize{Cols: 120, Rows: 40}); err != nil {
		t.Fatal(err)
	}
	p.waitOutput(10*time.Second, "tty: resized size=120x40")
	if _, err := term.Write([]byte("hello\rexit 7\r")); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(20 * time.Second); code != 7 {
		t.Errorf("kubectl exec -it: exit %d, want 7; output %q", code, p.out.String())
	}
	if out := p.out.String(); !strings.Contains(out, "tty: read hello\r\n") || !strings.Contains(out, "tty: read exit 7\r\n") {
		t.Errorf("kubectl exec -it: output %q; want the lines read, with the terminal's \\r\\n", out)
	}

	// Ctrl-C goes to the command through its terminal (SIGINT), not to kubectl.
	p, term = k.startOnTerminal(&pty.Winsize{Cols: 80, Rows: 24}, "exec", "-it", "shell", "--", "/testworkload", "tty")
	p.waitOutput(15*time.Second, "tty: stdin=true stdout=true")
	if _, err := term.Write([]byte{3}); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(20 * time.Second); code != 0 || !strings.Contains(p.out.String(), "tty: interrupt\r\n") {
		t.Errorf("kubectl exec -it, Ctrl-C: exit %d, output %q; want the command interrupted, exit 0", code, p.out.String())
	}

	// Without a terminal, -t is dropped and the command sees none.
	cmd := k.cmd(context.Background(), "exec", "-i", "shell", "--", "/testworkload", "tty")
	cmd.Stdin = strings.NewReader("exit 5\n")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 5 ||
		!strings.Contains(string(out), "tty: stdin=false stdout=false size=none\n") || !strings.Contains(string(out), "tty: read exit 5\n") {
		t.Errorf("kubectl exec -i (no terminal): %v, %q; want exit 5, no tty", err, out)
	}

	// The pod deleted: its follow ends with the container's last line.
	if out, errOut, code := k.run("delete", "pod", "shell"); code != 0 {
		t.Errorf("delete pod shell: exit %d, %q %q", code, out, errOut)
	}
	if code := shellLog.wait(30 * time.Second); code != 0 {
		t.Errorf("kubectl logs -f shell: exit %d after the pod was deleted, want 0; %q", code, shellLog.out.String())
	}
	shellLog.checkFollowed("testworkload: terminated, exiting 0")
	// The container ending by itself ends its follow.
	if code := enderLog.wait(30 * time.Second); code != 0 {
		t.Errorf("kubectl logs -f ender: exit %d after the container ended, want 0; %q", code, enderLog.out.String())
	}
	enderLog.checkFollowed("testworkload: exiting 0")
}
