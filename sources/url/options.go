package url

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/actorlet/actorlet/internal/manifest"
	"github.com/actorlet/actorlet/sources"
)

// Defaults for New's options.
const (
	// DefaultPeriod is how often the URL is polled, as the kubelet's
	// --http-check-frequency.
	DefaultPeriod = 20 * time.Second
	// DefaultTimeout bounds one poll (connecting, the response headers and
	// reading the body). It is the default client's Timeout, and it also
	// applies to a client given with WithHTTPClient that has no Timeout.
	DefaultTimeout = 10 * time.Second
)

// Option configures a Source.
type Option func(*Source)

// WithPeriod sets how often the URL is polled (default DefaultPeriod,
// 20 s); the first poll is at once. Polls never overlap: when one takes
// longer than the period, the next starts as soon as it ends. A period
// ≤ 0 keeps the default.
func WithPeriod(d time.Duration) Option {
	return func(s *Source) {
		if d > 0 {
			s.period = d
		}
	}
}

// WithHeader adds a header to every request, as the kubelet's
// --manifest-url-header. It may be given several times; values of the same
// key are all sent, in order. "Host" sets the request's host. New fails
// when key is not a valid header name or value holds a CR, LF or NUL.
//
// Header values never appear in the source's Name, logs or errors, so they
// are the place for credentials (e.g. "Authorization").
func WithHeader(key, value string) Option {
	return func(s *Source) {
		if !validHeaderName(key) {
			s.errs = append(s.errs, fmt.Errorf("header name %q is not valid", key))
			return
		}
		if strings.ContainsAny(value, "\r\n\x00") {
			s.errs = append(s.errs, fmt.Errorf("header %s: value contains a CR, LF or NUL", key))
			return
		}
		if http.CanonicalHeaderKey(key) == "Host" {
			s.host = value
			return
		}
		s.header.Add(key, value)
	}
}

// WithHTTPClient sets the HTTP client (default: one with Timeout
// DefaultTimeout, 10 s, over http.DefaultTransport), e.g. for TLS settings
// or a proxy. A client without a Timeout still gets DefaultTimeout per
// poll. A nil client keeps the default.
func WithHTTPClient(c *http.Client) Option {
	return func(s *Source) {
		if c != nil {
			s.client = c
		}
	}
}

// WithLogger sets the logger (default: none). A nil logger keeps the default.
func WithLogger(l *zap.Logger) Option {
	return func(s *Source) {
		if l != nil {
			s.log = l
		}
	}
}

// validHeaderName reports whether name is an RFC 9110 token.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// WithValidation sets what the operator allows in manifests (privileged
// containers, hostPath volumes); default: neither.
func WithValidation(v sources.Validation) Option {
	return func(s *Source) { s.validate = manifest.ValidationOptions(v) }
}
