package api

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCA is a CA that signs certificates for tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a key pair signed by ca for a client or a server.
func (ca *testCA) issue(t *testing.T, cn string, server bool) tls.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func writeKeyPair(t *testing.T, dir, name string, c tls.Certificate) (string, string) {
	t.Helper()
	certFile, keyFile := filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	keyDER, _ := x509.MarshalECPrivateKey(c.PrivateKey.(*ecdsa.PrivateKey))
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	return certFile, keyFile
}

func TestClientCertificates(t *testing.T) {
	dir := t.TempDir()
	serverCA, clientCA, otherCA := newTestCA(t, "server-ca"), newTestCA(t, "client-ca"), newTestCA(t, "other-ca")
	certFile, keyFile := writeKeyPair(t, dir, "server", serverCA.issue(t, "actorlet", true))
	caFile := filepath.Join(dir, "clients.pem")
	if err := os.WriteFile(caFile, clientCA.pem, 0o600); err != nil {
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
	roots := x509.NewCertPool()
	roots.AddCert(serverCA.cert)
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
	good := clientCA.issue(t, "alice", false)
	if code, body := get(&good); code != 204 || seen != (Identity{Kind: "certificate", Name: "alice"}) {
		t.Fatalf("client CA's certificate: %d %s, identity %+v", code, body, seen)
	}
	seen = Identity{}
	if code, _ := get(nil); code != 204 || seen.Kind != "" {
		t.Fatalf("no certificate: %d, identity %+v; want anonymous", code, seen)
	}
	foreign := otherCA.issue(t, "mallory", false)
	if code, body := get(&foreign); code != 403 || !strings.Contains(body, `client certificate \"mallory\" is not signed by --client-ca-file`) {
		t.Fatalf("another CA's certificate: %d %s, want 403 saying so", code, body)
	}

	bad := NewServer(b, Options{Address: "127.0.0.1", Port: 0, ClientCAFile: caFile})
	if _, err := bad.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "--client-ca-file needs TLS") {
		t.Fatalf("client CA without TLS: %v", err)
	}
}
