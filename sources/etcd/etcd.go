// Package etcd is the etcd pod source: a node of a fleet reads its desired
// pods from the keys <prefix>/nodes/<node>/pods/<namespace>/<name> of an
// etcd cluster, each a v1.Pod in YAML or JSON, and the ConfigMaps and
// Secrets they use from <prefix>/nodes/<node>/configmaps/<namespace>/<name>
// and .../secrets/<namespace>/<name> (see Keys for the whole schema, and
// internal/fleet for what the node writes back).
//
// Run reads every key of the node's desired range (Keys.Desired, one Get),
// sends the set, then watches the range from the revision after that
// read; keys of the range that hold no desired object (the node's
// heartbeat and events) are skipped. A watch
// that breaks is opened again from the last revision it delivered, so
// nothing is read twice and nothing is missed; when that revision has been
// compacted away, the source reads every key again instead. While etcd
// cannot be reached (the first read fails, or a periodic linearizable
// probe fails) the source sends an Update with Err, once per distinct
// error, and the node keeps the last set: never "empty". Reads are retried
// with exponential backoff (0.5 s doubling to 30 s, forever); the first
// success after a failure sends the current set again.
//
// Each value is decoded as strictly as a manifest file
// (internal/manifest): one Pod, ConfigMap or Secret, of the key's kind,
// defaulted and validated (ConfigMaps and Secrets as in a manifest
// directory, annotated io.actorlet/source-etcd-key; no Secret value is
// logged). The key names the object: metadata.namespace and
// metadata.name may be left out (the key's are used) and must match the
// key when given. A pod's UID is its metadata.uid
// when set, else a hash of the node name, the key and the pod's canonical
// form, so an unchanged value keeps it and any real edit (or a move to
// another node's key) gives a new one. Annotations:
// kubernetes.io/config.source "etcd", kubernetes.io/config.hash (the UID)
// and io.actorlet/source-etcd-key (the key). A bad value is a Problem
// naming the key and the field, e.g.
//
//	etcd key /actorlet/nodes/n1/pods/default/web: spec.containers[0].image: Required value
//
// The other keys still apply, and a key that was good keeps its last good
// pod until it is fixed or deleted.
package etcd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/actorlet/actorlet/internal/manifest"
	"github.com/actorlet/actorlet/sources"
)

// Defaults of New's options.
const (
	// DefaultProbePeriod is how often a watching source checks that etcd
	// answers a linearizable read (a watch alone does not notice a dead
	// connection: the client reconnects silently).
	DefaultProbePeriod = 10 * time.Second
	// DefaultRequestTimeout bounds one read (the full read, a probe).
	DefaultRequestTimeout = 5 * time.Second
	// DefaultBackoffInitial and DefaultBackoffMax bound the wait between
	// retries of a failed read or a broken watch (doubling, ±50 % jitter).
	DefaultBackoffInitial = 500 * time.Millisecond
	DefaultBackoffMax     = 30 * time.Second
)

// Annotations set on every pod from etcd, besides manifest's
// AnnotationConfigHash (the UID).
const (
	// ConfigSourceEtcd is manifest.AnnotationConfigSource's value for
	// pods from etcd, as the kubelet's old etcd source.
	ConfigSourceEtcd = "etcd"
	// AnnotationSourceKey is the etcd key the pod came from.
	AnnotationSourceKey = "io.actorlet/source-etcd-key"
)

// Client is what the source needs of an etcd client; *clientv3.Client
// has it.
type Client interface {
	clientv3.KV
	clientv3.Watcher
}

// Source is the etcd source of one node. Create it with New; it implements
// sources.Source.
type Source struct {
	client Client
	keys   Keys
	node   string
	prefix string // keys.Pods(node)
	// start and end are the key range read and watched, keys.Desired(node).
	start, end string
	log        *zap.Logger
	validate   manifest.ValidationOptions

	probePeriod    time.Duration
	requestTimeout time.Duration
	backoffInitial time.Duration
	backoffMax     time.Duration
}

var _ sources.Source = (*Source)(nil)

// Option configures a Source.
type Option func(*Source)

// WithLogger sets the logger (default: none). nil keeps the default.
func WithLogger(l *zap.Logger) Option {
	return func(s *Source) {
		if l != nil {
			s.log = l
		}
	}
}

// WithValidation sets what the operator allows in pods (privileged
// containers, hostPath volumes); default: neither.
func WithValidation(v sources.Validation) Option {
	return func(s *Source) { s.validate = manifest.ValidationOptions(v) }
}

// WithProbePeriod sets how often a watching source probes etcd (default
// DefaultProbePeriod, 10 s). A period ≤ 0 keeps the default.
func WithProbePeriod(d time.Duration) Option {
	return func(s *Source) {
		if d > 0 {
			s.probePeriod = d
		}
	}
}

// WithRequestTimeout bounds each read (default DefaultRequestTimeout,
// 5 s). A timeout ≤ 0 keeps the default.
func WithRequestTimeout(d time.Duration) Option {
	return func(s *Source) {
		if d > 0 {
			s.requestTimeout = d
		}
	}
}

// WithBackoff sets the retry backoff's first and longest wait (default
// 0.5 s and 30 s). Values ≤ 0 keep the defaults.
func WithBackoff(initial, max time.Duration) Option {
	return func(s *Source) {
		if initial > 0 {
			s.backoffInitial = initial
		}
		if max > 0 {
			s.backoffMax = max
		}
	}
}

