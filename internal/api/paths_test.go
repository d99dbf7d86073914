package api

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/actorlet/actorlet/test/support/rawhttp"
)

// traversalCorpus is hostile request targets for /logs (and its
// neighbours). None may reach a log: each must be answered 400 or 404.
var traversalCorpus = []string{
	// Plain and encoded "..".
	"/logs/../../etc/passwd",
	"/logs/default/web/../../../../etc/shadow",
	"/logs/%2e%2e/%2e%2e/etc/passwd",
	"/logs/default/%2e%2e/app",
	"/logs/default/web/%2E%2E",
	"/logs/default/web/.%2e",
	"/logs/default/web/%252e%252e", // double encoding
	"/logs/default/web/..%2f..%2fetc%2fpasswd",
	"/logs/default/web/..%5c..%5cwindows%5cwin.ini",
	"/logs/default/web\\..\\..\\etc\\passwd",
	"/logs/default/./web/app",
	"/logs/default/web/.",
	// Absolute paths and empty segments.
	"/logs/default/web//etc/passwd",
	"/logs/default/web/%2fetc%2fpasswd",
	"/logs/%2Fetc%2Fpasswd/web/app",
	"//logs/default/web/app",
	"/logs//web/app",
	"/logs/default//app",
	"/logs/default/web/",
	"/logs/default/web/app/",
	"http://evil.example/logs/../../etc/passwd",
	"/logs/default/web/app/../../../../etc/passwd",
	// Extra or missing segments.
	"/logs/default/web/app/extra",
	"/logs/default/web",
	"/logs/etc/passwd",
	// Names that are not Kubernetes names.
	"/logs/default/web/app%00",
	"/logs/default/web/app%00.log",
	"/logs/default/web/app%20",
	"/logs/default/web/APP",
	"/logs/Default/web/app",
	"/logs/default/web/app.log",
	"/logs/default/-web/app",
	"/logs/default/web/a_b",
	"/logs/default/web/app;rm",
	"/logs/default/web/~root",
	"/logs/default/" + strings.Repeat("a", 254) + "/app",
	"/logs/default/web/" + strings.Repeat("c", 64),
	"/logs/default/web/\u00e4pp",
	// Valid names that are not a managed container: the Backend says 404.
	"/logs/default/web/nosuch",
	"/logs/kube-system/etc/passwd",
	// Hostile parameters on a real container.
	"/logs/default/web/app?tailLines=-1",
	"/logs/default/web/app?tailLines=../../etc/passwd",
	"/logs/default/web/app?tailLines=99999999999999999999",
	"/logs/default/web/app?sinceSeconds=0",
	"/logs/default/web/app?sinceSeconds=-60",
	"/logs/default/web/app?follow=/etc/passwd",
	"/logs/default/web/app?previous=..%2f..",
	"/logs/default/web/app?container=../../etc/passwd",
	"/logs/default/web/app?path=/etc/passwd",
	"/logs/default/web/app?tailLines=1&tailLines=2",
	"/logs/default/web/app?timestamps=%00",
	"/logs/default/web/app?%zz",
}

// rawGet sends target verbatim in the request line to addr and returns
// the status code.
func rawGet(t *testing.T, addr, target string) int {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, waitTimeout)
	if err != nil {
		t.Fatal(err)
	}
	return rawhttp.Get(t, conn, target, nil)
}

func TestLogsTraversalCorpus(t *testing.T) {
	if len(traversalCorpus) < 20 {
		t.Fatalf("corpus has %d entries, want at least 20", len(traversalCorpus))
	}
	b := &fakeBackend{logText: map[string]string{"default/web/app": "secret-free log\n"}}
	srv := httptest.NewServer(New(b, Options{}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")

	for _, target := range traversalCorpus {
		if code := rawGet(t, addr, target); code != http.StatusBadRequest && code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 400 or 404", target, code)
		}
	}
	// The same requests straight into the handler, where they parse.
	h := New(b, Options{})
	for _, target := range traversalCorpus {
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader("GET " + target + " HTTP/1.1\r\nHost: localhost\r\n\r\n")))
		if err != nil {
			continue // the server rejected these above already
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusBadRequest && rec.Code != http.StatusNotFound {
			t.Errorf("handler: GET %s = %d, want 400 or 404", target, rec.Code)
		}
	}

	calls := b.logCalls()
	if len(calls) == 0 {
		t.Fatal("the Backend was never asked: the 404 cases did not reach it")
	}
	for _, c := range calls {
		if err := validateNames(c.namespace, c.pod, c.container); err != nil {
			t.Errorf("Backend.Logs called with invalid names: %v", err)
		}
		if c.namespace+"/"+c.pod+"/"+c.container == "default/web/app" {
			t.Errorf("Backend.Logs reached the real container with %+v", c.opts)
		}
	}
}

func TestCheckPath(t *testing.T) {
	for target, ok := range map[string]bool{
		"/":                    true,
		"/pods":                true,
		"/debug/pprof/":        true,
		"/debug/pprof/heap":    true,
		"/pods/":               false,
		"/pods//x":             false,
		"/pods/%61":            false,
		"/pods/./x":            false,
		"/logs/a/b/c?x=%2e%2e": true, // the query is checked by its handler
	} {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		if got := checkPath(req) == ""; got != ok {
			t.Errorf("checkPath(%s) accepted = %v, want %v", target, got, ok)
		}
	}
}
