// Package dockerproxy is a fault-injecting proxy for the Docker Engine
// API, for tests: it listens on a unix socket of its own (or on
// 127.0.0.1), forwards every request to the Docker daemon, and delays,
// hangs, fails, drops or mutes the requests that match the rules a test
// adds.
//
//	p, err := dockerproxy.Start(t, "") // DOCKER_HOST, else the default socket
//	rt, err := docker.New(docker.WithHost(p.Addr()))
//	id := p.Add(dockerproxy.Rule{Method: "GET", Path: "/containers/json", Fault: dockerproxy.Error(500, "daemon away")})
//	...
//	p.Remove(id) // or p.Clear()
//	n := p.Count("POST /containers/create")
//
// Paths are matched without Docker's API version prefix (/v1.41/...).
// Responses are copied as they come (no buffering), so streams (events,
// logs, attach, exec, pull progress) flow through, and connection upgrades
// (the hijacked attach and exec start, 101 Switching Protocols) are passed
// through both ways, half-close included (net/http/httputil.ReverseProxy).
package dockerproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// DefaultUpstream is the daemon address used when neither the upstream
// argument nor DOCKER_HOST names one.
const DefaultUpstream = "unix:///var/run/docker.sock"

// Timeouts of the proxy's own work.
const (
	// resolveTimeout bounds the inspect that maps a container ID in a
	// path to its name (for Rule.Container).
	resolveTimeout = 5 * time.Second
	// closeTimeout bounds how long Close waits for requests in flight.
	closeTimeout = 10 * time.Second
)

// Option configures New and Start.
type Option func(*config)

type config struct {
	tcp bool
}

// ListenTCP makes the proxy listen on 127.0.0.1 (a free port) instead of a
// unix socket; Addr is then "tcp://127.0.0.1:<port>".
func ListenTCP() Option { return func(c *config) { c.tcp = true } }

// Proxy is a running proxy. Its methods are safe for concurrent use.
type Proxy struct {
	network, address string // the upstream daemon
	upstreamHost     string // URL host of forwarded requests
	transport        *http.Transport
	rp               *httputil.ReverseProxy
	resolver         *http.Client

	ln     net.Listener
	srv    *http.Server
	served chan struct{}
	addr   string
	dir    string // temporary directory of the unix socket

	ctx      context.Context // parent of every request's context
	cancel   context.CancelFunc
	handlers sync.WaitGroup

	mu       sync.Mutex
	closed   bool
	nextID   RuleID
	rules    []*rule
	log      []Request
	inFlight map[*call]struct{}
	names    map[string]string // container ID or name in a path → name
}

// rule is an added Rule and its state.
type rule struct {
	Rule
	id       RuleID
	pat      pattern
	hits     int
	released chan struct{} // closed when the rule is removed
}

func (r *rule) active() bool { return r.Times <= 0 || r.hits < r.Times }

// Request is one request the proxy received, as Requests reports it.
type Request struct {
	Time   time.Time
	Method string
	// Path is without the API version prefix; RawQuery is the query.
	Path, RawQuery string
	// Container is the container the request names (the name of a
	// create, the {id} of /containers/{id}/...), "" when none.
	Container string
	// Rule is the rule that applied (0: forwarded untouched) and Fault
	// what it did ("delay", "hang", "error", "drop", "drop-after", "mute").
	Rule  RuleID
	Fault string
}

// call is a request in flight.
type call struct {
	method, path string
	aborted      atomic.Bool
	responding   atomic.Bool
	abort        func()
	dropAfter    time.Duration // < 0: none
	mute         bool          // drop the answer's body (Mute)

	mu    sync.Mutex
	ended bool
	cut   *time.Timer // DropAfter's
}

// answered records that the answer has reached the client (its header
// is flushed, or the connection is switched) and arms DropAfter's cut.
func (c *call) answered() {
	if !c.responding.CompareAndSwap(false, true) || c.dropAfter < 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ended {
		c.cut = time.AfterFunc(c.dropAfter, c.abort)
	}
}

// done disarms the cut.
func (c *call) done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended = true
	if c.cut != nil {
		c.cut.Stop()
	}
}

// trackingWriter notices when the answer's header reaches the client:
// ReverseProxy flushes it at once (FlushInterval -1), through FlushError.
// Hijack (connection upgrades) goes to the wrapped writer via Unwrap.
type trackingWriter struct {
	http.ResponseWriter
	c *call
}

