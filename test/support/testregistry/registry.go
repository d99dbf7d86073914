// Package testregistry serves an in-memory container registry
// (go-containerregistry's pkg/registry) on 127.0.0.1 for tests, records
// the requests it gets, and builds a runnable image of actorlet's test
// workload to push to it.
//
// The Docker daemon treats registries on 127.0.0.0/8 as insecure (its
// default --insecure-registry), so it pulls "127.0.0.1:<port>/repo:tag"
// from a Registry over plain HTTP, anonymously. The daemon must share the
// test's network namespace (a local daemon does).
package testregistry

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// ownHeader marks the requests of Push, which Requests leaves out.
const ownHeader = "X-Actorlet-Testregistry"

// Request is one request the registry served.
type Request struct {
	Method string // GET, HEAD, PUT …
	Path   string // e.g. "/v2/actorlet/tw/manifests/1"
}

// Registry is an in-memory registry served on 127.0.0.1 until the test
// that started it ends. It is safe for concurrent use.
type Registry struct {
	srv *httptest.Server

	mu   sync.Mutex
	reqs []Request
}

// Start serves a new, empty registry on 127.0.0.1 on a free port, closed
// when t ends.
func Start(t testing.TB) *Registry {
	t.Helper()
	r := &Registry{}
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get(ownHeader) == "" {
			r.mu.Lock()
			r.reqs = append(r.reqs, Request{Method: req.Method, Path: req.URL.Path})
			r.mu.Unlock()
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// Host returns the registry's address, "127.0.0.1:<port>".
func (r *Registry) Host() string { return strings.TrimPrefix(r.srv.URL, "http://") }

// Ref returns the reference of repo:tag in this registry, e.g.
// "127.0.0.1:40123/actorlet/tw:1".
func (r *Registry) Ref(repo, tag string) string { return r.Host() + "/" + repo + ":" + tag }

// Push uploads img as ref (a reference into this registry, see Ref). Its
// requests are not recorded.
func (r *Registry) Push(ctx context.Context, ref string, img v1.Image) error {
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	if parsed.Context().RegistryStr() != r.Host() {
		return fmt.Errorf("push %s: not a reference into registry %s", ref, r.Host())
	}
	tr := markTransport{base: r.srv.Client().Transport}
	if err := remote.Write(parsed, img, remote.WithContext(ctx), remote.WithTransport(tr)); err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	return nil
}

// Requests returns the requests served so far (Push's left out), oldest
// first.
func (r *Registry) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.reqs...)
}

// ManifestRequests returns how many GET and HEAD requests for a manifest of
// repo (by tag or digest) were served: a pull makes at least one, even
// when every layer is present already.
func (r *Registry) ManifestRequests(repo string) int {
	prefix := "/v2/" + repo + "/manifests/"
	n := 0
	for _, req := range r.Requests() {
		if (req.Method == http.MethodGet || req.Method == http.MethodHead) && strings.HasPrefix(req.Path, prefix) {
			n++
		}
	}
	return n
}

// ResetRequests forgets the requests served so far.
func (r *Registry) ResetRequests() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = nil
}

// markTransport adds ownHeader to every request.
type markTransport struct{ base http.RoundTripper }

func (t markTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set(ownHeader, "push")
	return t.base.RoundTrip(req)
}
