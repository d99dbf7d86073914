package api

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// waitTimeout bounds every wait in these tests; nothing sleeps.
const waitTimeout = 10 * time.Second

func logBackend() *fakeBackend {
	return &fakeBackend{logText: map[string]string{"default/web/app": "one\ntwo\n"}}
}

func TestLogsQuery(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		query    string
		opts     runtimeadapter.LogOptions
		previous bool
	}{
		{"", runtimeadapter.LogOptions{}, false},
		{"follow=true", runtimeadapter.LogOptions{Follow: true}, false},
		{"follow", runtimeadapter.LogOptions{Follow: true}, false},
		{"follow=false&timestamps=1", runtimeadapter.LogOptions{Timestamps: true}, false},
		{"tailLines=5", runtimeadapter.LogOptions{TailLines: 5}, false},
		{"tailLines=0&follow=true", runtimeadapter.LogOptions{Follow: true, Since: now}, false},
		{"sinceSeconds=90", runtimeadapter.LogOptions{Since: now.Add(-90 * time.Second)}, false},
		{"sinceSeconds=90&tailLines=0", runtimeadapter.LogOptions{Since: now}, false},
		{"previous=true&tailLines=10", runtimeadapter.LogOptions{TailLines: 10}, true},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			b := logBackend()
			rec := get(t, clockHandler(t, b, now), "/logs/default/web/app?"+c.query)
			if rec.Code != 200 || rec.Body.String() != "one\ntwo\n" {
				t.Fatalf("code = %d, body %q", rec.Code, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
				t.Errorf("Content-Type = %q", ct)
			}
			calls := b.logCalls()
			if len(calls) != 1 {
				t.Fatalf("%d Logs calls, want 1", len(calls))
			}
			got := calls[0]
			if got.namespace != "default" || got.pod != "web" || got.container != "app" || got.previous != c.previous || got.opts != c.opts {
				t.Errorf("Logs(%s, %s, %s, previous=%v, %+v), want previous=%v %+v",
					got.namespace, got.pod, got.container, got.previous, got.opts, c.previous, c.opts)
			}
		})
	}
}

// clockHandler is New's handler with its clock fixed at now.
func clockHandler(t *testing.T, b Backend, now time.Time) http.Handler {
	t.Helper()
	h := &handler{b: b, log: zap.NewNop(), now: func() time.Time { return now }, streams: context.Background()}
	chain, err := h.chain(Options{})
	if err != nil {
		t.Fatal(err)
	}
	return chain
}

func TestLogsErrors(t *testing.T) {
	b := &fakeBackend{logText: map[string]string{"default/web/app": "x"}}
	h := New(b, Options{})
	for target, code := range map[string]int{
		"/logs/default/web/other":                 404,
		"/logs/default/nope/app":                  404,
		"/logs/default/web/app?tailLines=-1":      400,
		"/logs/default/web/app?tailLines=x":       400,
		"/logs/default/web/app?sinceSeconds=0":    400,
		"/logs/default/web/app?follow=maybe":      400,
		"/logs/default/web/app?limitBytes=10":     400,
		"/logs/default/web/app?follow&follow":     400,
		"/logs/default/web/app?timestamps=yes":    400,
		"/logs/default/web/app?previous=2":        400,
		"/logs/default/web/app?sinceSeconds=1e3":  400,
		"/logs/default/web/app?tailLines=1.5":     400,
		"/logs/default/web/app?tailLines=+3":      400, // "+" is a space
		"/logs/default/web/app?sinceSeconds=3600": 200,
	} {
		rec := get(t, h, target)
		if rec.Code != code {
			t.Errorf("GET %s = %d, want %d (%s)", target, rec.Code, code, rec.Body)
			continue
		}
		if code != 200 {
			if st := decode[metav1.Status](t, rec); st.Message == "" || st.Code != int32(code) {
				t.Errorf("GET %s: status %+v lacks a message", target, st)
			}
		}
	}

	for name, err := range map[string]error{
		"runtime not found": runtimeadapter.ErrNotFound,
		"api not found":     ErrNotFound,
	} {
		b := &fakeBackend{openLog: func(context.Context) (io.ReadCloser, error) { return nil, err }}
		if rec := get(t, New(b, Options{}), "/logs/default/web/app?previous=true"); rec.Code != 404 {
			t.Errorf("%s: code = %d, want 404", name, rec.Code)
		}
	}
	b = &fakeBackend{openLog: func(context.Context) (io.ReadCloser, error) { return nil, errors.New("docker: boom") }}
	rec := get(t, New(b, Options{}), "/logs/default/web/app")
	if rec.Code != 500 || decode[metav1.Status](t, rec).Message != "docker: boom" {
		t.Errorf("backend failure: %d %s", rec.Code, rec.Body)
	}
}