func (w *trackingWriter) FlushError() error {
	err := http.NewResponseController(w.ResponseWriter).Flush()
	if err == nil {
		w.c.answered()
	}
	return err
}

func (w *trackingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

type callKey struct{}

func callFrom(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// errAborted cancels the contexts of requests the proxy breaks on purpose.
var errAborted = errors.New("dockerproxy: request aborted")

// Start starts a proxy to upstream (see New) and closes it when the test
// ends.
func Start(tb testing.TB, upstream string, opts ...Option) (*Proxy, error) {
	tb.Helper()
	p, err := New(upstream, opts...)
	if err != nil {
		return nil, err
	}
	tb.Cleanup(func() { _ = p.Close() })
	return p, nil
}

// New starts a proxy to the daemon at upstream: "unix:///path/to/sock",
// "tcp://host:port" or "http://host:port" (no TLS). An empty upstream
// means DOCKER_HOST, else DefaultUpstream. The daemon is not contacted
// until a request comes. Close the proxy when done.
func New(upstream string, opts ...Option) (*Proxy, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	if upstream == "" {
		upstream = os.Getenv("DOCKER_HOST")
	}
	if upstream == "" {
		upstream = DefaultUpstream
	}
	p := &Proxy{inFlight: map[*call]struct{}{}, names: map[string]string{}, served: make(chan struct{})}
	u, err := url.Parse(upstream)
	if err != nil {
		return nil, fmt.Errorf("dockerproxy: upstream %q: %w", upstream, err)
	}
	switch u.Scheme {
	case "unix":
		p.network, p.address, p.upstreamHost = "unix", u.Path, "docker"
	case "tcp", "http":
		p.network, p.address, p.upstreamHost = "tcp", u.Host, u.Host
	default:
		return nil, fmt.Errorf("dockerproxy: upstream %q: scheme %q not supported (unix, tcp, http)", upstream, u.Scheme)
	}
	if p.address == "" {
		return nil, fmt.Errorf("dockerproxy: upstream %q: no address", upstream)
	}

	network, address := p.network, p.address
	p.transport = &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, address)
		},
		DisableCompression:  true,
		MaxIdleConnsPerHost: 32,
		IdleConnTimeout:     30 * time.Second,
	}
	p.resolver = &http.Client{Transport: p.transport, Timeout: resolveTimeout}
	discard := log.New(io.Discard, "", 0)
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = "http"
			pr.Out.URL.Host = p.upstreamHost
		},
		Transport:      p.transport,
		FlushInterval:  -1, // copy every write at once: streams are not buffered
		ModifyResponse: p.responding,
		ErrorHandler:   p.upstreamError,
		ErrorLog:       discard,
	}

	if cfg.tcp {
		p.ln, err = net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("dockerproxy: listen: %w", err)
		}
		p.addr = "tcp://" + p.ln.Addr().String()
	} else {
		// os.MkdirTemp, not t.TempDir: a unix socket path must stay
		// under ~108 bytes, and test names can be long.
		p.dir, err = os.MkdirTemp("", "dockerproxy-")
		if err != nil {
			return nil, fmt.Errorf("dockerproxy: %w", err)
		}
		sock := filepath.Join(p.dir, "docker.sock")
		p.ln, err = net.Listen("unix", sock)
		if err != nil {
			_ = os.RemoveAll(p.dir)
			return nil, fmt.Errorf("dockerproxy: listen: %w", err)
		}
		p.addr = "unix://" + sock
	}

	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 30 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return p.ctx },
		ErrorLog:          discard,
	}
	go func() {
		defer close(p.served)
		_ = p.srv.Serve(p.ln)
	}()
	return p, nil
}

// Addr is the proxy's address for docker.WithHost or DOCKER_HOST:
// "unix:///tmp/dockerproxy-.../docker.sock", or "tcp://127.0.0.1:<port>"
// with ListenTCP.
func (p *Proxy) Addr() string { return p.addr }

// Close stops the proxy: it stops listening, breaks every request in
// flight (held ones included; upgraded connections are closed), waits for
// them (at most 10 s) and removes its socket. Closing twice is harmless.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.rules = nil // held requests see their context end below: broken, not forwarded
	p.mu.Unlock()

	p.cancel()
	err := p.srv.Close()
	<-p.served
	done := make(chan struct{})
	go func() {
		p.handlers.Wait()
		close(done)
	}()
	t := time.NewTimer(closeTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		err = errors.Join(err, fmt.Errorf("dockerproxy: requests still in flight %s after close", closeTimeout))
	}
	p.transport.CloseIdleConnections()
	if p.dir != "" {
		err = errors.Join(err, os.RemoveAll(p.dir))
	}
	return err
}

