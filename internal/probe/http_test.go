package probe

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// probeServer serves the paths the HTTP tests probe and records the last
// request.
type probeServer struct {
	*httptest.Server
	mu   sync.Mutex
	last *http.Request
}

func newProbeServer(t *testing.T, tls bool) *probeServer {
	t.Helper()
	s := &probeServer{}
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.last = r.Clone(context.Background())
		s.mu.Unlock()
		fmt.Fprint(w, "ok")
	})
	status := func(code int) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
	}
	mux.Handle("/created", status(http.StatusCreated))
	mux.Handle("/notmodified", status(http.StatusNotModified))
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://elsewhere.invalid/", http.StatusFound)
	})
	mux.Handle("/badrequest", status(http.StatusBadRequest))
	mux.Handle("/notfound", status(http.StatusNotFound))
	mux.Handle("/error", status(http.StatusInternalServerError))
	mux.Handle("/unavailable", status(http.StatusServiceUnavailable))
	mux.HandleFunc("/big", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, strings.Repeat("x", 3*maxBody))
	})
	mux.HandleFunc("/block", func(w http.ResponseWriter, r *http.Request) {
		select { // until the prober gives up (or the test ends)
		case <-r.Context().Done():
		case <-release:
		}
	})
	if tls {
		s.Server = httptest.NewTLSServer(mux)
	} else {
		s.Server = httptest.NewServer(mux)
	}
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(release) }) // runs first
	return s
}