// notifyCloser is a ReadCloser that reports its first Close on closed.
type notifyCloser struct {
	io.Reader
	close  func() error
	closed chan struct{}
}

// Close closes the stream, then signals closed (in that order: a waiter
// that sees closed may rely on the stream being closed).
func (n *notifyCloser) Close() error {
	err := n.close()
	select {
	case <-n.closed:
	default:
		close(n.closed)
	}
	return err
}

// pipeBackend serves one log stream fed through the returned writer.
func pipeBackend() (*fakeBackend, *io.PipeWriter, *notifyCloser) {
	pr, pw := io.Pipe()
	nc := &notifyCloser{Reader: pr, close: pr.Close, closed: make(chan struct{})}
	b := &fakeBackend{openLog: func(context.Context) (io.ReadCloser, error) { return nc, nil }}
	return b, pw, nc
}

// waitClosed fails the test unless ch closes within waitTimeout.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	timer := time.NewTimer(waitTimeout)
	defer timer.Stop()
	select {
	case <-ch:
	case <-timer.C:
		t.Fatalf("%s: not within %v", what, waitTimeout)
	}
}

// followLog starts a follow request to url and returns the response body
// as a line reader.
func followLog(t *testing.T, ctx context.Context, client *http.Client, url string) (*bufio.Reader, io.Closer) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/logs/default/web/app?follow=true&timestamps=true", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	return bufio.NewReader(resp.Body), resp.Body
}

func readLine(t *testing.T, r *bufio.Reader, want string) {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil || line != want {
		t.Fatalf("read %q, %v; want %q", line, err, want)
	}
}

func TestLogsFollowStreamsAndStopsOnDisconnect(t *testing.T) {
	b, pw, nc := pipeBackend()
	srv := httptest.NewServer(New(b, Options{}))
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, body := followLog(t, ctx, srv.Client(), srv.URL)
	defer body.Close()

	// Each line reaches the client while the stream is still open: pipe
	// writes return only once the handler has read them, and the client
	// reads them before anything else is written.
	for _, line := range []string{"2025-03-01T12:00:00Z first\n", "2025-03-01T12:00:01Z second\n"} {
		if _, err := io.WriteString(pw, line); err != nil {
			t.Fatal(err)
		}
		readLine(t, r, line)
	}
	calls := b.logCalls()
	if len(calls) != 1 || !calls[0].opts.Follow || !calls[0].opts.Timestamps {
		t.Fatalf("calls = %+v", calls)
	}
	backendCtx := calls[0].ctx
	if backendCtx.Err() != nil {
		t.Fatal("backend context ended early")
	}

	cancel() // the client goes away
	waitClosed(t, backendCtx.Done(), "backend context cancelled after the client left")
	waitClosed(t, nc.closed, "log stream closed after the client left")
	if _, err := io.WriteString(pw, "late\n"); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("write after disconnect: %v, want io.ErrClosedPipe", err)
	}
}

func TestLogsWithoutFollowEnds(t *testing.T) {
	b, pw, nc := pipeBackend()
	srv := httptest.NewServer(New(b, Options{}))
	defer srv.Close()
	go func() {
		_, _ = io.WriteString(pw, "only line\n")
		_ = pw.Close() // the end of the log
	}()
	resp, err := srv.Client().Get(srv.URL + "/logs/default/web/app")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || string(data) != "only line\n" {
		t.Fatalf("body %q, %v", data, err)
	}
	waitClosed(t, nc.closed, "log stream closed at its end")
}

func TestShutdownEndsLogStreams(t *testing.T) {
	b, pw, nc := pipeBackend()
	s := NewServer(b, Options{Port: 0})
	addr, err := s.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r, body := followLog(t, context.Background(), http.DefaultClient, "http://"+addr)
	defer body.Close()
	if _, err := io.WriteString(pw, "hello\n"); err != nil {
		t.Fatal(err)
	}
	readLine(t, r, "hello\n")

	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v (the follow stream kept it busy)", err)
	}
	waitClosed(t, b.logCalls()[0].ctx.Done(), "backend context cancelled by Shutdown")
	waitClosed(t, nc.closed, "log stream closed by Shutdown")
	if _, err := r.ReadString('\n'); err == nil {
		t.Error("the client's stream did not end")
	}
}

func TestParseLogQueryBounds(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	if _, err := parseLogQuery("sinceSeconds=99999999999999", now); err == nil {
		t.Error("sinceSeconds before year 1 accepted")
	}
	if _, err := parseLogQuery("tailLines=99999999999", now); err == nil {
		t.Error("tailLines beyond int32 accepted")
	}
	if _, err := parseLogQuery("a=%zz", now); err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Errorf("bad escape: %v", err)
	}
}
