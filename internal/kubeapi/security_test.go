package kubeapi

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/actorlet/actorlet/internal/api"
	"github.com/actorlet/actorlet/internal/stats"
	"github.com/actorlet/actorlet/test/support/rawhttp"
	"github.com/actorlet/actorlet/test/support/testpki"
)

// cred is how a test client presents itself.
type cred struct {
	name   string
	token  string           // bearer token, "" for none
	cert   *tls.Certificate // client certificate, nil for none
	origin string           // Origin header, "" for none (as kubectl)
}

func (c cred) tlsConfig() *tls.Config {
	cfg := &tls.Config{InsecureSkipVerify: true} // the test server's own certificate
	if c.cert != nil {
		cfg.Certificates = []tls.Certificate{*c.cert}
	}
	return cfg
}

func (c cred) header() http.Header {
	h := http.Header{}
	if c.token != "" {
		h.Set("Authorization", "Bearer "+c.token)
	}
	if c.origin != "" {
		h.Set("Origin", c.origin)
	}
	return h
}

// do sends one request as c and returns the status code and body.
func (c cred) do(t *testing.T, method, url, contentType, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = c.header()
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	tr := &http.Transport{TLSClientConfig: c.tlsConfig()}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatalf("%s %s as %s: %v", method, url, c.name, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// exec upgrades pods/exec as c to run "echo hi" and returns the HTTP
// status of the upgrade (101 when it was accepted, after reading the
// session to its end).
func (c cred) exec(t *testing.T, url, pod string) (int, string) {
	t.Helper()
	wsURL := "wss" + strings.TrimPrefix(url, "https") + "/api/v1/namespaces/default/pods/" + pod + "/exec?command=echo&command=hi&stdout=true"
	d := websocket.Dialer{TLSClientConfig: c.tlsConfig(), Subprotocols: []string{protoV5}, HandshakeTimeout: 10 * time.Second}
	conn, resp, err := d.Dial(wsURL, c.header())
	if resp == nil {
		t.Fatalf("exec as %s: %v", c.name, err)
	}
	defer resp.Body.Close()
	if err != nil {
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	defer conn.Close()
	var got []string
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			break
		}
		got = append(got, fmt.Sprintf("%d:%s", msg[0], msg[1:]))
	}
	return resp.StatusCode, strings.Join(got, " ")
}

const podJSON = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q},"spec":{"containers":[{"name":"app","image":"busybox:1.37"}]}}`

// Writes (create, replace, patch, delete) and exec need an identity: none,
// a wrong token and a client certificate of another CA are refused (401,
// 401, 403), and nothing is written or run; an exec upgrade from a foreign
// Origin is refused even with a good credential. The right token and a
// certificate of the client CA pass, which shows the refusals are the
// credentials'. With only a client CA configured, reads stay anonymous and
// an anonymous write or exec is 401; with nothing configured, 403 saying
// how to configure one.
func TestWritesAndExecRefuseStrangers(t *testing.T) {
	clientCA, otherCA := testpki.NewCA(t, "client-ca"), testpki.NewCA(t, "other-ca")
	good, foreign := clientCA.Issue(t, "alice", false), otherCA.Issue(t, "mallory", false)
	var (
		anonymous  = cred{name: "no credentials"}
		wrongToken = cred{name: "a wrong token", token: "wrong-" + testToken}
		foreignCA  = cred{name: "a certificate of another CA", cert: &foreign}
		goodToken  = cred{name: "the token", token: testToken}
		goodCert   = cred{name: "a certificate of the client CA", cert: &good}
	)
	for _, srv := range []struct {
		name string
		opts serveOpts
		// who is refused, with the code; every other cred of allowed passes.
		refused map[*cred]int
		allowed []*cred
	}{
		{"token and client CA", serveOpts{token: true, clientCA: clientCA.PEM},
			map[*cred]int{&anonymous: 401, &wrongToken: 401, &foreignCA: 403}, []*cred{&goodToken, &goodCert}},
		{"client CA only", serveOpts{clientCA: clientCA.PEM},
			map[*cred]int{&anonymous: 401, &wrongToken: 401, &foreignCA: 403}, []*cred{&goodCert}},
		// Without a client CA the server asks for no certificate: one is
		// not even sent, and the request is anonymous.
		{"token only", serveOpts{token: true},
			map[*cred]int{&anonymous: 401, &wrongToken: 401, &foreignCA: 401}, []*cred{&goodToken}},
	} {
		t.Run(srv.name, func(t *testing.T) {
			fb := &fakeBackend{health: api.Health{OK: true}}
			fb.setPods(runningPod("default", "web", nil))
			url, dir := serve2(t, fb, fb, srv.opts)
			pods := url + "/api/v1/namespaces/default/pods"
			// A pushed pod to replace, patch and delete.
			if code, body := srv.allowed[0].do(t, "POST", pods, "application/json", fmt.Sprintf(podJSON, "victim")); code != 201 {
				t.Fatalf("create victim as %s: %d %s", srv.allowed[0].name, code, body)
			}
			waitPod(t, *srv.allowed[0], pods+"/victim")
			files := dirList(t, dir)

			for c, want := range srv.refused {
				for _, op := range []struct{ method, url, contentType, body string }{
					{"POST", pods, "application/json", fmt.Sprintf(podJSON, "intruder")},
					{"PUT", pods + "/victim", "application/json", fmt.Sprintf(podJSON, "victim")},
					{"PATCH", pods + "/victim", "application/merge-patch+json", `{"metadata":{"labels":{"owned":"yes"}}}`},
					{"DELETE", pods + "/victim", "", ""},
				} {
					if code, body := c.do(t, op.method, op.url, op.contentType, op.body); code != want || !strings.Contains(body, `"kind":"Status"`) {
						t.Errorf("%s %s as %s: %d %s, want %d", op.method, op.url, c.name, code, body, want)
					}
				}
				if code, body := c.exec(t, url, "web"); code != want {
					t.Errorf("exec as %s: %d %s, want %d", c.name, code, body, want)
				}
			}
			// A page of another origin, with a good credential.
			evil := *srv.allowed[0]
			evil.name, evil.origin = evil.name+" from https://evil.example", "https://evil.example"
			if code, body := evil.exec(t, url, "web"); code != 403 {
				t.Errorf("exec as %s: %d %s, want 403", evil.name, code, body)
			}
			if got := dirList(t, dir); got != files {
				t.Errorf("pushed pods after the refused writes: %s, want %s", got, files)
			}
			fb.mu.Lock()
			execs := len(fb.execs)
			fb.mu.Unlock()
			if execs != 0 {
				t.Errorf("refused execs ran %d commands: %v", execs, fb.execs)
			}
			if code, body := anonymous.do(t, "GET", pods, "", ""); srv.opts.token != (code == 401) {
				t.Errorf("anonymous list: %d %s; want 401 exactly when a token is configured", code, body)
			}
			for _, c := range srv.allowed {
				if code, body := c.exec(t, url, "web"); code != 101 || !strings.Contains(body, "1:hi\n") {
					t.Errorf("exec as %s: %d %q, want 101 and hi", c.name, code, body)
				}
				if code, body := c.do(t, "PATCH", pods+"/victim", "application/merge-patch+json", `{"metadata":{"labels":{"by":"ok"}}}`); code != 200 {
					t.Errorf("patch as %s: %d %s", c.name, code, body)
				}
			}
			if code, body := srv.allowed[0].do(t, "DELETE", pods+"/victim", "", ""); code != 200 {
				t.Errorf("delete as %s: %d %s", srv.allowed[0].name, code, body)
			}
		})
	}
	t.Run("nothing configured", func(t *testing.T) {
		fb := &fakeBackend{health: api.Health{OK: true}}
		fb.setPods(runningPod("default", "web", nil))
		url, dir := serve2(t, fb, fb, serveOpts{})
		wsURL := "ws" + strings.TrimPrefix(url, "http") + "/api/v1/namespaces/default/pods/web/exec?command=echo&command=hi&stdout=true"
		_, resp, err := websocket.DefaultDialer.Dial(wsURL, nil)
		if err == nil || resp == nil || resp.StatusCode != 403 {
			t.Errorf("exec without any credential configured: %v %v, want 403", err, resp)
		}
		if resp != nil {
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(data), "start it with --api-token-file") {
				t.Errorf("exec refusal %s: want how to configure a credential", data)
			}
		}
		resp2, err := http.Post(url+"/api/v1/namespaces/default/pods", "application/json", strings.NewReader(fmt.Sprintf(podJSON, "intruder")))
		if err != nil {
			t.Fatal(err)
		}
		resp2.Body.Close()
		if resp2.StatusCode != 403 || dirList(t, dir) != "" || len(fb.execs) != 0 {
			t.Errorf("create without any credential configured: %d, files %q, execs %v; want 403, nothing", resp2.StatusCode, dirList(t, dir), fb.execs)
		}
	})
}

// waitPod waits until GET url answers 200 as c.
func waitPod(t *testing.T, c cred, url string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body := c.do(t, "GET", url, "", "")
		if code == 200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %d %s after 10 s", url, code, body)
		}
		time.Sleep(20 * time.Millisecond) // polling the API's refresh; the deadline bounds it
	}
}

// dirList names the files in dir, sorted, "" when it is missing or empty.
func dirList(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}

// statsFake is a fakeBackend that serves stats, as the node does.
type statsFake struct{ *fakeBackend }

func (statsFake) StatsSummary(context.Context, bool) (*statsapi.Summary, error) {
	return &statsapi.Summary{Node: statsapi.NodeStats{NodeName: "node-1"}}, nil
}

func (statsFake) MachineInfo(context.Context) (stats.MachineInfo, error) {
	return stats.MachineInfo{NumCores: 2, MemoryCapacity: 1 << 30}, nil
}

// rawGet sends target verbatim in the request line over TLS as c and
// returns the status code.
func (c cred) rawGet(t *testing.T, addr, target string) int {
	t.Helper()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: rawhttp.Timeout}, "tcp", addr, c.tlsConfig())
	if err != nil {
		t.Fatal(err)
	}
	return rawhttp.Get(t, conn, target, c.header())
}

// The read-only surface is as hardened as /logs, endpoint by endpoint:
// behind the same authentication (401 without a credential or with a
// wrong token, 403 with a certificate of another CA; the token and a
// certificate of the client CA pass), behind the same path guard (".",
// "..", empty and percent-encoded segments are 400 before routing), names
// checked as Kubernetes names and bad query values refused (400), only
// GET served (405 for a method that would write), answers typed and never
// sniffed (Content-Type and X-Content-Type-Options: nosniff) and never
// shared with another origin (no Access-Control-Allow-Origin).
func TestReadOnlySurfaceAsHardenedAsLogs(t *testing.T) {
	clientCA, otherCA := testpki.NewCA(t, "client-ca"), testpki.NewCA(t, "other-ca")
	good, foreign := clientCA.Issue(t, "alice", false), otherCA.Issue(t, "mallory", false)
	fb := &fakeBackend{health: api.Health{OK: true}, logs: map[string]string{"default/web/app": "a line\n"}}
	fb.setPods(runningPod("default", "web", nil))
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "actorlet_test_total", Help: "a counter"}))
	url, _ := serve2(t, statsFake{fb}, fb, serveOpts{token: true, clientCA: clientCA.PEM, metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})})
	addr := strings.TrimPrefix(url, "https://")
	goodToken := cred{name: "the token", token: testToken}
	writes := []string{"POST", "PUT", "PATCH", "DELETE"}
	for _, ep := range []struct {
		path     string
		badQuery string   // a query whose value is refused (400)
		badName  string   // the path with a name that is not a Kubernetes name (400)
		refused  []string // methods answered 405; nil: every write method
	}{
		{path: "/logs/default/web/app", badQuery: "?tailLines=-1", badName: "/logs/default/web/APP"},
		{path: "/healthz"},
		{path: "/pods"},
		{path: "/pods/default/web", badName: "/pods/default/We_b"},
		{path: "/events"},
		{path: "/stats/summary", badQuery: "?only_cpu_and_memory=maybe"},
		{path: "/metrics/resource"},
		{path: "/spec"},
		{path: "/metrics"},
		{path: "/api"},
		{path: "/api/v1"},
		{path: "/apis"},
		{path: "/version"},
		{path: "/openapi/v3"},
		{path: "/openapi/v3/api/v1"},
		{path: "/api/v1/pods", badQuery: "?watch=maybe"},
		{path: "/api/v1/namespaces/default/pods", badQuery: "?labelSelector=a+in+(", badName: "/api/v1/namespaces/De_fault/pods", refused: []string{"PUT", "PATCH", "DELETE"}},
		{path: "/api/v1/namespaces/default/pods/web", badName: "/api/v1/namespaces/default/pods/We_b", refused: []string{"POST"}},
		{path: "/api/v1/namespaces/default/pods/web/log", badQuery: "?tailLines=-1", badName: "/api/v1/namespaces/default/pods/web/log?container=..%2Fetc"},
		{path: "/api/v1/nodes", badQuery: "?fieldSelector=nope%3D1"},
		{path: "/api/v1/nodes/node-1", badName: "/api/v1/nodes/" + strings.Repeat("n", 254)},
		{path: "/api/v1/events", badQuery: "?fieldSelector=nope%3D1"},
		{path: "/api/v1/namespaces/default/events", badQuery: "?resourceVersion=abc", badName: "/api/v1/namespaces/De_fault/events"},
	} {
		t.Run(ep.path, func(t *testing.T) {
			for _, c := range []struct {
				cred
				want int
			}{
				{cred{name: "no credentials"}, 401},
				{cred{name: "a wrong token", token: "wrong-" + testToken}, 401},
				{cred{name: "a certificate of another CA", cert: &foreign}, 403},
				{goodToken, 200},
				{cred{name: "a certificate of the client CA", cert: &good}, 200},
			} {
				req, _ := http.NewRequest("GET", url+ep.path, nil)
				req.Header = c.header()
				tr := &http.Transport{TLSClientConfig: c.tlsConfig()}
				resp, err := (&http.Client{Transport: tr}).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				tr.CloseIdleConnections()
				h := resp.Header
				if resp.StatusCode != c.want || h.Get("Content-Type") == "" || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Access-Control-Allow-Origin") != "" {
					t.Errorf("GET as %s: %d, headers %v, body %.200s; want %d, typed, nosniff, no CORS", c.name, resp.StatusCode, h, body, c.want)
				}
				if c.want == 401 && h.Get("WWW-Authenticate") == "" {
					t.Errorf("GET as %s: 401 without WWW-Authenticate", c.name)
				}
			}
			for _, target := range []string{ep.path + "/..", ep.path + "/%2e%2e/etc/passwd", ep.path + "/./x", "/" + ep.path, ep.path + "%2F..%2F..", ep.path + "/"} {
				if code := goodToken.rawGet(t, addr, target); code != 400 {
					t.Errorf("GET %s: %d, want 400", target, code)
				}
			}
			for _, target := range []string{ep.badQuery, ep.badName} {
				if target == "" {
					continue
				}
				if target[0] == '?' {
					target = ep.path + target
				}
				if code, body := goodToken.do(t, "GET", url+target, "", ""); code != 400 {
					t.Errorf("GET %s: %d %.200s, want 400", target, code, body)
				}
			}
			methods := ep.refused
			if methods == nil {
				methods = writes
			}
			for _, m := range methods {
				if code, body := goodToken.do(t, m, url+ep.path, "application/json", "{}"); code != 405 {
					t.Errorf("%s as %s: %d %.200s, want 405", m, goodToken.name, code, body)
				}
			}
		})
	}
}

// A pods/log follow and a watch end when the agent stops (Options.Context),
// as /logs's follows end with the server's Shutdown, and the log's stream
// is closed then.
func TestStreamsEndWithTheAgent(t *testing.T) {
	pr, pw := io.Pipe()
	fb := &fakeBackend{followLog: pr}
	fb.setPods(runningPod("default", "web", nil))
	agent, stop := context.WithCancel(context.Background())
	defer stop()
	srv, _ := serve(t, fb, func(o *Options) { o.Context = agent })
	// The headers come at once, before any line: a quiet follow is answered.
	c := &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: 10 * time.Second}}
	open := func(path string) (*bufio.Reader, io.Closer) {
		resp, err := c.Get(srv.URL + path)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %v %v", path, err, resp)
		}
		return bufio.NewReader(resp.Body), resp.Body
	}
	logR, logBody := open("/api/v1/namespaces/default/pods/web/log?follow=true")
	defer logBody.Close()
	watchR, watchBody := open("/api/v1/pods?watch=true")
	defer watchBody.Close()
	go func() { _, _ = io.WriteString(pw, "hello\n") }()
	if l, err := logR.ReadString('\n'); l != "hello\n" {
		t.Fatalf("follow read %q, %v", l, err)
	}
	if l, err := watchR.ReadString('\n'); !strings.HasPrefix(l, `{"type":"ADDED"`) {
		t.Fatalf("watch read %q, %v", l, err)
	}
	stop()
	for name, r := range map[string]*bufio.Reader{"log follow": logR, "watch": watchR} {
		ended := make(chan error, 1)
		go func() { _, err := io.ReadAll(r); ended <- err }()
		select {
		case err := <-ended:
			if err != nil {
				t.Errorf("%s ended with %v, want its end", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s still open 10 s after the agent stopped", name)
		}
	}
	if _, err := io.WriteString(pw, "more\n"); err != io.ErrClosedPipe {
		t.Errorf("writing to the followed log after the agent stopped: %v, want the stream closed", err)
	}
}
