package dockerproxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/actorlet/actorlet/test/support/dockerproxy"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// waitTimeout bounds every wait of these tests.
const waitTimeout = 5 * time.Second

// fakeDaemon is an httptest upstream that speaks enough of the Docker API:
// it echoes requests, knows some containers by ID, streams /events lines
// from a channel, and upgrades POST /exec/{id}/start to an uppercasing
// echo.
type fakeDaemon struct {
	srv    *httptest.Server
	events chan string
	names  map[string]string // container ID → name
	// streams is how many /events handlers are running: one that has not
	// yet seen its client go would take the next line sent on events.
	streams atomic.Int32

	mu   sync.Mutex
	seen []string // "METHOD /path?query" of every request
}

type echo struct {
	Method, Path, Query, Body string
}

func newFakeDaemon(t *testing.T, unix bool) *fakeDaemon {
	t.Helper()
	d := &fakeDaemon{events: make(chan string), names: map[string]string{
		"abc123": "actorlet_app_a_default_1234abcd_0",
		"def456": "actorlet_app_b_default_5678ef01_0",
	}}
	d.srv = httptest.NewUnstartedServer(http.HandlerFunc(d.serve))
	if unix {
		dir, err := os.MkdirTemp("", "fakedaemon-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		ln, err := net.Listen("unix", filepath.Join(dir, "d.sock"))
		if err != nil {
			t.Fatal(err)
		}
		d.srv.Listener.Close()
		d.srv.Listener = ln
	}
	d.srv.Start()
	t.Cleanup(d.srv.Close)
	return d
}

// addr is the daemon's address as DOCKER_HOST would say it.
func (d *fakeDaemon) addr() string {
	if a := d.srv.Listener.Addr(); a.Network() == "unix" {
		return "unix://" + a.String()
	}
	return "tcp://" + d.srv.Listener.Addr().String()
}

// saw returns the requests received whose "METHOD /path" starts with prefix.
func (d *fakeDaemon) saw(prefix string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, s := range d.seen {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

func (d *fakeDaemon) serve(w http.ResponseWriter, r *http.Request) {
	path := dockerproxy.StripVersion(r.URL.Path)
	d.mu.Lock()
	d.seen = append(d.seen, r.Method+" "+path+"?"+r.URL.RawQuery)
	d.mu.Unlock()
	segs := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case path == "/events":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		d.streams.Add(1)
		defer d.streams.Add(-1)
		for {
			select {
			case line := <-d.events:
				_, _ = io.WriteString(w, line+"\n")
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	case len(segs) == 3 && segs[0] == "containers" && segs[2] == "json" && r.Method == http.MethodGet:
		name, ok := d.names[segs[1]]
		w.Header().Set("Content-Type", "application/json")
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"message":"No such container: `+segs[1]+`"}`)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"Id": segs[1], "Name": "/" + name})
	case len(segs) == 3 && segs[0] == "exec" && segs[2] == "start" && r.Header.Get("Upgrade") == "tcp":
		d.upgrade(w, r)
	default:
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(echo{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Body: string(body)})
	}
}

// upgrade answers as Docker's hijacked exec start: 101, then a raw stream;
// here it echoes in upper case until the client closes its write side,
// then says "bye" and closes.
func (d *fakeDaemon) upgrade(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body) // the exec start options
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	_, _ = brw.WriteString("HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n")
	_ = brw.Flush()
	for {
		line, err := brw.ReadString('\n')
		if line != "" {
			_, _ = brw.WriteString(strings.ToUpper(line))
			_ = brw.Flush()
		}
		if err != nil {
			break
		}
	}
	_, _ = brw.WriteString("bye\n")
	_ = brw.Flush()
}

// start starts a proxy to d.
func start(t *testing.T, d *fakeDaemon, opts ...dockerproxy.Option) *dockerproxy.Proxy {
	t.Helper()
	p, err := dockerproxy.Start(t, d.addr(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// dial connects to the proxy.
func dial(ctx context.Context, p *dockerproxy.Proxy) (net.Conn, error) {
	var d net.Dialer
	addr := p.Addr()
	if s, ok := strings.CutPrefix(addr, "unix://"); ok {
		return d.DialContext(ctx, "unix", s)
	}
	return d.DialContext(ctx, "tcp", strings.TrimPrefix(addr, "tcp://"))
}

// client is an HTTP client of the proxy.
func client(t *testing.T, p *dockerproxy.Proxy) *http.Client {
	t.Helper()
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx, p) }}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// do sends one request and returns status and body.
func do(ctx context.Context, c *http.Client, method, path, body string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://docker"+path, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, string(b), err
}

func mustDo(t *testing.T, c *http.Client, method, path, body string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	status, b, err := do(ctx, c, method, path, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return status, b
}

// eventually polls cond every 10 ms until it holds or waitTimeout passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", waitTimeout, what)
		}
		<-tick.C
	}
}

type result struct {
	status int
	body   string
	err    error
	at     time.Time
}

// doAsync sends a request in the background.
func doAsync(ctx context.Context, c *http.Client, method, path string) <-chan result {
	out := make(chan result, 1)
	go func() {
		status, body, err := do(ctx, c, method, path, "")
		out <- result{status, body, err, time.Now()}
	}()
	return out
}

func wait(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(waitTimeout):
		t.Fatalf("no answer within %s", waitTimeout)
		return result{}
	}
}

func TestForwardsEverything(t *testing.T) {
	for _, tc := range []struct {
		name          string
		unixUpstream  bool
		opts          []dockerproxy.Option
		wantAddrStart string
	}{
		{"unix to unix", true, nil, "unix:///"},
		{"tcp to tcp", false, []dockerproxy.Option{dockerproxy.ListenTCP()}, "tcp://127.0.0.1:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newFakeDaemon(t, tc.unixUpstream)
			p := start(t, d, tc.opts...)
			if !strings.HasPrefix(p.Addr(), tc.wantAddrStart) {
				t.Fatalf("Addr %q, want prefix %q", p.Addr(), tc.wantAddrStart)
			}
			c := client(t, p)
			status, body := mustDo(t, c, "GET", "/v1.41/containers/json?all=1", "")
			var e echo
			if err := json.Unmarshal([]byte(body), &e); err != nil || status != 200 {
				t.Fatalf("list: %d %q (%v)", status, body, err)
			}
			if e.Path != "/v1.41/containers/json" || e.Query != "all=1" {
				t.Errorf("daemon saw %+v", e)
			}
			status, body = mustDo(t, c, "POST", "/v1.41/containers/create?name=web", `{"Image":"x"}`)
			if err := json.Unmarshal([]byte(body), &e); err != nil || status != 200 || e.Body != `{"Image":"x"}` || e.Method != "POST" {
				t.Fatalf("create: %d %q", status, body)
			}
			mustDo(t, c, "GET", "/_ping", "")

			for pattern, want := range map[string]int{
				"":                            3,
				"GET":                         2,
				"post":                        1,
				"/containers/json":            1,
				"GET /containers/json":        1,
				"POST /containers/json":       0,
				"post /containers/create":     1,
				"/containers/*":               2,
				"/containers/**":              2,
				"/**":                         3,
				"/_ping":                      1,
				"/v1.41/containers/json":      0, // patterns have no version
				"/containers/{id}/stop":       0,
				"DELETE /containers/{id}":     0,
				"GET /containers/json/extra":  0,
				"GET /containers/json/**":     1,
				"GET /containers/create":      0,
				"POST /containers/create/**":  1,
				"POST /containers/{x}":        1,
				"POST /containers/{x}/{y}/**": 0,
			} {
				if got := p.Count(pattern); got != want {
					t.Errorf("Count(%q) = %d, want %d", pattern, got, want)
				}
			}
			reqs := p.Requests()
			if len(reqs) != 3 || reqs[1].Container != "web" || reqs[1].Path != "/containers/create" ||
				reqs[1].RawQuery != "name=web" || reqs[1].Rule != 0 || reqs[1].Fault != "" {
				t.Errorf("Requests() = %+v", reqs)
			}
		})
	}
}

func TestStripVersion(t *testing.T) {
	for in, want := range map[string]string{
		"/v1.41/containers/json": "/containers/json",
		"/v1.41":                 "/",
		"/v2/events":             "/events",
		"/v1.24.1/x":             "/x",
		"/_ping":                 "/_ping",
		"/version":               "/version",
		"/volumes/v1.41":         "/volumes/v1.41",
		"/v1.x/y":                "/v1.x/y",
	} {
		if got := dockerproxy.StripVersion(in); got != want {
			t.Errorf("StripVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestError(t *testing.T) {
	d := newFakeDaemon(t, true)
	p := start(t, d)
	c := client(t, p)
	id := p.Add(dockerproxy.Rule{Method: "GET", Path: "/containers/json", Fault: dockerproxy.Error(500, "boom"), Times: 2})
	for i := range 3 {
		status, body := mustDo(t, c, "GET", "/v1.41/containers/json", "")
		if i < 2 {
			if status != 500 || strings.TrimSpace(body) != `{"message":"boom"}` {
				t.Errorf("request %d: %d %q, want 500 and Docker's error document", i, status, body)
			}
		} else if status != 200 {
			t.Errorf("request %d after the rule's 2 times: %d %q", i, status, body)
		}
	}
	if n := len(d.saw("GET /containers/json")); n != 1 {
		t.Errorf("daemon saw %d lists, want 1", n)
	}
	if h := p.Hits(id); h != 2 {
		t.Errorf("Hits = %d, want 2", h)
	}
	reqs := p.Requests()
	if reqs[0].Rule != id || reqs[0].Fault != "error" || reqs[2].Rule != 0 {
		t.Errorf("Requests() = %+v", reqs)
	}

	// A JSON object body is sent as it is; an empty one says it was injected.
	p.Add(dockerproxy.Rule{Path: "/info", Fault: dockerproxy.Error(409, `{"message":"conflict"}`)})
	p.Add(dockerproxy.Rule{Path: "/version", Fault: dockerproxy.Error(503, "")})
	if status, body := mustDo(t, c, "GET", "/v1.41/info", ""); status != 409 || strings.TrimSpace(body) != `{"message":"conflict"}` {
		t.Errorf("info: %d %q", status, body)
	}
	if status, body := mustDo(t, c, "GET", "/version", ""); status != 503 || !strings.Contains(body, "injected") {
		t.Errorf("version: %d %q", status, body)
	}
	p.Clear()
	if status, _ := mustDo(t, c, "GET", "/v1.41/info", ""); status != 200 {
		t.Errorf("after Clear: %d", status)
	}
	if h := p.Hits(id); h != 0 {
		t.Errorf("Hits of a cleared rule = %d, want 0", h)
	}
}

func TestDelay(t *testing.T) {
	d := newFakeDaemon(t, true)
	p := start(t, d)
	c := client(t, p)

	const delay = 200 * time.Millisecond
	p.Add(dockerproxy.Rule{Path: "/containers/json", Fault: dockerproxy.Delay(delay), Times: 1})
	begin := time.Now()
	if status, _ := mustDo(t, c, "GET", "/v1.41/containers/json", ""); status != 200 {
		t.Fatalf("delayed request: %d", status)
	}
	if took := time.Since(begin); took < delay {
		t.Errorf("answered after %v, want at least %v", took, delay)
	}

	// A client that gives up during the delay: nothing reaches the daemon.
	p.Add(dockerproxy.Rule{Path: "/info", Fault: dockerproxy.Delay(time.Hour)})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, _, err := do(ctx, c, "GET", "/v1.41/info", ""); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("client gave up: %v, want deadline exceeded", err)
	}
	eventually(t, "the abandoned request to end", func() bool { return p.InFlight("") == 0 })
	if n := len(d.saw("GET /info")); n != 0 {
		t.Errorf("daemon saw %d abandoned requests", n)
	}

	// Clearing the rule forwards what it holds at once.
	held := doAsync(context.Background(), c, "GET", "/v1.41/info")
	eventually(t, "the request to be held", func() bool { return p.InFlight("GET /info") == 1 })
	cleared := time.Now()
	p.Clear()
	r := wait(t, held)
	if r.err != nil || r.status != 200 {
		t.Fatalf("released request: %+v", r)
	}
	if took := r.at.Sub(cleared); took > time.Second {
		t.Errorf("released request answered %v after Clear", took)
	}
}

func TestHang(t *testing.T) {
	d := newFakeDaemon(t, true)
	p := start(t, d)
	c := client(t, p)
	id := p.Add(dockerproxy.Rule{Method: "POST", Path: "/containers/{id}/stop", Fault: dockerproxy.Hang()})

	// The client gives up: the request never reaches the daemon.
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := doAsync(ctx, c, "POST", "/v1.41/containers/abc123/stop")
	eventually(t, "the stop to hang", func() bool { return p.Hits(id) == 1 && p.InFlight("POST /containers/*/stop") == 1 })
	if status, _ := mustDo(t, c, "POST", "/v1.41/containers/abc123/start", ""); status != 200 {
		t.Errorf("a start is not hung: %d", status)
	}
	cancel()
	if r := wait(t, gaveUp); !errors.Is(r.err, context.Canceled) {
		t.Errorf("cancelled client: %+v", r)
	}
	eventually(t, "the abandoned stop to end", func() bool { return p.InFlight("") == 0 })
	if n := len(d.saw("POST /containers/abc123/stop")); n != 0 {
		t.Errorf("daemon saw %d hung stops", n)
	}
	if p.Responding("") != 0 {
		t.Error("a request is still responding")
	}

	// Removing the rule forwards the hung request.
	held := doAsync(context.Background(), c, "POST", "/v1.41/containers/abc123/stop")
	eventually(t, "the second stop to hang", func() bool { return p.Hits(id) == 2 })
	if !p.Remove(id) {
		t.Fatal("Remove: rule not found")
	}
	if p.Remove(id) {
		t.Error("Remove twice: found again")
	}
	if r := wait(t, held); r.err != nil || r.status != 200 {
		t.Fatalf("released stop: %+v", r)
	}
	if n := len(d.saw("POST /containers/abc123/stop")); n != 1 {
		t.Errorf("daemon saw %d stops, want 1", n)
	}
}

func TestDrop(t *testing.T) {
	d := newFakeDaemon(t, true)
	p := start(t, d)
	p.Add(dockerproxy.Rule{Path: "/containers/json", Fault: dockerproxy.Drop(), Times: 1})

	// On the wire: the connection closes and not one byte comes back.
	conn, err := dial(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(waitTimeout))
	if _, err := io.WriteString(conn, "GET /v1.41/containers/json HTTP/1.1\r\nHost: docker\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(conn)
	if err != nil || len(got) != 0 {
		t.Fatalf("dropped request: read %q, %v; want nothing and EOF", got, err)
	}
	if n := len(d.saw("GET /containers/json")); n != 0 {
		t.Errorf("daemon saw %d dropped requests", n)
	}

	// Once only: the next one goes through.
	c := client(t, p)
	if status, _ := mustDo(t, c, "GET", "/v1.41/containers/json", ""); status != 200 {
		t.Errorf("after the drop: %d", status)
	}

	// Until removed, an HTTP client sees an error, not an answer.
	id := p.Add(dockerproxy.Rule{Path: "/info", Fault: dockerproxy.Drop()})
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if _, _, err := do(ctx, c, "GET", "/v1.41/info", ""); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("dropped request: %v, want a connection error", err)
	}
	if h := p.Hits(id); h < 1 {
		t.Errorf("Hits = %d", h)
	}
}

func TestContainerMatch(t *testing.T) {
	d := newFakeDaemon(t, true)
	p := start(t, d)
	c := client(t, p)

	// By the name of a create.
	hang := p.Add(dockerproxy.Rule{Method: "POST", Path: "/containers/create", Container: "actorlet_app_a_", Fault: dockerproxy.Hang()})
	if status, _ := mustDo(t, c, "POST", "/v1.41/containers/create?name=actorlet_app_b_default_5678ef01_0", "{}"); status != 200 {
		t.Errorf("create of another pod: %d", status)
	}
	held := doAsync(context.Background(), c, "POST", "/v1.41/containers/create?name=actorlet_app_a_default_1234abcd_0")
	eventually(t, "pod a's create to hang", func() bool { return p.Hits(hang) == 1 })
	if status, _ := mustDo(t, c, "GET", "/v1.41/containers/json", ""); status != 200 {
		t.Errorf("list: %d", status)
	}
	p.Remove(hang)
	if r := wait(t, held); r.err != nil || r.status != 200 {
		t.Fatalf("released create: %+v", r)
	}

	// By the ID in the path, resolved to the name by the daemon, or by a
	// name in the path.
	fail := p.Add(dockerproxy.Rule{Method: "POST", Path: "/containers/{id}/stop", Container: "actorlet_app_a_", Fault: dockerproxy.Error(500, "stuck")})
	for path, want := range map[string]int{
		"/v1.41/containers/abc123/stop":                            500, // pod a's, by ID
		"/v1.41/containers/def456/stop":                            200, // pod b's
		"/v1.41/containers/actorlet_app_a_default_1234abcd_0/stop": 500, // by name
		"/v1.41/containers/unknown/stop":                           200, // no such container: no name
		"/v1.41/containers/abc123/start":                           200, // another path
	} {
		for range 2 {
			if status, _ := mustDo(t, c, "POST", path, ""); status != want {
				t.Errorf("POST %s: %d, want %d", path, status, want)
			}
		}
	}
	if h := p.Hits(fail); h != 4 {
		t.Errorf("Hits = %d, want 4", h)
	}
	if n := len(d.saw("GET /containers/abc123/json")); n != 1 {
		t.Errorf("daemon was asked %d times for abc123's name, want 1 (cached)", n)
	}
	// A container filter never matches requests that name no container.
	p.Add(dockerproxy.Rule{Path: "/containers/json", Container: "a", Fault: dockerproxy.Error(500, "")})
	if status, _ := mustDo(t, c, "GET", "/v1.41/containers/json", ""); status != 200 {
		t.Errorf("list with a container rule: %d", status)
	}
}

func TestFirstActiveRuleWins(t *testing.T) {
	d := newFakeDaemon(t, true)
	p := start(t, d)
	c := client(t, p)
	first := p.Add(dockerproxy.Rule{Path: "/info", Fault: dockerproxy.Error(500, "first"), Times: 1})
	second := p.Add(dockerproxy.Rule{Path: "/info", Fault: dockerproxy.Error(501, "second")})
	for _, want := range []int{500, 501, 501} {
		if status, _ := mustDo(t, c, "GET", "/info", ""); status != want {
			t.Errorf("status %d, want %d", status, want)
		}
	}
	if p.Hits(first) != 1 || p.Hits(second) != 2 {
		t.Errorf("hits %d and %d, want 1 and 2", p.Hits(first), p.Hits(second))
	}
}

// A stream's lines reach the client as the daemon writes them, and Abort
// breaks it.
func TestStreamPassesUnbuffered(t *testing.T) {
	d := newFakeDaemon(t, true)
	p := start(t, d)
	c := client(t, p)
	req, _ := http.NewRequest("GET", "http://docker/v1.41/events?filters=%7B%7D", nil)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	eventually(t, "the stream to be responding", func() bool { return p.Responding("GET /events") == 1 })
	lines := bufio.NewReader(res.Body)
	for _, ev := range []string{`{"status":"start"}`, `{"status":"die"}`} {
		// d.events is unbuffered: the daemon writes the next line only
		// after the client has read the previous one.
		select {
		case d.events <- ev:
		case <-time.After(waitTimeout):
			t.Fatal("the daemon could not send: the previous line is stuck in the proxy")
		}
		got, err := lines.ReadString('\n')
		if err != nil || strings.TrimSpace(got) != ev {
			t.Fatalf("read %q, %v; want %q", got, err, ev)
		}
	}
	if n := p.Abort("/events"); n != 1 {
		t.Errorf("Abort broke %d requests, want 1", n)
	}
	if _, err := lines.ReadString('\n'); err == nil || err == io.EOF {
		t.Errorf("aborted stream: %v, want an unexpected end", err)
	}
	eventually(t, "the aborted stream to end", func() bool { return p.InFlight("") == 0 })
}

func TestDropAfterBreaksStream(t *testing.T) {
	d := newFakeDaemon(t, true)
	p := start(t, d)
	c := client(t, p)
	id := p.Add(dockerproxy.Rule{Path: "/events", Fault: dockerproxy.DropAfter(0), Times: 1})
	req, _ := http.NewRequest("GET", "http://docker/v1.41/events", nil)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(res.Body)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("broken stream: %v, want unexpected EOF", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("the stream was not broken")
	}
	if p.Hits(id) != 1 {
		t.Errorf("Hits = %d", p.Hits(id))
	}
	// Once: the next subscription streams.
	ctx, cancel := context.WithCancel(context.Background())
	next := doAsync(ctx, c, "GET", "/v1.41/events")
	eventually(t, "the next stream to respond", func() bool { return p.Responding("/events") == 1 })
	cancel()
	wait(t, next)
}

// A connection upgrade (Docker's hijacked exec start and attach) passes
// both ways, and a half-close of the client's side still lets the rest of
// the daemon's output through.
func TestUpgradePassesBothWays(t *testing.T) {
	d := newFakeDaemon(t, true)
	p := start(t, d)
	conn, err := dial(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(waitTimeout))
	body := `{"Detach":false,"Tty":false}`
	if _, err := io.WriteString(conn, "POST /v1.41/exec/e1/start HTTP/1.1\r\nHost: docker\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n"+
		"Content-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusSwitchingProtocols || !strings.EqualFold(res.Header.Get("Upgrade"), "tcp") {
		t.Fatalf("answer %s %v, want 101 with Upgrade: tcp", res.Status, res.Header)
	}
	eventually(t, "the upgraded request to count as responding", func() bool { return p.Responding("POST /exec/*/start") == 1 })
	for _, line := range []string{"hello\n", "again\n"} {
		if _, err := io.WriteString(conn, line); err != nil {
			t.Fatal(err)
		}
		got, err := br.ReadString('\n')
		if err != nil || got != strings.ToUpper(line) {
			t.Fatalf("echo of %q: %q, %v", line, got, err)
		}
	}
	if err := conn.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "bye\n" {
		t.Fatalf("after half-close: %q, %v; want \"bye\\n\" then EOF", rest, err)
	}
	eventually(t, "the upgraded request to end", func() bool { return p.InFlight("") == 0 })
	if p.Count("POST /exec/{id}/start") != 1 {
		t.Errorf("Count = %d", p.Count("POST /exec/{id}/start"))
	}
}

func TestUpstreamDownIs502(t *testing.T) {
	dir, err := os.MkdirTemp("", "nodaemon-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	p, err := dockerproxy.Start(t, "unix://"+filepath.Join(dir, "none.sock"))
	if err != nil {
		t.Fatal(err)
	}
	status, body := mustDo(t, client(t, p), "GET", "/_ping", "")
	if status != http.StatusBadGateway || !strings.Contains(body, `"message":"dockerproxy: upstream`) {
		t.Errorf("%d %q, want 502 in Docker's error format", status, body)
	}
}

func TestCloseBreaksHeldRequests(t *testing.T) {
	d := newFakeDaemon(t, true)
	p, err := dockerproxy.New(d.addr())
	if err != nil {
		t.Fatal(err)
	}
	sock := strings.TrimPrefix(p.Addr(), "unix://")
	c := client(t, p)
	p.Add(dockerproxy.Rule{Path: "/containers/create", Fault: dockerproxy.Hang()})
	held := doAsync(context.Background(), c, "POST", "/v1.41/containers/create?name=x")
	eventually(t, "the create to hang", func() bool { return p.InFlight("") == 1 })
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if r := wait(t, held); r.err == nil {
		t.Errorf("held request after Close: %+v, want an error", r)
	}
	if n := len(d.saw("POST /containers/create")); n != 0 {
		t.Errorf("daemon saw %d creates", n)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket still there after Close: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestUpstreamAddress(t *testing.T) {
	for _, bad := range []string{"ssh://host", "npipe:////./pipe/docker_engine", "unix://", "::"} {
		if p, err := dockerproxy.New(bad); err == nil {
			p.Close()
			t.Errorf("New(%q): no error", bad)
		}
	}
	d := newFakeDaemon(t, true)
	t.Setenv("DOCKER_HOST", d.addr())
	p, err := dockerproxy.Start(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := mustDo(t, client(t, p), "GET", "/_ping", ""); status != 200 {
		t.Errorf("via DOCKER_HOST: %d", status)
	}
	if len(d.saw("GET /_ping")) != 1 {
		t.Error("DOCKER_HOST's daemon was not used")
	}
}

// Mute passes the stream's header on and drops every line the daemon
// sends: the client's stream is open (Responding) and silent until it
// gives up. The next subscription, past Times, streams.
func TestMuteSilencesStream(t *testing.T) {
	d := newFakeDaemon(t, true)
	p := start(t, d)
	c := client(t, p)
	id := p.Add(dockerproxy.Rule{Path: "/events", Fault: dockerproxy.Mute(), Times: 1})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://docker/v1.41/events", nil)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	read := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(res.Body)
		read <- string(b)
	}()
	for _, ev := range []string{`{"status":"start"}`, `{"status":"die"}`} {
		select { // unbuffered: the daemon's handler took the line and wrote it
		case d.events <- ev:
		case <-time.After(waitTimeout):
			t.Fatal("the daemon could not send: the muted stream is not being read")
		}
	}
	// The client may read the header before the proxy's flush returns and
	// marks the stream answered: wait for the mark, don't sample it.
	eventually(t, "a muted stream to count as responding", func() bool { return p.Responding("GET /events") == 1 })
	cancel()
	select {
	case got := <-read:
		if got != "" {
			t.Errorf("the client read %q from a muted stream, want nothing", got)
		}
	case <-time.After(waitTimeout):
		t.Fatal("the muted stream did not end when the client gave up")
	}
	res.Body.Close()
	if p.Hits(id) != 1 || p.Requests()[0].Fault != "mute" || dockerproxy.Mute().String() != "mute" {
		t.Errorf("hits %d, requests %+v", p.Hits(id), p.Requests())
	}

	// The next subscription streams, once the daemon has seen the muted
	// one go (else its handler could take the next line).
	eventually(t, "the daemon to end the muted stream", func() bool { return d.streams.Load() == 0 })
	req, _ = http.NewRequest("GET", "http://docker/v1.41/events", nil)
	res, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	go func() { d.events <- `{"status":"start"}` }()
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != `{"status":"start"}` {
		t.Fatalf("next stream read %q, %v", line, err)
	}
	if n := p.Abort("/events"); n != 1 {
		t.Errorf("Abort broke %d streams, want 1", n)
	}
	eventually(t, "the streams to end", func() bool { return p.InFlight("") == 0 })
}
