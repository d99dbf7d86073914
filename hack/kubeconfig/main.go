// Command kubeconfig prepares what `make run` needs for kubectl: a bearer
// token for the API (--api-token-file), a self-signed certificate for
// 127.0.0.1 and localhost (--tls-cert-file, --tls-private-key-file) and a
// kubeconfig using both, every file readable by its owner only. kubectl
// sends a token only over HTTPS, hence the certificate. Existing token and
// key pair are kept, so a kubeconfig already in use goes on working.
//
//	go run ./hack/kubeconfig -dir build -server https://127.0.0.1:10255 -context actorlet-demo
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

func main() {
	dir := flag.String("dir", "build", "where to write api-token, tls.crt, tls.key and kubeconfig")
	server := flag.String("server", "https://127.0.0.1:10255", "the API's URL")
	name := flag.String("context", "actorlet", "the kubeconfig context's name")
	flag.Parse()
	if err := run(*dir, *server, *name); err != nil {
		fmt.Fprintln(os.Stderr, "kubeconfig:", err)
		os.Exit(1)
	}
}

func run(dir, server, name string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tokenFile, certFile, keyFile := filepath.Join(dir, "api-token"), filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	token, err := os.ReadFile(tokenFile)
	if err != nil || len(token) == 0 {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		token = []byte(hex.EncodeToString(b))
		if err := os.WriteFile(tokenFile, token, 0o600); err != nil {
			return err
		}
	}
	certPEM, err := os.ReadFile(certFile)
	if _, kerr := os.Stat(keyFile); err != nil || kerr != nil {
		if certPEM, err = selfSigned(certFile, keyFile); err != nil {
			return err
		}
	}
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: actorlet
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: actorlet
  user:
    token: %s
contexts:
- name: %s
  context:
    cluster: actorlet
    user: actorlet
    namespace: default
current-context: %s
`, server, base64.StdEncoding.EncodeToString(certPEM), token, name, name)
	out := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(out, []byte(cfg), 0o600); err != nil {
		return err
	}
	fmt.Printf("wrote %s (mode 0600): KUBECONFIG=%s kubectl get pods\n", out, out)
	return nil
}

// selfSigned writes a key pair for 127.0.0.1, ::1 and localhost, valid
// for a year, and returns the certificate as PEM.
func selfSigned(certFile, keyFile string) ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "actorlet"},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, err
	}
	return certPEM, os.WriteFile(certFile, certPEM, 0o600)
}
