// Package etcdtest runs a real etcd server inside a test process
// (go.etcd.io/etcd/server/v3/embed) and a TCP proxy in front of it that a
// test can take down, to play an unreachable etcd.
//
// Only tests import this package. The actorlet binary links the etcd
// client alone, never the server: cmd/actorlet's
// TestBinaryLinksNoEtcdServer checks it with `go list -deps`.
package etcdtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Timing of the embedded server. A 50 ms tick and a 500 ms election
// timeout make a single member leader fast; etcd's minimum lease TTL is
// then ceil(1.5 × election timeout) = 1 s (etcdserver: (3 × electionTicks
// / 2) × tick), so tests can use leases of 1 s and more.
const (
	TickMs     = 50
	ElectionMs = 500
	// startTimeout bounds the server's start (it waits to be leader).
	startTimeout = 60 * time.Second
	// RequestTimeout bounds one request of the helpers.
	RequestTimeout = 10 * time.Second
)

// Server is one single-member etcd cluster on 127.0.0.1, with its data in
// a temporary directory of the test. It is stopped at test end.
type Server struct {
	t        testing.TB
	etcd     *embed.Etcd
	endpoint string
}

// Start starts an etcd server on free loopback ports (client and peer),
// waits until it is ready, and stops it when the test ends. It fails the
// test when etcd does not start within 60 s.
func Start(t testing.TB) *Server {
	t.Helper()
	var e *embed.Etcd
	var cfg *embed.Config
	// The ports were free a moment before etcd binds them; another test
	// process may take one meanwhile: then try again on other ports.
	for attempt := 1; ; attempt++ {
		cfg = embed.NewConfig()
		cfg.Name = "etcdtest"
		cfg.Dir = t.TempDir()
		cfg.TickMs, cfg.ElectionMs = TickMs, ElectionMs
		cfg.UnsafeNoFsync = true // a test's data need not survive a crash
		cfg.LogLevel = "error"
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		clientURL, peerURL := freeURL(t), freeURL(t)
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{clientURL}, []url.URL{clientURL}
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peerURL}, []url.URL{peerURL}
		cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
		var err error
		e, err = embed.StartEtcd(cfg)
		if err == nil {
			break
		}
		if attempt < 5 && errors.Is(err, syscall.EADDRINUSE) {
			t.Logf("etcdtest: start etcd (attempt %d): %v; trying other ports", attempt, err)
			continue
		}
		t.Fatalf("etcdtest: start etcd: %v", err)
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		t.Fatalf("etcdtest: etcd failed while starting: %v", err)
	case <-time.After(startTimeout):
		t.Fatalf("etcdtest: etcd not ready within %v", startTimeout)
	}
	s := &Server{t: t, etcd: e, endpoint: e.Clients[0].Addr().String()}
	t.Logf("etcdtest: etcd %s serving on %s", cfg.Name, s.endpoint)
	return s
}

// freeURL returns http://127.0.0.1:<port> with a port that was free a
// moment ago (etcd opens its own listeners).
func freeURL(t testing.TB) url.URL {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("etcdtest: find a free port: %v", err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return url.URL{Scheme: "http", Host: addr}
}

// Endpoint is the client address, "127.0.0.1:<port>".
func (s *Server) Endpoint() string { return s.endpoint }

// URL is the client URL, "http://127.0.0.1:<port>".
func (s *Server) URL() string { return "http://" + s.endpoint }

// Client returns a client of the server, closed at test end.
func (s *Server) Client(t testing.TB) *clientv3.Client {
	t.Helper()
	return NewClient(t, s.endpoint)
}

// NewClient returns a client of endpoint ("host:port"), closed at test
// end. It does not wait for a connection.
func NewClient(t testing.TB, endpoint string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{endpoint},
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		t.Fatalf("etcdtest: client of %s: %v", endpoint, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Compact compacts the key space at its current revision, so a watch
// from an older revision fails with ErrCompacted. It returns that
// revision.
func (s *Server) Compact(c *clientv3.Client) int64 {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), RequestTimeout)
	defer cancel()
	resp, err := c.Get(ctx, "compact-probe")
	if err != nil {
		s.t.Fatalf("etcdtest: read the revision: %v", err)
	}
	rev := resp.Header.Revision
	if _, err := c.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		s.t.Fatalf("etcdtest: compact at %d: %v", rev, err)
	}
	return rev
}

// String names the server in messages.
func (s *Server) String() string { return fmt.Sprintf("etcd %s", s.endpoint) }
