package url

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/actorlet/actorlet/sources"
)

const (
	testNode = "node-1"
	// slack bounds every wait: the tests poll every few milliseconds, so
	// reaching it means something is wrong, not slow.
	slack = 5 * time.Second
	// testPeriod is the poll period of the Run tests.
	testPeriod = 5 * time.Millisecond
)

// podYAML is a valid single-pod manifest for name running image.
func podYAML(name, image string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  containers:
  - name: app
    image: %s
`, name, image)
}

// podJSON is podYAML as JSON.
func podJSON(name, image string) string {
	return fmt.Sprintf(`{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": %q},
 "spec": {"containers": [{"name": "app", "image": %q}]}}`, name, image)
}

// item is a PodList item for name running image, as JSON.
func item(name, image string) string {
	return fmt.Sprintf(`{"metadata": {"name": %q}, "spec": {"containers": [{"name": "app", "image": %q}]}}`, name, image)
}

// podList is a JSON PodList of items (see item).
func podList(items ...string) string {
	return `{"apiVersion": "v1", "kind": "PodList", "items": [` + strings.Join(items, ",\n") + `]}`
}

// response is what the test server answers.
type response struct {
	status int // 0 means 200
	body   string
	// hang, when set, makes the handler wait for the request's end (the
	// client's timeout or cancellation) without answering.
	hang bool
}

// server is an httptest server whose response the test sets, and which
// counts and records requests.
type server struct {
	*httptest.Server
	mu       sync.Mutex
	resp     response
	requests []*http.Request // clones, in order
	hit      chan struct{}   // signalled (without blocking) on every request
}

func newServer(t *testing.T, r response) *server {
	t.Helper()
	s := &server{resp: r, hit: make(chan struct{}, 1)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	resp := s.resp
	s.requests = append(s.requests, r.Clone(context.Background()))
	s.mu.Unlock()
	select {
	case s.hit <- struct{}{}:
	default:
	}
	if resp.hang {
		<-r.Context().Done()
		return
	}
	if resp.status != 0 {
		w.WriteHeader(resp.status)
	}
	_, _ = w.Write([]byte(resp.body))
}

// set changes the response and returns how many requests were answered
// before: every later request gets r.
func (s *server) set(r response) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resp = r
	return len(s.requests)
}

func (s *server) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func (s *server) request(i int) *http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[i]
}

// waitRequests waits until the server has received n requests. As Run
// calls its sink before polling again, every update of the polls before
// the n-th request has then been delivered.
func (s *server) waitRequests(t *testing.T, n int) {
	t.Helper()
	deadline := time.NewTimer(slack)
	defer deadline.Stop()
	for s.count() < n {
		select {
		case <-s.hit:
		case <-deadline.C:
			t.Fatalf("server got %d requests within %v, want %d", s.count(), slack, n)
		}
	}
}

func observedLogger() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.DebugLevel)
	return zap.New(core), logs
}

// running is a Source under Run in the background.
type running struct {
	src     *Source
	updates chan sources.Update
	logs    *observer.ObservedLogs
	cancel  context.CancelFunc
	done    chan error // Run's result
}

// start runs a Source for rawURL with test-friendly options (opts
// override them) until the test ends.
func start(t *testing.T, rawURL string, opts ...Option) *running {
	t.Helper()
	log, logs := observedLogger()
	opts = append([]Option{WithLogger(log), WithPeriod(testPeriod)}, opts...)
	src, err := New(rawURL, testNode, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{src: src, updates: make(chan sources.Update, 1000), logs: logs, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- src.Run(ctx, func(u sources.Update) { r.updates <- u }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-r.done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return r
}

// next returns the next update, failing the test if none comes within
// slack.
func (r *running) next(t *testing.T) sources.Update {
	t.Helper()
	select {
	case u := <-r.updates:
		return u
	case <-time.After(slack):
		t.Fatalf("no update within %v", slack)
		return sources.Update{}
	}
}

// drain returns the updates delivered so far.
func (r *running) drain() []sources.Update {
	var out []sources.Update
	for {
		select {
		case u := <-r.updates:
			out = append(out, u)
		default:
			return out
		}
	}
}

// podNames returns "namespace/name=image" for each pod of u, in order.
func podNames(u sources.Update) []string {
	var out []string
	for _, p := range u.Pods {
		out = append(out, p.Namespace+"/"+p.Name+"="+p.Spec.Containers[0].Image)
	}
	return out
}

func describe(u sources.Update) string {
	return fmt.Sprintf("{pods %q, problems %v, err %v}", podNames(u), u.Problems, u.Err)
}

// wantPods fails unless u is a successful update with exactly the pods
// want (see podNames).
func wantPods(t *testing.T, u sources.Update, want ...string) {
	t.Helper()
	if u.Err != nil || strings.Join(podNames(u), ",") != strings.Join(want, ",") {
		t.Fatalf("update = %s, want pods %q", describe(u), want)
	}
}

// wantProblems fails unless u's problems each contain the strings of one
// want entry, in order.
func wantProblems(t *testing.T, u sources.Update, want ...[]string) {
	t.Helper()
	if len(u.Problems) != len(want) {
		t.Fatalf("problems = %v, want %d", u.Problems, len(want))
	}
	for i, subs := range want {
		for _, sub := range subs {
			if !strings.Contains(u.Problems[i].Error(), sub) {
				t.Errorf("problem %d %q does not contain %q", i, u.Problems[i], sub)
			}
		}
	}
}