// Add adds a rule and returns its ID. It applies to requests that arrive
// from now on.
func (p *Proxy) Add(r Rule) RuleID {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nextID++
	nr := &rule{Rule: r, id: p.nextID, pat: newPattern(r.Method, r.Path), released: make(chan struct{})}
	if p.closed {
		close(nr.released)
		return nr.id
	}
	p.rules = append(p.rules, nr)
	return nr.id
}

// Remove removes a rule: it applies to no new request, and the requests
// it holds (Delay, Hang) are forwarded now. It reports whether the rule
// was there.
func (p *Proxy) Remove(id RuleID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, r := range p.rules {
		if r.id == id {
			close(r.released)
			p.rules = append(p.rules[:i], p.rules[i+1:]...)
			return true
		}
	}
	return false
}

// Clear removes every rule (see Remove).
func (p *Proxy) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.rules {
		close(r.released)
	}
	p.rules = nil
}

// Hits is how many requests rule id has applied to (0 for an unknown or
// removed rule).
func (p *Proxy) Hits(id RuleID) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.rules {
		if r.id == id {
			return r.hits
		}
	}
	return 0
}

// Count is how many requests matching pattern the proxy has received so
// far, faulted or not. pattern is "METHOD /path", "/path" (see
// Rule.Path) or "METHOD"; "" counts every request.
func (p *Proxy) Count(pattern string) int {
	pat := parsePattern(pattern)
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, r := range p.log {
		if pat.match(r.Method, r.Path) {
			n++
		}
	}
	return n
}

// Requests returns every request received so far, oldest first.
func (p *Proxy) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.log...)
}

// InFlight is how many requests matching pattern (see Count) are being
// handled now: held by a rule, waiting for the daemon, or streaming.
func (p *Proxy) InFlight(pattern string) int {
	return p.countInFlight(pattern, false)
}

// Responding is how many requests matching pattern are in flight with the
// daemon's answer passed on to the client (its header, or the switch of
// an upgraded connection): e.g. an event stream that is subscribed.
func (p *Proxy) Responding(pattern string) int {
	return p.countInFlight(pattern, true)
}

func (p *Proxy) countInFlight(pattern string, responding bool) int {
	pat := parsePattern(pattern)
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for c := range p.inFlight {
		if pat.match(c.method, c.path) && (!responding || c.responding.Load()) {
			n++
		}
	}
	return n
}

// Abort breaks every request in flight that matches pattern (see Count):
// its client connection is closed, mid-stream if its answer has begun (an
// event stream breaks), without an answer otherwise. It returns how many
// it broke.
func (p *Proxy) Abort(pattern string) int {
	pat := parsePattern(pattern)
	p.mu.Lock()
	var hit []*call
	for c := range p.inFlight {
		if pat.match(c.method, c.path) {
			hit = append(hit, c)
		}
	}
	p.mu.Unlock()
	for _, c := range hit {
		c.abort()
	}
	return len(hit)
}

// ServeHTTP handles one request from a client.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	if p.closed { // Close waits for the handlers counted before it
		p.mu.Unlock()
		panic(http.ErrAbortHandler)
	}
	p.handlers.Add(1)
	p.mu.Unlock()
	defer p.handlers.Done()

	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	c := &call{method: r.Method, path: StripVersion(r.URL.Path), dropAfter: -1}
	c.abort = func() {
		c.aborted.Store(true)
		cancel(errAborted)
	}
	r = r.WithContext(context.WithValue(ctx, callKey{}, c))

	ref, byName := containerRef(c.path, r.URL.Query().Get)
	rl := p.begin(ctx, c, r, ref, byName)
	defer p.end(c)

	if rl != nil {
		switch rl.Fault.kind {
		case faultDelay:
			t := time.NewTimer(rl.Fault.delay)
			select {
			case <-t.C:
			case <-rl.released:
				t.Stop()
			case <-ctx.Done():
				t.Stop()
				panic(http.ErrAbortHandler) // the client gave up: nothing reaches the daemon
			}
		case faultHang:
			select {
			case <-rl.released:
			case <-ctx.Done():
				panic(http.ErrAbortHandler)
			}
		case faultError:
			writeError(w, rl.Fault.status, rl.Fault.body)
			return
		case faultDrop:
			// The server closes the connection without writing anything.
			panic(http.ErrAbortHandler)
		case faultDropAfter:
			c.dropAfter = rl.Fault.delay
		case faultMute:
			c.mute = true
		}
	}
	if ctx.Err() != nil {
		panic(http.ErrAbortHandler) // released, but the client or the proxy is gone
	}
	p.rp.ServeHTTP(&trackingWriter{ResponseWriter: w, c: c}, r)
}

