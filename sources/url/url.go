// Package url is the manifest URL source: it polls an http or https URL
// for a v1.Pod or a v1.PodList (YAML or JSON), as the kubelet's
// --manifest-url, and also for ConfigMaps and Secrets.
//
// The URL is fetched with GET at once and then every period (20 s by
// default), with the configured headers. The body is decoded as strictly
// as a manifest file (see manifest.DecodeObjects): a single Pod, a PodList
// whose items are pods, a List whose items are Pods, ConfigMaps and
// Secrets, or YAML documents ("---") each a Pod, ConfigMap or Secret.
// ConfigMaps and Secrets are read as in a manifest directory
// (manifest.Document.LoadConfigData), annotated io.actorlet/source-url,
// and follow the same rules as pods below (a bad one keeps its last good
// version; the first of two definitions wins); no Secret value is logged.
// Each pod is defaulted and validated like a file
// pod, and gets the same kind of UID: its metadata.uid when set, else a
// hash of the node name, the URL (without credentials) with the pod's
// namespace/name, and the pod's canonical form; so an unchanged response
// keeps every UID and a real edit of a pod gives it a new one. Its
// annotations are kubernetes.io/config.source "http",
// kubernetes.io/config.hash (the UID) and io.actorlet/source-url (the URL
// as in Name).
//
// A poll fails on a connection error, a timeout, a status other than 2xx,
// a body over 10 MiB (1 MiB for YAML documents, as a manifest file), or a
// body that is none of those (malformed, empty, another kind): the update
// carries Err, naming the URL and the cause, and is sent once per
// distinct error; the node keeps the last set of pods (a failure never
// empties it), and the failure is counted in Stats. One bad pod in a good response is a Problem naming the URL and
// the item (e.g. items[2].spec.containers[0].image: Required value): the
// other pods apply, and a pod that was good before under the same
// namespace/name keeps its last good spec until the item is fixed or
// removed. When two pods have the same namespace/name (or UID), the first
// in the list wins and the other is a Problem.
//
// An update is sent after the first successful poll (even with no pods:
// an empty PodList is a real, empty set), on the first success after a
// failure, and whenever the pods or problems change (not their order).
// Stats counts the polls and failures for health reporting.
package url

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/actorlet/actorlet/internal/manifest"
	"github.com/actorlet/actorlet/internal/version"
	"github.com/actorlet/actorlet/sources"
)

// maxBodyBytes bounds a response body (10 MiB, as a manifest file); a
// larger body fails the poll.
const maxBodyBytes = 10 << 20

// Source is the manifest URL source. Create it with New; it implements
// sources.Source.
type Source struct {
	url      *neturl.URL // as given, credentials included: only for requests
	shown    string      // url without secrets (see redact)
	nodeName string
	period   time.Duration
	header   http.Header
	host     string // the Host header, if set
	maxBody  int    // bytes; maxBodyBytes but in tests
	client   *http.Client
	log      *zap.Logger
	errs     []error // from options
	validate manifest.ValidationOptions

	mu    sync.Mutex
	stats Stats
}

var _ sources.Source = (*Source)(nil)

// Stats counts a Source's polls. The zero value means no poll has ended.
type Stats struct {
	// Polls is the number of polls that ended, failed or not. A poll cut
	// short because Run's context ended is not counted.
	Polls int64
	// Failures is the number of polls that failed: their update carried
	// Err (sent once per distinct error). A response with Problems but a
	// good body is not a failure.
	Failures int64
	// LastSuccess is when the latest successful poll ended; zero if none
	// has succeeded yet.
	LastSuccess time.Time
	// LastError is the latest poll's error, nil when it succeeded (or no
	// poll has ended).
	LastError error
}

// New returns a source polling rawURL for the node nodeName (it goes into
// each pod's UID, see manifest.StaticPodUID). Options: WithPeriod (default
// 20 s), WithHeader, WithHTTPClient (default: a client with a 10 s
// timeout), WithLogger (default none).
//
// It fails when rawURL does not parse, its scheme is not http or https, it
// has no host, or a WithHeader is invalid. Nothing is fetched before Run.
func New(rawURL, nodeName string, opts ...Option) (*Source, error) {
	u, err := neturl.Parse(rawURL)
	if err != nil {
		// A *neturl.Error repeats the URL, credentials included.
		var ue *neturl.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("invalid manifest URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("manifest URL %s: scheme %q is not http or https", redact(u), u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("manifest URL %s: no host", redact(u))
	}
	s := &Source{
		url:      u,
		shown:    redact(u),
		nodeName: nodeName,
		period:   DefaultPeriod,
		header:   http.Header{},
		client:   &http.Client{Timeout: DefaultTimeout},
		log:      zap.NewNop(),
		maxBody:  maxBodyBytes,
	}
	for _, o := range opts {
		o(s)
	}
	if err := errors.Join(s.errs...); err != nil {
		return nil, fmt.Errorf("manifest URL %s: %w", s.shown, err)
	}
	if s.header.Get("User-Agent") == "" {
		s.header.Set("User-Agent", "actorlet/"+version.Version)
	}
	if s.header.Get("Accept") == "" {
		s.header.Set("Accept", "application/json, application/yaml;q=0.9, */*;q=0.8")
	}
	s.log = s.log.With(zap.String("source", s.Name()))
	return s, nil
}

// Name returns "http:" and the URL without its userinfo and fragment, and
// with the values of query parameters that look secret (token, key,
// signature, password …) replaced by REDACTED, e.g.
// "http:https://config.example.com/pods?node=a&token=REDACTED".
func (s *Source) Name() string { return "http:" + s.shown }

// Stats returns the poll counters. It is safe to call at any time, from
// any goroutine, also while Run runs.
func (s *Source) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Run polls the URL at once and then every period, calling sink when
// something changed (see sources.Update and the package doc). It returns
// nil when ctx ends, cancelling a poll in flight; it never returns early,
// as New checked the configuration.
func (s *Source) Run(ctx context.Context, sink func(sources.Update)) error {
	p := newPoller(s.Name(), s.shown, s.nodeName, s.log)
	p.validate = s.validate
	tick := time.NewTicker(s.period)
	defer tick.Stop()
	for {
		body, err := s.fetch(ctx)
		if ctx.Err() != nil {
			return nil
		}
		u, send := p.handle(body, err)
		s.record(u.Err)
		if send {
			sink(u)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// record counts one poll that ended with err (nil: success).
func (s *Source) record(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Polls++
	s.stats.LastError = err
	if err != nil {
		s.stats.Failures++
	} else {
		s.stats.LastSuccess = time.Now()
	}
}

// fetch GETs the URL once and returns the body of a 2xx response. Its
// errors do not repeat the URL (which may hold credentials).
func (s *Source) fetch(ctx context.Context) ([]byte, error) {
	if s.client.Timeout <= 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("GET: %w", err)
	}
	req.Header = s.header.Clone()
	if s.host != "" {
		req.Host = s.host
	}
	resp, err := s.client.Do(req)
	if err != nil {
		var ue *neturl.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("GET: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// Drain a little, so the connection can be reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return nil, fmt.Errorf("HTTP status %s", strings.TrimSpace(fmt.Sprint(resp.StatusCode, " ", http.StatusText(resp.StatusCode))))
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(s.maxBody)+1))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if len(data) > s.maxBody {
		return nil, fmt.Errorf("body is over the %d-byte limit", s.maxBody)
	}
	return data, nil
}
