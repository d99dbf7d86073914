package apiclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/internal/api"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// backend is an in-memory api.Backend.
type backend struct {
	pods   []*v1.Pod
	events []messages.Event
	health api.Health

	mu       sync.Mutex
	previous bool
	opts     runtimeadapter.LogOptions
}

func (b *backend) Pods(context.Context) ([]*v1.Pod, error)          { return b.pods, nil }
func (b *backend) Events(context.Context) ([]messages.Event, error) { return b.events, nil }
func (b *backend) Health(context.Context) api.Health                { return b.health }

func (b *backend) Logs(_ context.Context, ns, pod, ctr string, previous bool, opts runtimeadapter.LogOptions) (io.ReadCloser, error) {
	b.mu.Lock()
	b.previous, b.opts = previous, opts
	b.mu.Unlock()
	if ns != "default" || pod != "web" || ctr != "app" {
		return nil, fmt.Errorf("container %s/%s/%s: %w", ns, pod, ctr, api.ErrNotFound)
	}
	return io.NopCloser(strings.NewReader("hello\nworld\n")), nil
}

func newBackend() *backend {
	return &backend{
		pods: []*v1.Pod{{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "u1"},
			Status:     v1.PodStatus{Phase: v1.PodRunning, PodIP: "10.0.0.7"},
		}},
		events: []messages.Event{{Time: time.Unix(100, 0), Type: messages.EventNormal, Reason: "Started",
			Namespace: "default", Pod: "web", UID: "u1", Container: "app", Message: "Started container app"}},
		health: api.Health{OK: false, Checks: []api.Check{{Name: "relist", OK: false, Message: "stale"}}},
	}
}

func serve(t *testing.T, opts api.Options) (*backend, *httptest.Server) {
	t.Helper()
	b := newBackend()
	srv := httptest.NewServer(api.New(b, opts))
	t.Cleanup(srv.Close)
	return b, srv
}

