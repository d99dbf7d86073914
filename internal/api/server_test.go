package api

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/actorlet/actorlet/test/support/testpki"
)

// startServer starts s and shuts it down at the end of the test.
func startServer(t *testing.T, s *Server) string {
	t.Helper()
	addr, err := s.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return addr
}

func TestServerPortZero(t *testing.T) {
	s := NewServer(&fakeBackend{health: Health{OK: true}}, Options{Port: 0})
	addr := startServer(t, s)
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "127.0.0.1" || port == "0" {
		t.Fatalf("address %q (%v): want 127.0.0.1 and a real port", addr, err)
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("healthz = %d", resp.StatusCode)
	}
	if _, err := s.Start(context.Background()); err == nil {
		t.Error("a second Start succeeded")
	}
}

func TestDefaultOptions(t *testing.T) {
	if o := DefaultOptions(); o.Address != "127.0.0.1" || o.Port != 10255 || o.EnablePprof || o.TokenFile != "" {
		t.Errorf("DefaultOptions() = %+v", o)
	}
}

func TestServerStopsWithContext(t *testing.T) {
	s := NewServer(&fakeBackend{health: Health{OK: true}}, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	addr, err := s.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	waitClosed(t, s.done, "server stopped after its context ended")
	if conn, err := net.DialTimeout("tcp", addr, waitTimeout); err == nil {
		conn.Close()
		t.Error("still accepting after the context ended")
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown after stop: %v", err)
	}
}

func TestServerStartErrors(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := testpki.WriteKeyPair(t, dir, "tls", testpki.NewCA(t, "server-ca").Issue(t, "actorlet", true))
	for name, opts := range map[string]Options{
		"port out of range":  {Port: 70000},
		"negative port":      {Port: -1},
		"missing token file": {TokenFile: filepath.Join(dir, "nope")},
		"cert without key":   {TLSCertFile: certFile},
		"key without cert":   {TLSKeyFile: keyFile},
		"key is not a key":   {TLSCertFile: certFile, TLSKeyFile: certFile},
		"bad address":        {Address: "256.0.0.1"},
	} {
		t.Run(name, func(t *testing.T) {
			s := NewServer(&fakeBackend{}, opts)
			if addr, err := s.Start(context.Background()); err == nil {
				_ = s.Shutdown(context.Background())
				t.Fatalf("Start succeeded on %s", addr)
			}
		})
	}
	var s Server
	if err := s.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown of a server never started: %v", err)
	}
}

func TestServerTLSWithToken(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "server-ca")
	certFile, keyFile := testpki.WriteKeyPair(t, dir, "tls", ca.Issue(t, "actorlet", true))
	tokenFile := writeFile(t, "token", "tls-token")
	s := NewServer(&fakeBackend{health: Health{OK: true}}, Options{
		TLSCertFile: certFile, TLSKeyFile: keyFile, TokenFile: tokenFile,
	})
	addr := startServer(t, s)

	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}}
	defer client.CloseIdleConnections()

	do := func(url, token string) (int, error) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	if code, err := do("https://"+addr+"/healthz", "tls-token"); err != nil || code != 200 {
		t.Errorf("HTTPS with token: %d, %v", code, err)
	}
	if code, err := do("https://"+addr+"/healthz", ""); err != nil || code != 401 {
		t.Errorf("HTTPS without token: %d, %v", code, err)
	}
	if code, err := do("http://"+addr+"/healthz", "tls-token"); err == nil && code != 400 {
		t.Errorf("plain HTTP to the TLS port: %d, want 400 or an error", code)
	}
	// A client that does not trust the certificate fails the handshake.
	_, err := http.Get("https://" + addr + "/healthz")
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted certificate: %v", err)
	}
}