// begin registers a request, finds the rule that applies to it (counting
// the hit) and logs it.
func (p *Proxy) begin(ctx context.Context, c *call, r *http.Request, ref string, byName bool) *rule {
	p.mu.Lock()
	p.inFlight[c] = struct{}{}
	// Resolve the container's name only when a rule needs it, and outside
	// the lock (it asks the daemon).
	needName := false
	for _, rl := range p.rules {
		if rl.active() && rl.Container != "" && ref != "" && !byName && rl.pat.match(c.method, c.path) && !strings.Contains(ref, rl.Container) {
			needName = true
		}
	}
	p.mu.Unlock()

	name := ""
	if needName {
		name = p.resolve(ctx, ref)
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	var chosen *rule
	for _, rl := range p.rules {
		if !rl.active() || !rl.pat.match(c.method, c.path) {
			continue
		}
		if rl.Container != "" {
			if ref == "" || !(strings.Contains(ref, rl.Container) || (name != "" && strings.Contains(name, rl.Container))) {
				continue
			}
		}
		chosen = rl
		rl.hits++
		break
	}
	entry := Request{Time: time.Now(), Method: c.method, Path: c.path, RawQuery: r.URL.RawQuery, Container: ref}
	if chosen != nil {
		entry.Rule, entry.Fault = chosen.id, chosen.Fault.kind.String()
	}
	p.log = append(p.log, entry)
	return chosen
}

// end unregisters a request.
func (p *Proxy) end(c *call) {
	c.done()
	p.mu.Lock()
	delete(p.inFlight, c)
	p.mu.Unlock()
}

// resolve maps a container ID (or name) to its name by inspecting it
// upstream; "" when that fails. Names are cached per reference.
func (p *Proxy) resolve(ctx context.Context, ref string) string {
	p.mu.Lock()
	name, ok := p.names[ref]
	p.mu.Unlock()
	if ok {
		return name
	}
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		"http://"+p.upstreamHost+"/containers/"+url.PathEscape(ref)+"/json", nil)
	if err != nil {
		return ""
	}
	res, err := p.resolver.Do(req)
	if err != nil {
		return ""
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return ""
	}
	var in struct{ ID, Name string }
	if err := json.NewDecoder(res.Body).Decode(&in); err != nil {
		return ""
	}
	name = strings.TrimPrefix(in.Name, "/")
	p.mu.Lock()
	p.names[ref] = name
	p.mu.Unlock()
	return name
}

// responding marks an upgraded request as answered (other answers are
// marked when their header is flushed to the client, by trackingWriter),
// and mutes the body of a muted request.
func (p *Proxy) responding(res *http.Response) error {
	c := callFrom(res.Request.Context())
	if c != nil && res.StatusCode == http.StatusSwitchingProtocols {
		c.answered()
	}
	if c != nil && c.mute && res.StatusCode != http.StatusSwitchingProtocols {
		res.Body = mutedBody{res.Body}
	}
	return nil
}

// mutedBody reads its body and drops what it reads: a Read returns only
// when the body ends, with no data.
type mutedBody struct{ io.ReadCloser }

func (b mutedBody) Read([]byte) (int, error) {
	buf := make([]byte, 4096)
	for {
		if _, err := b.ReadCloser.Read(buf); err != nil {
			return 0, err
		}
	}
}

// upstreamError handles a request the daemon did not answer: a request
// the proxy aborted, or whose client left, is dropped; otherwise the
// client gets a 502 in Docker's error format.
func (p *Proxy) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	if c := callFrom(r.Context()); (c != nil && c.aborted.Load()) || r.Context().Err() != nil {
		panic(http.ErrAbortHandler)
	}
	writeError(w, http.StatusBadGateway, "dockerproxy: upstream: "+err.Error())
}

// writeError answers with status and body (see Error).
func writeError(w http.ResponseWriter, status int, body string) {
	if body == "" {
		body = "dockerproxy: injected error " + http.StatusText(status)
	}
	if !json.Valid([]byte(body)) || !strings.HasPrefix(strings.TrimSpace(body), "{") {
		b, _ := json.Marshal(map[string]string{"message": body})
		body = string(b)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body+"\n")
}
