package etcd

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap/zaptest"

	"github.com/actorlet/actorlet/sources"
	"github.com/actorlet/actorlet/test/support/etcdtest"
	"github.com/actorlet/actorlet/test/support/leakcheck"
)

// TestMain fails the package when a goroutine started by its tests is
// still running after they all passed (see leakcheck.Main).
func TestMain(m *testing.M) { leakcheck.Main(m) }

const (
	testNode = "node-1"
	// slack bounds every wait for something that should happen at once
	// (an update after a put); reaching it means something is wrong.
	slack = 15 * time.Second
	// recoverSlack bounds a wait across an outage: the etcd client
	// reconnects with gRPC's backoff (1 s, growing ×1.6).
	recoverSlack = 45 * time.Second
	// testProbePeriod is the probe period of the tests, so an outage is
	// seen within a fraction of a second.
	testProbePeriod = 100 * time.Millisecond
	// testRequestTimeout bounds a read, so an outage is seen within it.
	testRequestTimeout = time.Second
)

var testKeys = mustKeys(DefaultPrefix)

func mustKeys(prefix string) Keys {
	k, err := NewKeys(prefix)
	if err != nil {
		panic(err)
	}
	return k
}

// podYAML is a valid pod manifest for name running image, without a
// namespace (the key's is used).
func podYAML(name, image string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\nspec:\n  containers:\n  - name: app\n    image: %s\n", name, image)
}

// podJSON is podYAML as JSON, in namespace ns.
func podJSON(ns, name, image string) string {
	return fmt.Sprintf(`{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": %q, "namespace": %q},
 "spec": {"containers": [{"name": "app", "image": %q}]}}`, name, ns, image)
}

// put writes key=value with c and returns the revision.
func put(t *testing.T, c *clientv3.Client, key, value string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), slack)
	defer cancel()
	resp, err := c.Put(ctx, key, value)
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return resp.Header.Revision
}

func del(t *testing.T, c *clientv3.Client, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), slack)
	defer cancel()
	if _, err := c.Delete(ctx, key); err != nil {
		t.Fatalf("delete %s: %v", key, err)
	}
}

// running is a Source under Run in the background.
type running struct {
	src     *Source
	updates chan sources.Update
	cancel  context.CancelFunc
	done    chan error
}

// start runs a source of testNode's pods with client c and test-friendly
// options (opts override them) until the test ends.
func start(t *testing.T, c Client, opts ...Option) *running {
	t.Helper()
	opts = append([]Option{WithLogger(zaptest.NewLogger(t)), WithProbePeriod(testProbePeriod),
		WithRequestTimeout(testRequestTimeout), WithBackoff(50*time.Millisecond, 500*time.Millisecond)}, opts...)
	src, err := New(c, testKeys, testNode, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{src: src, updates: make(chan sources.Update, 1000), cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- src.Run(ctx, func(u sources.Update) { r.updates <- u }) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(slack):
			t.Errorf("Run did not return within %v of its context's end", slack)
		}
	})
	return r
}

// next returns the next update, failing the test if none comes within d.
func (r *running) next(t *testing.T, d time.Duration) sources.Update {
	t.Helper()
	select {
	case u := <-r.updates:
		return u
	case <-time.After(d):
		t.Fatalf("no update within %v", d)
		return sources.Update{}
	}
}

// waitFor returns the first update for which ok holds, failing the test
// if none comes within d. Every update it skips is passed to check first,
// which may fail the test.
func (r *running) waitFor(t *testing.T, d time.Duration, what string, ok func(sources.Update) bool, check func(sources.Update)) sources.Update {
	t.Helper()
	deadline := time.After(d)
	var last sources.Update
	for {
		select {
		case u := <-r.updates:
			if ok(u) {
				return u
			}
			if check != nil {
				check(u)
			}
			last = u
		case <-deadline:
			t.Fatalf("no update with %s within %v; last: %s", what, d, describe(last))
			return sources.Update{}
		}
	}
}

