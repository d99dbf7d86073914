package fleet

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap/zaptest"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/sources/etcd"
	"github.com/actorlet/actorlet/test/support/etcdtest"
	"github.com/actorlet/actorlet/test/support/leakcheck"
)

// TestMain fails the package when a goroutine started by its tests is
// still running after they all passed (see leakcheck.Main).
func TestMain(m *testing.M) { leakcheck.Main(m) }

const (
	testNode = "node-1"
	// slack bounds waits for what should happen at once.
	slack = 15 * time.Second
	// recoverSlack bounds waits across an outage (the etcd client
	// reconnects with gRPC's backoff: 1 s growing ×1.6).
	recoverSlack = 45 * time.Second
	pollInterval = 20 * time.Millisecond
)

var testKeys = func() etcd.Keys {
	k, err := etcd.NewKeys(etcd.DefaultPrefix)
	if err != nil {
		panic(err)
	}
	return k
}()

// eventually polls cond until it holds, failing the test after d with
// what cond last saw.
func eventually(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, seen := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; last seen: %s", d, what, seen)
		}
		time.Sleep(pollInterval)
	}
}

// get reads key: its value and lease, found false when it does not exist.
func get(t *testing.T, c *clientv3.Client, key string) (value string, lease int64, found bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), slack)
	defer cancel()
	resp, err := c.Get(ctx, key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	if len(resp.Kvs) == 0 {
		return "", 0, false
	}
	return string(resp.Kvs[0].Value), resp.Kvs[0].Lease, true
}

// list returns the keys and values under prefix, in key order.
func list(t *testing.T, c *clientv3.Client, prefix string) ([]string, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), slack)
	defer cancel()
	resp, err := c.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		t.Fatalf("list %s: %v", prefix, err)
	}
	var keys, values []string
	for _, kv := range resp.Kvs {
		keys, values = append(keys, string(kv.Key)), append(values, string(kv.Value))
	}
	return keys, values
}

func put(t *testing.T, c *clientv3.Client, key, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), slack)
	defer cancel()
	if _, err := c.Put(ctx, key, value); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

// newPublisher returns a Publisher of testNode on client c with fast test
// timing (opts changes them), stopped at test end.
func newPublisher(t *testing.T, c Client, change func(*Options)) *Publisher {
	t.Helper()
	o := Options{
		Client: c, Keys: testKeys, Node: testNode, LeaseDuration: 2 * time.Second,
		EventPollPeriod: 20 * time.Millisecond, RequestTimeout: time.Second,
		BackoffInitial: 50 * time.Millisecond, BackoffMax: 500 * time.Millisecond,
		Logger: zaptest.NewLogger(t),
	}
	if change != nil {
		change(&o)
	}
	p, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { p.Stop(time.Second) })
	return p
}

// pod is a pod with a status of phase.
func pod(name string, uid types.UID, phase v1.PodPhase) *v1.Pod {
	p := &v1.Pod{}
	p.Namespace, p.Name, p.UID = "default", name, uid
	p.Spec.Containers = []v1.Container{{Name: "app", Image: "x:1"}}
	p.Status.Phase = phase
	return p
}

// statusOf decodes a status document; "" gives nil.
func statusOf(t *testing.T, value string) *v1.Pod {
	t.Helper()
	if value == "" {
		return nil
	}
	var p v1.Pod
	if err := json.Unmarshal([]byte(value), &p); err != nil {
		t.Fatalf("status document %q: %v", value, err)
	}
	return &p
}

// countingClient counts Put calls per key.
type countingClient struct {
	*clientv3.Client
	mu   sync.Mutex
	puts map[string]int
}

func (c *countingClient) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	c.mu.Lock()
	c.puts[key]++
	c.mu.Unlock()
	return c.Client.Put(ctx, key, val, opts...)
}

func (c *countingClient) count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.puts[key]
}

// events is a fake node event list the test appends to.
type events struct {
	mu     sync.Mutex
	items  []messages.Event
	panics int // the next calls that panic
	calls  int
}

func (e *events) add(msgs ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, m := range msgs {
		e.items = append(e.items, messages.Event{Time: time.Now(), Type: messages.EventNormal, Reason: "Started",
			Namespace: "default", Pod: "web", UID: "uid-web", Container: "app", Message: m})
	}
}

func (e *events) source(context.Context) ([]messages.Event, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls++
	if e.panics > 0 {
		e.panics--
		panic("injected panic in the event source")
	}
	return append([]messages.Event(nil), e.items...), nil
}

func startEtcd(t *testing.T) (*etcdtest.Server, *clientv3.Client) {
	t.Helper()
	s := etcdtest.Start(t)
	return s, s.Client(t)
}
