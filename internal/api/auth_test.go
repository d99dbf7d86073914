package api

import (
	"context"
	"crypto/tls"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/actorlet/actorlet/test/support/testpki"
)

func TestClientCertificates(t *testing.T) {
	dir := t.TempDir()
	serverCA, clientCA, otherCA := testpki.NewCA(t, "server-ca"), testpki.NewCA(t, "client-ca"), testpki.NewCA(t, "other-ca")
	certFile, keyFile := testpki.WriteKeyPair(t, dir, "server", serverCA.Issue(t, "actorlet", true))
	caFile := filepath.Join(dir, "clients.pem")
	if err := os.WriteFile(caFile, clientCA.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	// Who answers: the identity the server saw.
	var seen Identity
	b := &fakeBackend{health: Health{OK: true}}
	kube := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = IdentityOf(r)
		w.WriteHeader(http.StatusNoContent)
	})
	srv := NewServer(b, Options{Address: "127.0.0.1", Port: 0, TLSCertFile: certFile, TLSKeyFile: keyFile, ClientCAFile: caFile, Kube: kube})
	addr, err := srv.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Shutdown(context.Background()) }()
	roots := serverCA.Pool()
	get := func(cert *tls.Certificate) (int, string) {
		t.Helper()
		cfg := &tls.Config{RootCAs: roots}
		if cert != nil {
			cfg.Certificates = []tls.Certificate{*cert}
		}
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
		defer c.CloseIdleConnections()
		resp, err := c.Get("https://" + addr + "/api/v1/pods")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var sb strings.Builder
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf)
		sb.Write(buf[:n])
		return resp.StatusCode, sb.String()
	}
	good := clientCA.Issue(t, "alice", false)
	if code, body := get(&good); code != 204 || seen != (Identity{Kind: "certificate", Name: "alice"}) {
		t.Fatalf("client CA's certificate: %d %s, identity %+v", code, body, seen)
	}
	seen = Identity{}
	if code, _ := get(nil); code != 204 || seen.Kind != "" {
		t.Fatalf("no certificate: %d, identity %+v; want anonymous", code, seen)
	}
	foreign := otherCA.Issue(t, "mallory", false)
	if code, body := get(&foreign); code != 403 || !strings.Contains(body, `client certificate \"mallory\" is not signed by --client-ca-file`) {
		t.Fatalf("another CA's certificate: %d %s, want 403 saying so", code, body)
	}

	bad := NewServer(b, Options{Address: "127.0.0.1", Port: 0, ClientCAFile: caFile})
	if _, err := bad.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "--client-ca-file needs TLS") {
		t.Fatalf("client CA without TLS: %v", err)
	}
}
