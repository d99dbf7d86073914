package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/actorlet/actorlet/internal/apiclient"
)

// waitLimit bounds every wait in the CLI tests; nothing sleeps.
const waitLimit = 10 * time.Second

func logsAgent(t *testing.T) (*cliBackend, string) {
	b := &cliBackend{pods: fixturePods(), logs: map[string]string{
		"default/crasher/app": "starting\nexiting with 1\n",
		"default/web/nginx":   "GET / 200\n",
	}}
	return b, startAgent(t, b)
}

func TestLogs(t *testing.T) {
	b, url := logsAgent(t)

	out, _ := runOK(t, "logs", "crasher", "--server", url)
	if out != "starting\nexiting with 1\n" {
		t.Errorf("the only container's log: %q", out)
	}
	out, _ = runOK(t, "logs", "web", "-c", "nginx", "--server", url)
	if out != "GET / 200\n" {
		t.Errorf("-c nginx: %q", out)
	}

	before := time.Now()
	runOK(t, "logs", "crasher", "-n", "default", "--previous", "--tail", "5", "--timestamps", "--since", "2m", "--server", url)
	calls := b.logCalls()
	last := calls[len(calls)-1]
	if last.pod != "crasher" || last.container != "app" || !last.previous || last.opts.TailLines != 5 ||
		!last.opts.Timestamps || last.opts.Follow {
		t.Errorf("backend saw %+v", last)
	}
	if since := last.opts.Since; since.Before(before.Add(-121*time.Second)) || since.After(time.Now().Add(-119*time.Second)) {
		t.Errorf("--since 2m: Since = %v, want about 2m before %v", since, before)
	}
	runOK(t, "logs", "crasher", "--tail", "0", "--server", url)
	if last := b.logCalls()[len(b.logCalls())-1]; last.opts.TailLines != 0 || last.opts.Since.IsZero() {
		t.Errorf("--tail 0: %+v, want only new lines (Since set)", last.opts)
	}

	var stdout, stderr bytes.Buffer
	err := runCLI(context.Background(), &stdout, &stderr, "logs", "web", "--server", url)
	if err == nil || err.Error() != "a container name must be specified for pod web, choose one of: [nginx sidecar]" {
		t.Errorf("two containers without -c: %v", err)
	}
	err = runCLI(context.Background(), &stdout, &stderr, "logs", "migrate", "-c", "nope", "--server", url)
	if !errors.Is(err, apiclient.ErrNotFound) {
		t.Errorf("unknown container: %v", err)
	}
	err = runCLI(context.Background(), &stdout, &stderr, "logs", "nope", "--server", url)
	if !errors.Is(err, apiclient.ErrNotFound) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown pod: %v", err)
	}
	for _, args := range [][]string{{"--tail", "-2"}, {"--since", "-1s"}, {"-c", "../etc"}} {
		if err := runCLI(context.Background(), &stdout, &stderr, append([]string{"logs", "crasher", "--server", url}, args...)...); err == nil {
			t.Errorf("logs %v succeeded", args)
		}
	}
}

// notifyWriter is a concurrency-safe buffer that signals each write.
type notifyWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func (w *notifyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return n, err
}

func (w *notifyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// waitFor waits until w holds want.
func (w *notifyWriter) waitFor(t *testing.T, want string) {
	t.Helper()
	timer := time.NewTimer(waitLimit)
	defer timer.Stop()
	for w.String() != want {
		select {
		case <-w.wrote:
		case <-timer.C:
			t.Fatalf("output %q, want %q within %v", w.String(), want, waitLimit)
		}
	}
}

func TestLogsFollow(t *testing.T) {
	pr, pw := io.Pipe()
	b := &cliBackend{pods: fixturePods(), openLog: func(context.Context) (io.ReadCloser, error) { return pr, nil }}
	url := startAgent(t, b)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &notifyWriter{wrote: make(chan struct{}, 1)}
	done := make(chan error, 1)
	go func() { done <- runCLI(ctx, out, io.Discard, "logs", "-f", "web", "-c", "sidecar", "--server", url) }()

	// Each line shows while the stream is still open.
	if _, err := io.WriteString(pw, "one\n"); err != nil {
		t.Fatal(err)
	}
	out.waitFor(t, "one\n")
	if _, err := io.WriteString(pw, "two\n"); err != nil {
		t.Fatal(err)
	}
	out.waitFor(t, "one\ntwo\n")

	cancel() // Ctrl-C
	timer := time.NewTimer(waitLimit)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("logs -f ended with %v, want nil", err)
		}
	case <-timer.C:
		t.Fatal("logs -f did not stop when its context ended")
	}
	calls := b.logCalls()
	if len(calls) != 1 || !calls[0].opts.Follow || calls[0].container != "sidecar" {
		t.Fatalf("calls = %+v", calls)
	}
	select {
	case <-calls[0].ctx.Done():
	case <-timer.C:
		t.Fatal("the agent's stream context was not cancelled")
	}
}