func mustNew(t *testing.T, server string, opts ...Option) *Client {
	t.Helper()
	c, err := New(server, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestReadEndpoints(t *testing.T) {
	_, srv := serve(t, api.Options{})
	c := mustNew(t, srv.URL)
	ctx := context.Background()

	pods, err := c.Pods(ctx)
	if err != nil || len(pods.Items) != 1 || pods.Items[0].Status.PodIP != "10.0.0.7" {
		t.Fatalf("Pods = %+v, %v", pods, err)
	}
	pod, err := c.Pod(ctx, "default", "web")
	if err != nil || pod.Name != "web" || pod.Status.Phase != v1.PodRunning {
		t.Fatalf("Pod = %+v, %v", pod, err)
	}
	_, err = c.Pod(ctx, "default", "nope")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("missing pod: %v", err)
	}
	if _, err := c.Pod(ctx, "default", "Bad_Name"); err == nil || !strings.Contains(err.Error(), "invalid pod name") {
		t.Errorf("invalid name: %v", err)
	}
	events, err := c.Events(ctx)
	if err != nil || len(events.Items) != 1 || events.Items[0].Reason != "Started" || events.Items[0].InvolvedObject.FieldPath != "spec.containers{app}" {
		t.Fatalf("Events = %+v, %v", events, err)
	}
	h, err := c.Health(ctx)
	if err != nil || h.OK || len(h.Checks) != 1 || h.Checks[0].Message != "stale" {
		t.Errorf("Health = %+v, %v", h, err)
	}
}

func TestLogs(t *testing.T) {
	b, srv := serve(t, api.Options{})
	c := mustNew(t, srv.URL)
	tail := int64(0)
	before := time.Now()
	rc, err := c.Logs(context.Background(), "default", "web", "app", LogParams{
		Follow: true, Previous: true, Timestamps: true, TailLines: &tail, Since: 1500 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || string(data) != "hello\nworld\n" {
		t.Fatalf("log %q, %v", data, err)
	}
	b.mu.Lock()
	previous, opts := b.previous, b.opts
	b.mu.Unlock()
	// tailLines=0 wins over sinceSeconds=2: only lines from now on.
	if !previous || !opts.Follow || !opts.Timestamps || opts.TailLines != 0 || opts.Since.Before(before.Add(-time.Second)) {
		t.Errorf("backend saw previous=%v %+v", previous, opts)
	}

	if got := (LogParams{Since: 1500 * time.Millisecond}).query().Encode(); got != "sinceSeconds=2" {
		t.Errorf("Since rounds to %q, want sinceSeconds=2", got)
	}
	five := int64(5)
	if got := (LogParams{TailLines: &five}).query().Encode(); got != "tailLines=5" {
		t.Errorf("query = %q", got)
	}
	if got := (LogParams{}).query().Encode(); got != "" {
		t.Errorf("zero params query = %q, want empty", got)
	}

	_, err = c.Logs(context.Background(), "default", "web", "nosuch", LogParams{})
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown container: %v", err)
	}
	if _, err := c.Logs(context.Background(), "default", "web", "../../etc", LogParams{}); err == nil {
		t.Error("a hostile container name was sent")
	}
}

func TestToken(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("abc123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, srv := serve(t, api.Options{TokenFile: tokenFile})
	if _, err := mustNew(t, srv.URL).Pods(context.Background()); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("without token: %v", err)
	}
	if _, err := mustNew(t, srv.URL, WithToken("abc123")).Pods(context.Background()); err != nil {
		t.Errorf("with token: %v", err)
	}
	f := Flags{Server: srv.URL, TokenFile: tokenFile}
	c, err := f.Client()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Pods(context.Background()); err != nil {
		t.Errorf("with --token-file: %v", err)
	}
	f.TokenFile = filepath.Join(t.TempDir(), "missing")
	if _, err := f.Client(); err == nil || !strings.Contains(err.Error(), "--token-file") {
		t.Errorf("missing token file: %v", err)
	}
}

func TestTLS(t *testing.T) {
	srv := httptest.NewTLSServer(api.New(newBackend(), api.Options{}))
	defer srv.Close()
	_, err := mustNew(t, srv.URL).Pods(context.Background())
	var noAgent *NoAgentError
	if err == nil || errors.As(err, &noAgent) || !strings.Contains(err.Error(), "not trusted") {
		t.Errorf("self-signed without skip: %v", err)
	}
	c := mustNew(t, srv.URL, WithInsecureSkipTLSVerify(true))
	if _, err := c.Pods(context.Background()); err != nil {
		t.Errorf("self-signed with skip: %v", err)
	}
}

// closedPort returns 127.0.0.1:<port> where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestNoAgent(t *testing.T) {
	server := "http://" + closedPort(t)
	c := mustNew(t, server)
	_, err := c.Pods(context.Background())
	want := "no actorlet agent answers at " + server + ": "
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error = %v, want it to start with %q", err, want)
	}
	var noAgent *NoAgentError
	if !errors.As(err, &noAgent) || noAgent.Server != server || errors.Unwrap(err) == nil {
		t.Errorf("error %T does not unwrap to the cause", err)
	}
	if strings.Count(err.Error(), server) != 1 {
		t.Errorf("the server is named more than once: %v", err)
	}
	for _, call := range []func() error{
		func() error { _, err := c.Pod(context.Background(), "default", "web"); return err },
		func() error { _, err := c.Events(context.Background()); return err },
		func() error { _, err := c.Health(context.Background()); return err },
		func() error {
			_, err := c.Logs(context.Background(), "default", "web", "app", LogParams{})
			return err
		},
	} {
		if err := call(); !errors.As(err, &noAgent) {
			t.Errorf("error = %v, want a NoAgentError", err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Pods(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}

func TestNotTheAPI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/pods" {
			_, _ = io.WriteString(w, "<html>hello</html>")
			return
		}
		http.Error(w, "teapot here", http.StatusTeapot)
	}))
	defer srv.Close()
	c := mustNew(t, srv.URL)
	if _, err := c.Pods(context.Background()); err == nil || !strings.Contains(err.Error(), "not actorlet's API") {
		t.Errorf("HTML answer: %v", err)
	}
	_, err := c.Events(context.Background())
	var se *StatusError
	if !errors.As(err, &se) || se.Code != http.StatusTeapot || se.Message != "teapot here" {
		t.Errorf("plain-text error: %v", err)
	}
}

func TestNew(t *testing.T) {
	for server, want := range map[string]string{
		"":                          DefaultServer,
		"127.0.0.1:9999":            "http://127.0.0.1:9999",
		"https://node1:10250/":      "https://node1:10250",
		"http://[::1]:10255":        "http://[::1]:10255",
		"https://proxy/actorlet/n1": "https://proxy/actorlet/n1",
	} {
		c, err := New(server)
		if err != nil || c.Server() != want {
			t.Errorf("New(%q) = %v, %v; want %s", server, c, err, want)
		}
	}
	for _, bad := range []string{"ftp://x", "http://", "http://u:p@host", "http://h?x=1", "http://h/#f", "://"} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%q) succeeded", bad)
		}
	}
}
