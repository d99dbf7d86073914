package api

import (
	"net/http"

	"go.uber.org/zap"
)

// Defaults for Options, those of the kubelet's read-only port.
const (
	// DefaultAddress is the address the API listens on when Options.Address
	// is empty: loopback only.
	DefaultAddress = "127.0.0.1"
	// DefaultPort is the kubelet's read-only port.
	DefaultPort = 10255
)

// Options configures New and Server. Start from DefaultOptions: the zero
// Port means "any free port", not DefaultPort.
type Options struct {
	// Address is the IP address or host name to listen on; empty means
	// DefaultAddress (127.0.0.1). Use "0.0.0.0" or "::" for every interface.
	Address string
	// Port is the TCP port; DefaultOptions sets DefaultPort (10255). 0 picks
	// any free port: Server.Start returns the address actually bound.
	Port int
	// TokenFile, when set, names a file holding a bearer token (surrounding
	// white space is trimmed; it must not be empty). Every request must then
	// carry "Authorization: Bearer <token>" or is answered 401. The file is
	// read once, by New or Server.Start.
	TokenFile string
	// ClientCAFile, when set, names a PEM bundle of CA certificates: a
	// client certificate they sign authenticates a request as a token
	// does (the kubelet's --client-ca-file). It needs TLS.
	ClientCAFile string
	// TLSCertFile and TLSKeyFile are a PEM certificate (chain) and its
	// private key. When both are set the server speaks only HTTPS (TLS 1.2
	// or newer); setting only one is an error.
	TLSCertFile string
	TLSKeyFile  string
	// EnablePprof mounts net/http/pprof under /debug/pprof/. Off by default:
	// profiles reveal a lot and cost CPU.
	EnablePprof bool
	// Metrics, when non-nil, is served at /metrics (e.g.
	// promhttp.HandlerFor(registry, promhttp.HandlerOpts{})).
	Metrics http.Handler
	// Kube, when non-nil, serves the Kubernetes API (internal/kubeapi) on
	// /api, /apis, /version and /openapi/, every method.
	Kube http.Handler
	// Logger receives the server's own messages; nil discards them.
	Logger *zap.Logger
}

// DefaultOptions returns Options for 127.0.0.1:10255 without a token, TLS,
// pprof or metrics.
func DefaultOptions() Options {
	return Options{Address: DefaultAddress, Port: DefaultPort}
}
