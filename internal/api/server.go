package api

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Server timeouts. There is no write timeout: log streams last as long as
// the client follows them (each write is bounded instead, see logs).
const (
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 64 << 10
)

// Server serves the API on a TCP address, over HTTPS when TLS is
// configured. Create it with NewServer, then Start and Shutdown it once.
type Server struct {
	b    Backend
	opts Options
	log  *zap.Logger

	mu      sync.Mutex
	started bool
	srv     *http.Server
	done    chan struct{} // closed when Serve has returned
}

// NewServer returns a Server for b with opts (start from DefaultOptions).
func NewServer(b Backend, opts Options) *Server {
	return &Server{b: b, opts: opts, log: loggerOf(opts)}
}

// Start checks the options (token file, TLS key pair), listens and serves in
// the background. It returns the address actually bound ("host:port"),
// which tells the port when Options.Port is 0.
//
// ctx is the parent of every request's context: when it ends, the server
// closes at once, ending in-flight requests and log streams. Shutdown is the
// graceful way to stop.
func (s *Server) Start(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return "", errors.New("api: server already started")
	}
	if s.opts.Port < 0 || s.opts.Port > 65535 {
		return "", fmt.Errorf("api: port %d out of range 0-65535", s.opts.Port)
	}
	tlsConfig, err := s.tlsConfig()
	if err != nil {
		return "", err
	}
	streams, endStreams := context.WithCancel(context.Background())
	h, err := newHandler(s.b, s.opts, streams)
	if err != nil {
		endStreams()
		return "", fmt.Errorf("api: %w", err)
	}
	host := s.opts.Address
	if host == "" {
		host = DefaultAddress
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(s.opts.Port)))
	if err != nil {
		endStreams()
		return "", fmt.Errorf("api: %w", err)
	}
	srv := &http.Server{
		Handler:           h,
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          zap.NewStdLog(s.log.Named("http")),
	}
	srv.RegisterOnShutdown(endStreams) // log follows never go idle on their own
	s.started, s.srv, s.done = true, srv, make(chan struct{})
	stopOnCancel := context.AfterFunc(ctx, func() { _ = srv.Close() })
	go func() {
		defer close(s.done)
		defer endStreams()
		defer stopOnCancel()
		var err error
		if tlsConfig != nil {
			err = srv.ServeTLS(ln, "", "")
		} else {
			err = srv.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("API server stopped", zap.Error(err))
		}
	}()
	addr := ln.Addr().String()
	s.log.Info("API listening", zap.String("address", addr), zap.Bool("tls", tlsConfig != nil),
		zap.Bool("token", s.opts.TokenFile != ""), zap.Bool("pprof", s.opts.EnablePprof),
		zap.Bool("metrics", s.opts.Metrics != nil))
	return addr, nil
}

// tlsConfig loads the key pair when both files are set.
func (s *Server) tlsConfig() (*tls.Config, error) {
	cert, key := s.opts.TLSCertFile, s.opts.TLSKeyFile
	switch {
	case cert == "" && key == "" && s.opts.ClientCAFile != "":
		return nil, errors.New("api: --client-ca-file needs TLS (--tls-cert-file and --tls-private-key-file)")
	case cert == "" && key == "":
		return nil, nil
	case cert == "" || key == "":
		return nil, errors.New("api: TLS needs both a certificate file and a private key file")
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("api: TLS key pair: %w", err)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}}
	if s.opts.ClientCAFile != "" {
		// Asked for, checked by the handler (authn), which answers a
		// certificate of another CA with a 403 saying so rather than a
		// failed handshake.
		cfg.ClientAuth = tls.RequestClientCert
	}
	return cfg, nil
}

// Shutdown stops the server: it stops accepting, ends log streams, waits for
// other in-flight requests until ctx ends, then closes what is left. It
// returns ctx's error if it had to force, and nil for a server never
// started.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	srv, done := s.srv, s.done
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	err := srv.Shutdown(ctx)
	if err != nil {
		_ = srv.Close()
	}
	<-done
	return err
}