// podNames returns "namespace/name=image" for each pod of u, in order.
func podNames(u sources.Update) []string {
	var out []string
	for _, p := range u.Pods {
		out = append(out, p.Namespace+"/"+p.Name+"="+p.Spec.Containers[0].Image)
	}
	return out
}

func describe(u sources.Update) string {
	return fmt.Sprintf("{pods %q, problems %v, err %v}", podNames(u), u.Problems, u.Err)
}

// hasPods reports whether u is a successful update with exactly want.
func hasPods(u sources.Update, want ...string) bool {
	return u.Err == nil && strings.Join(podNames(u), ",") == strings.Join(want, ",")
}

// wantPods fails unless u is a successful update with exactly the pods
// want (see podNames).
func wantPods(t *testing.T, u sources.Update, want ...string) {
	t.Helper()
	if !hasPods(u, want...) {
		t.Fatalf("update = %s, want pods %q", describe(u), want)
	}
}

// ---------------------------------------------------------------------------
// A client whose watches a test can break.

// breakingClient is a real client whose Watch a test can break (close the
// channel the source reads, as a watch that fails does) and hold (new
// watches wait until released). It records the revision each watch starts
// from and counts the reads of whole prefixes (full reads, not probes).
type breakingClient struct {
	*clientv3.Client

	mu        sync.Mutex
	cancels   []context.CancelFunc
	held      chan struct{} // non-nil: new watches wait for it to close
	watchRevs []int64
	fullReads int
	watchWake chan struct{} // signalled on every Watch call
}

func newBreakingClient(c *clientv3.Client) *breakingClient {
	return &breakingClient{Client: c, watchWake: make(chan struct{}, 100)}
}

func (b *breakingClient) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if op := clientv3.OpGet(key, opts...); len(op.RangeBytes()) > 0 && !op.IsCountOnly() { // a range read, not a probe
		b.mu.Lock()
		b.fullReads++
		b.mu.Unlock()
	}
	return b.Client.Get(ctx, key, opts...)
}

func (b *breakingClient) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	out := make(chan clientv3.WatchResponse)
	inner, cancel := context.WithCancel(ctx)
	// The cancel is registered with the count, before the test can see
	// the count and break the watches: else a break right then misses it.
	b.mu.Lock()
	held := b.held
	b.watchRevs = append(b.watchRevs, clientv3.OpGet(key, opts...).Rev())
	b.cancels = append(b.cancels, cancel)
	b.mu.Unlock()
	b.watchWake <- struct{}{}
	go func() {
		defer close(out)
		if held != nil {
			select {
			case <-held:
			case <-inner.Done():
				return
			}
		}
		for wr := range b.Client.Watch(inner, key, opts...) {
			select {
			case out <- wr:
			case <-inner.Done():
				return
			}
		}
	}()
	return out
}

// breakAndHold closes every open watch's channel and makes new watches
// wait until release.
func (b *breakingClient) breakAndHold() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held = make(chan struct{})
	for _, c := range b.cancels {
		c()
	}
	b.cancels = nil
}

// release lets held watches go on.
func (b *breakingClient) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held != nil {
		close(b.held)
		b.held = nil
	}
}

// waitWatches waits until Watch has been called n times in all, and
// returns the revisions asked for.
func (b *breakingClient) waitWatches(t *testing.T, n int) []int64 {
	t.Helper()
	deadline := time.After(slack)
	for {
		b.mu.Lock()
		revs := append([]int64(nil), b.watchRevs...)
		b.mu.Unlock()
		if len(revs) >= n {
			return revs
		}
		select {
		case <-b.watchWake:
		case <-deadline:
			t.Fatalf("%d watches opened within %v, want %d", len(revs), slack, n)
		}
	}
}

func (b *breakingClient) reads() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fullReads
}

// startEtcd starts an embedded etcd and returns it with a client.
func startEtcd(t *testing.T) (*etcdtest.Server, *clientv3.Client) {
	t.Helper()
	s := etcdtest.Start(t)
	return s, s.Client(t)
}
