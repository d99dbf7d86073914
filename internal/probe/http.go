package probe

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// UserAgent is the User-Agent of HTTP probes that set none. It starts with
// "kube-probe/", which applications commonly match to recognise health
// checks.
const UserAgent = "kube-probe/actorlet"

// maxBody is how much of a response body HTTPGet keeps as output.
const maxBody = 10 << 10

// httpTransport is shared by every HTTP probe, as the kubelet shares one:
// no keep-alives (a probe is one request), no proxy from the environment,
// no compression, and no certificate verification (probes check that the
// server answers, not who it is).
var httpTransport = &http.Transport{
	Proxy:               nil,
	DisableKeepAlives:   true,
	DisableCompression:  true,
	TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
	TLSHandshakeTimeout: 10 * time.Second,
}

// HTTPGet probes by sending GET to the URL a describes, within timeout
// (timeout <= 0: only ctx bounds it). The host is a.Host, or host when
// that is empty (the caller passes the pod IP, or 127.0.0.1 for a
// hostNetwork pod); the port is resolved by resolvePort (nil accepts
// numbers only; see ResolvePort); scheme and path default to http and
// "/". a.HTTPHeaders are sent, a "Host" header sets the request's host,
// and User-Agent (UserAgent) and Accept ("*/*") are added unless given
// (an empty Accept header removes it).
//
// A status from 200 to 399 is Success (redirects are not followed: a 3xx
// counts as success, with its Location in the output); any other status
// is Failure, and so is any error of the request (refused, reset, timed
// out, TLS). The output is the response body (at most 10 KiB) or what
// went wrong. Unknown means the probe could not be made (a bad scheme or
// port) or ctx was cancelled.
func HTTPGet(ctx context.Context, host string, a *v1.HTTPGetAction, resolvePort func(intstr.IntOrString) (int, error), timeout time.Duration) (Result, string) {
	if a == nil {
		return Unknown, "httpGet probe: no action"
	}
	if resolvePort == nil {
		resolvePort = func(p intstr.IntOrString) (int, error) { return ResolvePort(p, nil) }
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	req, err := newHTTPRequest(ctx, host, a, resolvePort)
	if err != nil {
		return Unknown, "httpGet probe: " + err.Error()
	}
	client := &http.Client{
		Transport:     httpTransport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(context.Cause(ctx), context.Canceled) {
			return Unknown, "probe cancelled: " + err.Error()
		}
		return Failure, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody)) // the status decides, not the body
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		return Success, string(body)
	case code >= 300 && code < 400:
		return Success, fmt.Sprintf("HTTP probe got redirect %d to %q, not followed", code, resp.Header.Get("Location"))
	default:
		return Failure, fmt.Sprintf("HTTP probe failed with statuscode: %d", code)
	}
}

// newHTTPRequest builds the request of an httpGet probe or lifecycle
// hook.
func newHTTPRequest(ctx context.Context, host string, a *v1.HTTPGetAction, resolvePort func(intstr.IntOrString) (int, error)) (*http.Request, error) {
	scheme := strings.ToLower(string(a.Scheme))
	switch scheme {
	case "":
		scheme = "http"
	case "http", "https":
	default:
		return nil, fmt.Errorf("unsupported scheme %q", a.Scheme)
	}
	if a.Host != "" {
		host = a.Host
	}
	if host == "" {
		return nil, errors.New("no host to probe")
	}
	port, err := resolvePort(a.Port)
	if err != nil {
		return nil, err
	}
	path := a.Path
	if path == "" {
		path = "/"
	}
	u, err := url.Parse(path)
	if err != nil { // too late to reject the path: send it as it is
		u = &url.URL{Path: path}
	}
	u.Scheme, u.Host = scheme, net.JoinHostPort(host, strconv.Itoa(port))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	for _, kv := range a.HTTPHeaders {
		h.Add(kv.Name, kv.Value)
	}
	if _, ok := h["User-Agent"]; !ok {
		h.Set("User-Agent", UserAgent)
	}
	if _, ok := h["Accept"]; !ok {
		h.Set("Accept", "*/*")
	} else if h.Get("Accept") == "" {
		h.Del("Accept")
	}
	req.Header = h
	req.Host = h.Get("Host")
	return req, nil
}
