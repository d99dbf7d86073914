package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
)

// Identity is who made a request, as the server authenticated it.
type Identity struct {
	// Kind is "token" (the --api-token-file token), "certificate" (a
	// client certificate signed by --client-ca-file) or "" (anonymous).
	Kind string
	// Name is the certificate's common name; "" for a token.
	Name string
}

type identityKey struct{}

// IdentityOf returns the identity the server authenticated r's sender as.
func IdentityOf(r *http.Request) Identity {
	id, _ := r.Context().Value(identityKey{}).(Identity)
	return id
}

// AuthConfigured says whether a token or a client CA is configured; it
// is false on a handler built without them (writes are then refused).
func AuthConfigured(r *http.Request) bool {
	v, _ := r.Context().Value(authConfiguredKey{}).(bool)
	return v
}

type authConfiguredKey struct{}

// authn is the server's authentication: a bearer token (when a token file
// is configured) or a client certificate signed by the client CA (when
// one is configured, over TLS). A wrong token is 401, a certificate of
// another CA 403. With a token configured every request needs a
// credential (401 otherwise), as before; without one, reads stay
// anonymous and writes are refused by the Kubernetes API (writes need an
// identity).
type authn struct {
	token   *[sha256.Size]byte // nil: no token configured
	clients *x509.CertPool     // nil: no client CA configured
	next    http.Handler
}

// loadClientCA reads a PEM bundle of CA certificates.
func loadClientCA(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("client CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("client CA file %s: no PEM certificate in it", path)
	}
	return pool, nil
}

const credentialHelp = "give the token of --api-token-file (kubectl --token, or the kubeconfig `make run` writes) or a client certificate signed by --client-ca-file"

func (a *authn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// No answer of this API is ever content-sniffed by a browser (the
	// Prometheus handlers, which set no such header, included).
	w.Header().Set("X-Content-Type-Options", "nosniff")
	id := Identity{}
	if header := r.Header.Get("Authorization"); header != "" {
		got, ok := bearerToken(header)
		if a.token == nil {
			writeError(w, http.StatusUnauthorized, "Unauthorized: this agent has no --api-token-file, so it takes no bearer token; drop the token, or "+credentialHelp)
			return
		}
		sum := sha256.Sum256([]byte(got))
		if subtle.ConstantTimeCompare(sum[:], a.token[:]) != 1 || !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="actorlet"`)
			writeError(w, http.StatusUnauthorized, "Unauthorized: the bearer token is not the one in --api-token-file; "+credentialHelp)
			return
		}
		id = Identity{Kind: "token"}
	}
	if id.Kind == "" && r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		if a.clients == nil {
			writeError(w, http.StatusForbidden, "Forbidden: this agent has no --client-ca-file, so it takes no client certificate; "+credentialHelp)
			return
		}
		leaf := r.TLS.PeerCertificates[0]
		inter := x509.NewCertPool()
		for _, c := range r.TLS.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: a.clients, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			writeError(w, http.StatusForbidden, fmt.Sprintf("Forbidden: client certificate %q is not signed by --client-ca-file (%v); %s", leaf.Subject.CommonName, err, credentialHelp))
			return
		}
		id = Identity{Kind: "certificate", Name: leaf.Subject.CommonName}
	}
	if id.Kind == "" && a.token != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="actorlet"`)
		writeError(w, http.StatusUnauthorized, "Unauthorized: a valid bearer token is required; "+credentialHelp)
		return
	}
	ctx := context.WithValue(r.Context(), identityKey{}, id)
	ctx = context.WithValue(ctx, authConfiguredKey{}, a.token != nil || a.clients != nil)
	a.next.ServeHTTP(w, r.WithContext(ctx))
}
