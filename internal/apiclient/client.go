// Package apiclient is a small client for actorlet's read-only HTTP API
// (package internal/api), used by the actorlet CLI.
package apiclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/actorlet/actorlet/internal/api"
)

// DefaultServer is the API of an agent on this machine with default flags.
const DefaultServer = "http://127.0.0.1:10255"

const (
	// dialTimeout bounds connecting to the agent.
	dialTimeout = 5 * time.Second
	// responseHeaderTimeout bounds waiting for an answer's headers (a log
	// stream's headers come at once; its body may take forever).
	responseHeaderTimeout = 30 * time.Second
	// maxErrorBody is the most of an error answer read for its message.
	maxErrorBody = 64 << 10
)

// Client talks to one agent's API. It is safe for concurrent use.
type Client struct {
	server string // as shown in messages
	base   *url.URL
	token  string
	hc     *http.Client
}

// Option configures New.
type Option func(*config)

type config struct {
	token    string
	insecure bool
	hc       *http.Client
}

// WithToken sends "Authorization: Bearer <token>" with every request.
func WithToken(token string) Option { return func(c *config) { c.token = token } }

// WithInsecureSkipTLSVerify(true) accepts any certificate from an HTTPS
// server (a self-signed one, say). Use it only where the network is trusted.
func WithInsecureSkipTLSVerify(skip bool) Option { return func(c *config) { c.insecure = skip } }

// WithHTTPClient uses hc instead of the client's own, which has a 5 s dial
// timeout and a 30 s response header timeout. WithInsecureSkipTLSVerify is
// then ignored.
func WithHTTPClient(hc *http.Client) Option { return func(c *config) { c.hc = hc } }

// New returns a Client for the agent at server, a URL such as
// "https://node1:10255"; empty means DefaultServer, and a bare "host:port"
// means http://host:port. It does not connect.
func New(server string, opts ...Option) (*Client, error) {
	if server == "" {
		server = DefaultServer
	}
	raw := server
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("server %q: %w", server, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("server %q: want http://host:port or https://host:port", server)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	hc := cfg.hc
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.DialContext = (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext
		tr.ResponseHeaderTimeout = responseHeaderTimeout
		if cfg.insecure {
			tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} // the user asked for it
		}
		hc = &http.Client{Transport: tr}
	}
	return &Client{server: strings.TrimSuffix(u.String(), "/"), base: u, token: cfg.token, hc: hc}, nil
}

// Server returns the agent's base URL.
func (c *Client) Server() string { return c.server }

// Pods returns every pod the agent runs, with full status.
func (c *Client) Pods(ctx context.Context) (*v1.PodList, error) {
	var list v1.PodList
	if err := c.getJSON(ctx, []string{"pods"}, &list); err != nil {
		return nil, err
	}
	return &list, nil
}

// Pod returns one pod; errors.Is(err, ErrNotFound) when the agent does not
// run it.
func (c *Client) Pod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	if err := checkNames(namespace, name, ""); err != nil {
		return nil, err
	}
	var pod v1.Pod
	if err := c.getJSON(ctx, []string{"pods", namespace, name}, &pod); err != nil {
		return nil, err
	}
	return &pod, nil
}

// Events returns the agent's recent events, newest last.
func (c *Client) Events(ctx context.Context) (*v1.EventList, error) {
	var list v1.EventList
	if err := c.getJSON(ctx, []string{"events"}, &list); err != nil {
		return nil, err
	}
	return &list, nil
}

// Health returns the agent's health checks. An unhealthy agent (503) is not
// an error: Health.OK is false.
func (c *Client) Health(ctx context.Context) (api.Health, error) {
	var h api.Health
	resp, err := c.get(ctx, []string{"healthz"}, nil)
	if err != nil {
		return h, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable {
		return h, statusError(resp)
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		return h, fmt.Errorf("health from %s: %w", c.server, err)
	}
	return h, nil
}

// getJSON GETs the path made of segments and decodes a 200 answer into v.
func (c *Client) getJSON(ctx context.Context, segments []string, v any) error {
	resp, err := c.get(ctx, segments, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return statusError(resp)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("answer from %s is not actorlet's API: %w", c.server, err)
	}
	return nil
}

// get sends GET base/segments…?query; the caller closes the body.
func (c *Client) get(ctx context.Context, segments []string, query url.Values) (*http.Response, error) {
	u := *c.base
	for _, s := range segments {
		u.Path += "/" + s
	}
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	return resp, nil
}

// transportError explains a failed request: the caller's context ended, the
// agent's certificate is not trusted, or no agent answers.
func (c *Client) transportError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var (
		verr *tls.CertificateVerificationError
		uerr x509.UnknownAuthorityError
		herr x509.HostnameError
	)
	if errors.As(err, &verr) || errors.As(err, &uerr) || errors.As(err, &herr) {
		return fmt.Errorf("the actorlet agent at %s presented a certificate that is not trusted (skip verification for a self-signed one): %w", c.server, err)
	}
	var uErr *url.Error
	if errors.As(err, &uErr) {
		err = uErr.Err // the URL is in the message already
	}
	return &NoAgentError{Server: c.server, Err: err}
}

// statusError reads a non-200 answer: the Kubernetes Status the agent sends,
// or whatever text came.
func statusError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &StatusError{Code: resp.StatusCode}
	var st metav1.Status
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" {
		e.Reason, e.Message = string(st.Reason), st.Message
		return e
	}
	e.Message = string(bytes.TrimSpace(body))
	return e
}

// checkNames rejects names the agent would refuse, with a clearer message
// than the agent's: namespaces and containers are DNS-1123 labels, pods
// DNS-1123 subdomains. An empty container is not checked.
func checkNames(namespace, pod, container string) error {
	if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
		return fmt.Errorf("invalid namespace %q: %s", namespace, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(pod); len(errs) > 0 {
		return fmt.Errorf("invalid pod name %q: %s", pod, strings.Join(errs, "; "))
	}
	if container == "" {
		return nil
	}
	if errs := validation.IsDNS1123Label(container); len(errs) > 0 {
		return fmt.Errorf("invalid container name %q: %s", container, strings.Join(errs, "; "))
	}
	return nil
}