// New returns the source of node's pods under keys' prefix, read with
// client (which the caller closes after Run returns). It fails when node
// cannot be a key segment (see ValidNodeName). Nothing is read before Run.
func New(client Client, keys Keys, node string, opts ...Option) (*Source, error) {
	if client == nil {
		return nil, errors.New("etcd source: no client")
	}
	if err := ValidNodeName(node); err != nil {
		return nil, fmt.Errorf("etcd source: %w", err)
	}
	start, end := keys.Desired(node)
	s := &Source{
		client: client, keys: keys, node: node, prefix: keys.Pods(node), start: start, end: end,
		log:            zap.NewNop(),
		probePeriod:    DefaultProbePeriod,
		requestTimeout: DefaultRequestTimeout,
		backoffInitial: DefaultBackoffInitial,
		backoffMax:     DefaultBackoffMax,
	}
	for _, o := range opts {
		o(s)
	}
	s.log = s.log.With(zap.String("source", s.Name()))
	return s, nil
}

// Name returns "etcd:" and the node's pods prefix, e.g.
// "etcd:/actorlet/nodes/n1/pods/".
func (s *Source) Name() string { return "etcd:" + s.prefix }

// errWatchClosed: the watch channel closed without an error response.
var errWatchClosed = errors.New("watch channel closed")

// Run reads, then watches, the node's pods until ctx ends (see the package
// doc), calling sink when the set, its problems or the source's health
// change. It returns nil when ctx ends; it never returns early.
func (s *Source) Run(ctx context.Context, sink func(sources.Update)) error {
	st := newState(s)
	bo := s.newBackoff()
	for ctx.Err() == nil {
		if st.rev == 0 {
			if err := s.list(ctx, st); err != nil {
				if ctx.Err() != nil {
					break
				}
				st.fail(err, sink)
				if !sleep(ctx, bo.NextBackOff()) {
					break
				}
				continue
			}
			st.succeed(sink)
		}
		from := st.rev + 1
		err := s.watch(ctx, st, sink, bo)
		if ctx.Err() != nil {
			break
		}
		if errors.Is(err, rpctypes.ErrCompacted) {
			s.log.Info("watch revision compacted away; reading every pod again", zap.Int64("revision", st.rev+1))
			st.rev = 0
			continue
		}
		s.log.Warn("watch broke; opening it again from the last revision seen", zap.Error(err),
			zap.Int64("watchedFrom", from), zap.Int64("resumeFrom", st.rev+1))
		if !sleep(ctx, bo.NextBackOff()) {
			break
		}
	}
	return nil
}

// newBackoff is the retry policy: exponential, never giving up.
func (s *Source) newBackoff() *backoff.ExponentialBackOff {
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval = s.backoffInitial
	bo.MaxInterval = s.backoffMax
	bo.MaxElapsedTime = 0
	bo.Reset()
	return bo
}

// list reads every key under the prefix and makes it the state's set, at
// the read's revision.
func (s *Source) list(ctx context.Context, st *state) error {
	lctx, cancel := context.WithTimeout(ctx, s.requestTimeout)
	defer cancel()
	resp, err := s.client.Get(lctx, s.start, clientv3.WithRange(s.end))
	if err != nil {
		return fmt.Errorf("etcd %s: read the pods: %w", s.prefix, err)
	}
	st.replaceAll(resp.Kvs)
	st.rev = resp.Header.Revision
	return nil
}

// watch watches the prefix from st.rev+1, applying events to st and
// sending updates, and probes etcd every probe period, until the watch
// ends (its error is returned) or ctx does.
func (s *Source) watch(ctx context.Context, st *state, sink func(sources.Update), bo backoff.BackOff) error {
	// RequireLeader: a member cut off from its cluster cancels the watch
	// instead of leaving it silent.
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	from := st.rev + 1
	// Watch blocks until its gRPC stream is open, which takes as long as
	// etcd is unreachable: open it aside, probing meanwhile. Cancelling
	// wctx ends the call; the buffer lets it return.
	opened := make(chan clientv3.WatchChan, 1)
	go func() {
		opened <- s.client.Watch(wctx, s.start, clientv3.WithRange(s.end), clientv3.WithRev(from),
			clientv3.WithCreatedNotify(), clientv3.WithProgressNotify())
	}()
	var wch clientv3.WatchChan // nil, so never ready, until opened
	probe := time.NewTicker(s.probePeriod)
	defer probe.Stop()
	established := false
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case wch = <-opened:
			opened = nil
		case wr, ok := <-wch:
			if !ok {
				return errWatchClosed
			}
			if err := wr.Err(); err != nil {
				if !established && !errors.Is(err, rpctypes.ErrCompacted) {
					st.fail(fmt.Errorf("etcd %s: watch from revision %d: %w", s.prefix, from, err), sink)
				}
				return err
			}
			if wr.Created {
				established = true
				bo.Reset()
				st.succeed(sink)
				continue
			}
			if wr.IsProgressNotify() {
				// Every event up to the header's revision has been delivered.
				st.rev = max(st.rev, wr.Header.Revision)
				continue
			}
			for _, ev := range wr.Events {
				switch ev.Type {
				case clientv3.EventTypePut:
					st.put(string(ev.Kv.Key), ev.Kv.Value, ev.Kv.ModRevision)
				case clientv3.EventTypeDelete:
					st.del(string(ev.Kv.Key))
				}
				st.rev = max(st.rev, ev.Kv.ModRevision)
			}
			st.succeed(sink)
		case <-probe.C:
			if err := s.probe(ctx); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				st.fail(err, sink)
			} else {
				st.succeed(sink)
			}
		}
	}
}

// probe reads one key linearizably (it needs the cluster's quorum): the
// prefix itself, which holds no pod.
func (s *Source) probe(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, s.requestTimeout)
	defer cancel()
	if _, err := s.client.Get(pctx, s.prefix, clientv3.WithCountOnly()); err != nil {
		return fmt.Errorf("etcd %s: probe: %w", s.prefix, err)
	}
	return nil
}

// sleep waits d or until ctx ends, and reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