func (s *probeServer) lastRequest() *http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// port returns the server's port.
func (s *probeServer) port(t *testing.T) int {
	t.Helper()
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHTTPGetStatus(t *testing.T) {
	srv := newProbeServer(t, false)
	port := intstr.FromInt32(int32(srv.port(t)))
	tests := []struct {
		path    string
		want    Result
		wantOut string
	}{
		{"/", Success, "ok"},
		{"", Success, "ok"}, // path defaults to "/"
		{"/created", Success, ""},
		{"/notmodified", Success, "redirect 304"},
		{"/redirect", Success, `redirect 302 to "http://elsewhere.invalid/", not followed`},
		{"/badrequest", Failure, "statuscode: 400"},
		{"/notfound", Failure, "statuscode: 404"},
		{"/error", Failure, "statuscode: 500"},
		{"/unavailable", Failure, "statuscode: 503"},
	}
	for _, tt := range tests {
		r, out := HTTPGet(context.Background(), "127.0.0.1", &v1.HTTPGetAction{Path: tt.path, Port: port}, nil, time.Second)
		if r != tt.want || !strings.Contains(out, tt.wantOut) {
			t.Errorf("GET %q: %v %q, want %v containing %q", tt.path, r, out, tt.want, tt.wantOut)
		}
	}
}

func TestHTTPGetBodyCapped(t *testing.T) {
	srv := newProbeServer(t, false)
	r, out := HTTPGet(context.Background(), "127.0.0.1", &v1.HTTPGetAction{Path: "/big", Port: intstr.FromInt32(int32(srv.port(t)))}, nil, time.Second)
	if r != Success || len(out) != maxBody {
		t.Fatalf("%v with %d bytes of output, want Success with %d", r, len(out), maxBody)
	}
}

func TestHTTPGetTimeout(t *testing.T) {
	srv := newProbeServer(t, false)
	const timeout = 50 * time.Millisecond
	start := time.Now()
	r, out := HTTPGet(context.Background(), "127.0.0.1", &v1.HTTPGetAction{Path: "/block", Port: intstr.FromInt32(int32(srv.port(t)))}, nil, timeout)
	took := time.Since(start)
	if r != Failure {
		t.Fatalf("blocked server: %v %q, want Failure", r, out)
	}
	if took < timeout || took > timeout+2*time.Second {
		t.Errorf("took %v, want about %v", took, timeout)
	}
}

func TestHTTPGetConnectionRefused(t *testing.T) {
	r, out := HTTPGet(context.Background(), "127.0.0.1", &v1.HTTPGetAction{Port: intstr.FromInt32(int32(closedPort(t)))}, nil, time.Second)
	if r != Failure || !strings.Contains(out, "refused") {
		t.Fatalf("closed port: %v %q, want Failure, connection refused", r, out)
	}
}

func TestHTTPGetHTTPS(t *testing.T) {
	srv := newProbeServer(t, true) // self-signed: not verified, as the kubelet
	a := &v1.HTTPGetAction{Scheme: v1.URISchemeHTTPS, Port: intstr.FromInt32(int32(srv.port(t)))}
	if r, out := HTTPGet(context.Background(), "127.0.0.1", a, nil, time.Second); r != Success {
		t.Fatalf("https: %v %q, want Success", r, out)
	}
	// Plain HTTP to a TLS server fails (400 from Go's TLS server).
	a.Scheme = v1.URISchemeHTTP
	if r, out := HTTPGet(context.Background(), "127.0.0.1", a, nil, time.Second); r != Failure {
		t.Fatalf("http to https server: %v %q, want Failure", r, out)
	}
}

func TestHTTPGetRequest(t *testing.T) {
	srv := newProbeServer(t, false)
	c := &v1.Container{Ports: []v1.ContainerPort{{Name: "metrics", ContainerPort: 1}, {Name: "http", ContainerPort: int32(srv.port(t))}}}
	resolve := func(p intstr.IntOrString) (int, error) { return ResolvePort(p, c) }
	tests := []struct {
		name    string
		host    string // the default host
		action  v1.HTTPGetAction
		check   func(*http.Request) string // "" when fine
		wantRes Result
	}{
		{
			name: "defaults", host: "127.0.0.1",
			action: v1.HTTPGetAction{Path: "/healthz?verbose=1", Port: intstr.FromString("http")},
			check: func(r *http.Request) string {
				switch {
				case r.URL.Path != "/healthz" || r.URL.RawQuery != "verbose=1":
					return "URL " + r.URL.String()
				case r.UserAgent() != UserAgent:
					return "User-Agent " + r.UserAgent()
				case r.Header.Get("Accept") != "*/*":
					return "Accept " + r.Header.Get("Accept")
				case r.Host != net.JoinHostPort("127.0.0.1", strconv.Itoa(srv.port(t))):
					return "Host " + r.Host
				}
				return ""
			},
			wantRes: Success,
		},
		{
			name: "headers", host: "127.0.0.1",
			action: v1.HTTPGetAction{Port: intstr.FromString("http"), HTTPHeaders: []v1.HTTPHeader{
				{Name: "x-custom", Value: "a"}, {Name: "X-Custom", Value: "b"},
				{Name: "User-Agent", Value: "mine"}, {Name: "Accept", Value: ""}, {Name: "Host", Value: "example.com"},
			}},
			check: func(r *http.Request) string {
				switch {
				case strings.Join(r.Header.Values("X-Custom"), ",") != "a,b":
					return fmt.Sprintf("X-Custom %q", r.Header.Values("X-Custom"))
				case r.UserAgent() != "mine":
					return "User-Agent " + r.UserAgent()
				case len(r.Header.Values("Accept")) != 0:
					return fmt.Sprintf("Accept %q (an empty header removes it)", r.Header.Values("Accept"))
				case r.Host != "example.com":
					return "Host " + r.Host
				}
				return ""
			},
			wantRes: Success,
		},
		{
			// The probe's own host wins over the default (an unroutable
			// test address, never dialled).
			name: "probe host", host: "192.0.2.1",
			action:  v1.HTTPGetAction{Host: "127.0.0.1", Port: intstr.FromInt32(int32(srv.port(t)))},
			wantRes: Success,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, out := HTTPGet(context.Background(), tt.host, &tt.action, resolve, time.Second)
			if r != tt.wantRes {
				t.Fatalf("%v %q, want %v", r, out, tt.wantRes)
			}
			if tt.check != nil {
				if msg := tt.check(srv.lastRequest()); msg != "" {
					t.Errorf("request: %s", msg)
				}
			}
		})
	}
}

func TestHTTPGetUnknown(t *testing.T) {
	srv := newProbeServer(t, false)
	port := intstr.FromInt32(int32(srv.port(t)))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name   string
		ctx    context.Context
		host   string
		action *v1.HTTPGetAction
	}{
		{"no action", context.Background(), "127.0.0.1", nil},
		{"bad scheme", context.Background(), "127.0.0.1", &v1.HTTPGetAction{Scheme: "ftp", Port: port}},
		{"unknown port name", context.Background(), "127.0.0.1", &v1.HTTPGetAction{Port: intstr.FromString("http")}},
		{"port out of range", context.Background(), "127.0.0.1", &v1.HTTPGetAction{Port: intstr.FromInt32(70000)}},
		{"no host", context.Background(), "", &v1.HTTPGetAction{Port: port}},
		{"cancelled", cancelled, "127.0.0.1", &v1.HTTPGetAction{Port: port}},
	}
	for _, tt := range tests {
		if r, out := HTTPGet(tt.ctx, tt.host, tt.action, nil, time.Second); r != Unknown {
			t.Errorf("%s: %v %q, want Unknown", tt.name, r, out)
		}
	}
}

// closedPort returns a local TCP port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}
