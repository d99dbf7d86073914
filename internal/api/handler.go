package api

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/pprof"
	"os"
	"strings"
	"time"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// handler serves the API's endpoints over a Backend.
type handler struct {
	b   Backend
	log *zap.Logger
	now func() time.Time
	// streams ends every log stream when done (server shutdown).
	streams context.Context
}

// New returns the API's http.Handler over b, with opts' token, pprof and
// metrics settings (listening options are ignored). When opts.TokenFile is
// set but cannot be read or is empty, the handler fails closed: it answers
// every request 500 and logs why. Server.Start reports that error instead.
func New(b Backend, opts Options) http.Handler {
	h, err := newHandler(b, opts, context.Background())
	if err != nil {
		log := loggerOf(opts)
		log.Error("API disabled", zap.Error(err))
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			writeError(w, http.StatusInternalServerError, "API misconfigured: "+err.Error())
		})
	}
	return h
}

func loggerOf(opts Options) *zap.Logger {
	if opts.Logger == nil {
		return zap.NewNop()
	}
	return opts.Logger
}

// newHandler builds the API's handler over b; log streams end when streams
// is done.
func newHandler(b Backend, opts Options, streams context.Context) (http.Handler, error) {
	h := &handler{b: b, log: loggerOf(opts), now: time.Now, streams: streams}
	return h.chain(opts)
}

// chain builds the handler chain over h: token check, path guard, router.
func (h *handler) chain(opts Options) (http.Handler, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", h.healthz)
	mux.HandleFunc("GET /pods", h.pods)
	mux.HandleFunc("GET /pods/{namespace}/{name}", h.pod)
	mux.HandleFunc("GET /events", h.events)
	mux.HandleFunc("GET /logs/{namespace}/{pod}/{container}", h.logs)
	h.statsRoutes(mux) // stats.go
	if opts.Metrics != nil {
		mux.Handle("GET /metrics", opts.Metrics)
	}
	if opts.Kube != nil {
		for _, p := range KubePaths {
			mux.Handle(p, opts.Kube)
		}
	}
	if opts.EnablePprof {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("POST /debug/pprof/symbol", pprof.Symbol) // go tool pprof posts addresses
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	a := &authn{next: guardPath(mux)}
	if opts.TokenFile != "" {
		token, err := readToken(opts.TokenFile)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256([]byte(token))
		a.token = &sum
	}
	if opts.ClientCAFile != "" {
		pool, err := loadClientCA(opts.ClientCAFile)
		if err != nil {
			return nil, err
		}
		a.clients = pool
	}
	return a, nil
}

// KubePaths are the paths Options.Kube serves.
var KubePaths = []string{"/api", "/api/", "/apis", "/apis/", "/version", "/openapi/"}

// readToken reads a bearer token file: trimmed, non-empty.
func readToken(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return "", fmt.Errorf("token file %s is empty", path)
	}
	return token, nil
}

// bearerToken extracts the token from an Authorization header value; the
// scheme is case-insensitive (RFC 9110).
func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// fail answers a Backend error: 404 for ErrNotFound, nothing when the
// client has gone, 500 with the message otherwise.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, ErrNotFound), errors.Is(err, runtimeadapter.ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error())
	case r.Context().Err() != nil:
		h.log.Debug("API request ended by the client", zap.String("path", r.URL.Path), zap.Error(err))
	default:
		h.log.Warn("API request failed", zap.String("path", r.URL.Path), zap.Error(err))
		writeError(w, http.StatusInternalServerError, err.Error())
	}
}

// writeJSON answers code with v as JSON.
func writeJSON(w http.ResponseWriter, code int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "encoding the answer: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(append(data, '\n'))
}

// writeError answers code with a Kubernetes Status object carrying msg, as
// the API server and kubelet do.
func writeError(w http.ResponseWriter, code int, msg string) {
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  msg,
		Reason:   statusReason(code),
		Code:     int32(code),
	}
	data, _ := json.Marshal(&st) // a Status always encodes
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(append(data, '\n'))
}

func statusReason(code int) metav1.StatusReason {
	switch code {
	case http.StatusBadRequest:
		return metav1.StatusReasonBadRequest
	case http.StatusUnauthorized:
		return metav1.StatusReasonUnauthorized
	case http.StatusForbidden:
		return metav1.StatusReasonForbidden
	case http.StatusNotFound:
		return metav1.StatusReasonNotFound
	default:
		return metav1.StatusReasonInternalError
	}
}
