package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	clientv3 "go.etcd.io/etcd/client/v3"
	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/version"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/node"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
	"github.com/actorlet/actorlet/test/support/etcdtest"
)

// These tests run the Publisher against a real etcd started in the test
// process, with heartbeat leases of 2–3 s (etcdtest's minimum TTL is 1 s).
// They never sleep to wait: they poll a condition with a deadline.

func TestNewChecksOptions(t *testing.T) {
	_, c := startEtcd(t)
	if _, err := New(Options{Keys: testKeys, Node: testNode}); err == nil {
		t.Error("New without a client succeeded")
	}
	if _, err := New(Options{Client: c, Keys: testKeys, Node: "a/b"}); err == nil || !strings.Contains(err.Error(), `"a/b"`) {
		t.Errorf("New with node a/b = %v, want an error naming it", err)
	}
}

func TestHeartbeatLivesWhileRenewedAndExpiresWhenNot(t *testing.T) {
	srv, c := startEtcd(t)
	proxy := etcdtest.NewProxy(t, srv.Endpoint())
	// 3 s: renewed every second, so a loaded machine's pauses of a second
	// or so do not let it expire.
	p := newPublisher(t, etcdtest.NewClient(t, proxy.Endpoint()), func(o *Options) { o.LeaseDuration = 3 * time.Second })
	p.Start(nil)
	key := testKeys.Heartbeat(testNode)

	var first int64
	eventually(t, slack, "a heartbeat", func() (bool, string) {
		v, lease, found := get(t, c, key)
		first = lease
		return found, v
	})
	hb, age, ok, err := HeartbeatAge(context.Background(), c, key)
	if err != nil || !ok {
		t.Fatalf("HeartbeatAge = %v, %v", ok, err)
	}
	if hb.Node != testNode || hb.Version != version.Version || hb.LeaseTTLSeconds != 3 || hb.Started.IsZero() {
		t.Errorf("heartbeat = %+v", hb)
	}
	if age < 0 || age > 3*time.Second {
		t.Errorf("age = %v, want within the 3 s TTL", age)
	}

	// Renewed: the key outlives its TTL, under the same lease.
	end := time.Now().Add(4 * time.Second)
	for time.Now().Before(end) {
		if _, lease, found := get(t, c, key); !found || lease != first {
			t.Fatalf("heartbeat gone or re-leased while renewed: found %v, lease %x (was %x)", found, lease, first)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Cut off from etcd, as a killed process is: the lease expires and
	// etcd deletes the key.
	cut := time.Now()
	proxy.SetDown(true)
	eventually(t, slack, "the heartbeat to expire", func() (bool, string) {
		v, _, found := get(t, c, key)
		return !found, v
	})
	if d := time.Since(cut); d < time.Second {
		t.Errorf("heartbeat gone %v after the cut, before its 3 s TTL could run out", d)
	}
	if _, _, ok, err := HeartbeatAge(context.Background(), c, key); ok || err != nil {
		t.Errorf("HeartbeatAge of an expired heartbeat = %v, %v; want not ok", ok, err)
	}

	// Back: a new lease, and the heartbeat again.
	proxy.SetDown(false)
	eventually(t, recoverSlack, "a new heartbeat", func() (bool, string) {
		v, lease, found := get(t, c, key)
		return found && lease != first, v
	})
}

func TestStopRevokesHeartbeat(t *testing.T) {
	_, c := startEtcd(t)
	p := newPublisher(t, c, func(o *Options) { o.LeaseDuration = 30 * time.Second })
	p.Start(nil)
	key := testKeys.Heartbeat(testNode)
	eventually(t, slack, "a heartbeat", func() (bool, string) {
		v, _, found := get(t, c, key)
		return found, v
	})
	p.Stop(time.Second)
	if v, _, found := get(t, c, key); found {
		t.Errorf("heartbeat still there after Stop (its lease is 30 s): %s", v)
	}
}

func TestStatusWrittenCoalescedAndDeleted(t *testing.T) {
	_, c := startEtcd(t)
	cc := &countingClient{Client: c, puts: map[string]int{}}
	p := newPublisher(t, cc, nil)
	key := testKeys.Status(testNode, "default", "web")

	// Queued before the writer runs: only the latest is written.
	p.PodStatusChanged(&messages.PodStatusChanged{Pod: pod("web", "uid-1", v1.PodPending)})
	p.PodStatusChanged(&messages.PodStatusChanged{Pod: pod("web", "uid-1", v1.PodRunning)})
	p.Start(nil)
	eventually(t, slack, "web's status", func() (bool, string) {
		v, _, _ := get(t, c, key)
		return v != "", v
	})
	v, lease, _ := get(t, c, key)
	doc := statusOf(t, v)
	if doc.Status.Phase != v1.PodRunning || doc.UID != "uid-1" || doc.Annotations[AnnotationNode] != testNode ||
		doc.Kind != "Pod" || doc.APIVersion != "v1" || len(doc.Spec.Containers) != 0 {
		t.Errorf("status document = %s", v)
	}
	if lease != 0 {
		t.Errorf("status key has lease %x, want none", lease)
	}
	if n := cc.count(key); n != 1 {
		t.Errorf("%d writes of %s, want 1 (two queued changes coalesce)", n, key)
	}

	// The same status again is not written again.
	p.PodStatusChanged(&messages.PodStatusChanged{Pod: pod("web", "uid-1", v1.PodRunning)})
	p.PodStatusChanged(&messages.PodStatusChanged{Pod: pod("api", "uid-a", v1.PodRunning)})
	eventually(t, slack, "api's status", func() (bool, string) {
		v, _, found := get(t, c, testKeys.Status(testNode, "default", "api"))
		return found, v
	})
	if n := cc.count(key); n != 1 {
		t.Errorf("%d writes of %s, want 1 (an unchanged status is not written)", n, key)
	}

	// Replaced by a new UID: the old pod's removal never deletes the new
	// pod's status, whether it is queued after it or comes later.
	p.PodStatusChanged(&messages.PodStatusChanged{Pod: pod("web", "uid-2", v1.PodPending)})
	p.PodStatusChanged(&messages.PodStatusChanged{Pod: pod("web", "uid-1", v1.PodRunning), Removed: true})
	eventually(t, slack, "uid-2's status", func() (bool, string) {
		v, _, _ := get(t, c, key)
		d := statusOf(t, v)
		return d != nil && d.UID == "uid-2", v
	})
	p.PodStatusChanged(&messages.PodStatusChanged{Pod: pod("web", "uid-1", v1.PodRunning), Removed: true})
	p.PodStatusChanged(&messages.PodStatusChanged{Pod: pod("api", "uid-a", v1.PodRunning), Removed: true})
	eventually(t, slack, "api's status deleted", func() (bool, string) {
		v, _, found := get(t, c, testKeys.Status(testNode, "default", "api"))
		return !found, v
	})
	if v, _, _ := get(t, c, key); statusOf(t, v) == nil || statusOf(t, v).UID != "uid-2" {
		t.Errorf("web's status after uid-1's late removal = %q, want uid-2's", v)
	}

	// The new pod's own removal deletes it.
	p.PodStatusChanged(&messages.PodStatusChanged{Pod: pod("web", "uid-2", v1.PodRunning), Removed: true})
	eventually(t, slack, "web's status deleted", func() (bool, string) {
		v, _, found := get(t, c, key)
		return !found, v
	})
}

func TestStatusRetriedAfterOutage(t *testing.T) {
	srv, c := startEtcd(t)
	proxy := etcdtest.NewProxy(t, srv.Endpoint())
	p := newPublisher(t, etcdtest.NewClient(t, proxy.Endpoint()), nil)
	p.Start(nil)
	eventually(t, slack, "a heartbeat", func() (bool, string) {
		v, _, found := get(t, c, testKeys.Heartbeat(testNode))
		return found, v
	})
	proxy.SetDown(true)
	p.PodStatusChanged(&messages.PodStatusChanged{Pod: pod("web", "uid-1", v1.PodRunning)})
	// Never blocks, however much is queued while etcd is away.
	done := make(chan struct{})
	go func() {
		for i := range 1000 {
			p.PodStatusChanged(&messages.PodStatusChanged{Pod: pod(fmt.Sprintf("p%d", i), "u", v1.PodRunning)})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(slack):
		t.Fatal("queueing 1000 status changes blocked while etcd is unreachable")
	}
	proxy.SetDown(false)
	eventually(t, recoverSlack, "web's status after the outage", func() (bool, string) {
		v, _, found := get(t, c, testKeys.Status(testNode, "default", "web"))
		return found, v
	})
	eventually(t, slack, "all 1001 statuses", func() (bool, string) {
		keys, _ := list(t, c, testKeys.Statuses(testNode))
		return len(keys) == 1001, fmt.Sprint(len(keys), " keys")
	})
}

func TestStaleStatusesOfAFormerRunDeleted(t *testing.T) {
	_, c := startEtcd(t)
	put(t, c, testKeys.Status(testNode, "default", "gone"), `{"status": {"phase": "Running"}}`)
	put(t, c, testKeys.Status(testNode, "default", "kept"), `{"status": {"phase": "Running"}}`)
	put(t, c, testKeys.Pod(testNode, "default", "kept"), "a pod")
	put(t, c, testKeys.Status("node-2", "default", "other"), `{"status": {"phase": "Running"}}`)
	p := newPublisher(t, c, nil)
	p.Start(nil)
	eventually(t, slack, "the stale status deleted", func() (bool, string) {
		keys, _ := list(t, c, testKeys.Nodes())
		return strings.Join(keys, " ") == strings.Join([]string{
			testKeys.Heartbeat(testNode), testKeys.Pod(testNode, "default", "kept"),
			testKeys.Status(testNode, "default", "kept"), testKeys.Status("node-2", "default", "other"),
		}, " "), fmt.Sprint(keys)
	})
}

func TestEventsWrittenUnderLeaseAndBounded(t *testing.T) {
	_, c := startEtcd(t)
	evs := &events{panics: 1} // the first poll panics: the loop must go on
	p := newPublisher(t, c, func(o *Options) { o.MaxEvents = 5; o.EventTTL = time.Minute })
	evs.add("e1", "e2", "e3")
	p.Start(evs.source)
	prefix := testKeys.Events(testNode)
	messagesOf := func() (string, []string) {
		keys, values := list(t, c, prefix)
		var msgs []string
		for _, v := range values {
			var r EventRecord
			if err := json.Unmarshal([]byte(v), &r); err != nil {
				t.Fatalf("event %q: %v", v, err)
			}
			msgs = append(msgs, r.Message)
		}
		return strings.Join(msgs, ","), keys
	}
	eventually(t, slack, "3 events", func() (bool, string) {
		got, _ := messagesOf()
		return got == "e1,e2,e3", got
	})
	keys, values := list(t, c, prefix)
	var r EventRecord
	if err := json.Unmarshal([]byte(values[0]), &r); err != nil {
		t.Fatal(err)
	}
	if r.Node != testNode || r.Reason != "Started" || r.Pod != "web" || r.UID != "uid-web" || r.Container != "app" || r.Time.IsZero() {
		t.Errorf("event record = %+v", r)
	}
	for _, k := range keys {
		if len(strings.TrimPrefix(k, prefix)) != 19 {
			t.Errorf("event key %s: want 19 digits after %s", k, prefix)
		}
	}
	resp, err := c.Get(context.Background(), keys[0])
	if err != nil {
		t.Fatal(err)
	}
	ttl, err := c.TimeToLive(context.Background(), clientv3.LeaseID(resp.Kvs[0].Lease))
	if err != nil || ttl.GrantedTTL != 60 || ttl.TTL <= 0 {
		t.Errorf("event lease: granted %d s, left %d s, %v; want 60 s", ttl.GrantedTTL, ttl.TTL, err)
	}

	// Polls see the same list many times: nothing is written twice. Then
	// more than MaxEvents: only the newest 5 stay.
	evs.mu.Lock()
	calls := evs.calls
	evs.mu.Unlock()
	eventually(t, slack, "more polls", func() (bool, string) {
		evs.mu.Lock()
		defer evs.mu.Unlock()
		return evs.calls >= calls+5, fmt.Sprint(evs.calls, " calls")
	})
	if got, _ := messagesOf(); got != "e1,e2,e3" {
		t.Fatalf("events after more polls = %s, want e1,e2,e3", got)
	}
	evs.add("e4", "e5", "e6", "e7", "e8", "e9")
	eventually(t, slack, "the newest 5 events", func() (bool, string) {
		got, _ := messagesOf()
		return got == "e5,e6,e7,e8,e9", got
	})
}

// TestAttachToNode runs the Publisher on a node (fake runtime): a pod's
// status and events reach etcd, and the status goes once the pod is gone.
func TestAttachToNode(t *testing.T) {
	_, c := startEtcd(t)
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}))
	rt := fake.New(fake.AutoImages(true))
	t.Cleanup(rt.Close)
	pid, err := node.Spawn(sys.Root, node.Options{NodeName: testNode, Runtime: rt, HostSource: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := node.Stop(sys.Root, pid, 10*time.Second); err != nil {
			t.Errorf("stop node: %v", err)
		}
	})
	p := newPublisher(t, c, nil)
	p.Attach(sys.Root, pid)

	web := &v1.Pod{}
	web.Name = "web"
	web.Spec.TerminationGracePeriodSeconds = new(int64)
	web.Spec.Containers = []v1.Container{{Name: "app", Image: "x:1"}}
	setPods := func(pods ...*v1.Pod) {
		t.Helper()
		if _, err := sys.Root.RequestFuture(pid, &messages.SetHostPods{Pods: pods}, 5*time.Second).Result(); err != nil {
			t.Fatalf("SetHostPods: %v", err)
		}
	}
	setPods(web)
	key := testKeys.Status(testNode, "default", "web")
	eventually(t, slack, "web Running in etcd", func() (bool, string) {
		v, _, _ := get(t, c, key)
		d := statusOf(t, v)
		return d != nil && d.Status.Phase == v1.PodRunning, v
	})
	eventually(t, slack, "web's Started event in etcd", func() (bool, string) {
		_, values := list(t, c, testKeys.Events(testNode))
		for _, v := range values {
			if strings.Contains(v, `"reason":"Started"`) && strings.Contains(v, `"pod":"web"`) {
				return true, ""
			}
		}
		return false, fmt.Sprint(values)
	})
	setPods()
	eventually(t, slack, "web's status deleted", func() (bool, string) {
		v, _, found := get(t, c, key)
		return !found, v
	})

	// As `run --stop-pods-on-exit`: every pod stopped, then Stop at once.
	// The removal published last is written before Stop returns.
	setPods(web)
	eventually(t, slack, "web Running in etcd again", func() (bool, string) {
		v, _, _ := get(t, c, key)
		d := statusOf(t, v)
		return d != nil && d.Status.Phase == v1.PodRunning, v
	})
	if _, err := sys.Root.RequestFuture(pid, &messages.StopAllPods{}, slack).Result(); err != nil {
		t.Fatalf("StopAllPods: %v", err)
	}
	p.Stop(slack)
	if v, _, found := get(t, c, key); found {
		t.Errorf("web's status still in etcd after its pod stopped and Stop returned: %s", v)
	}
}

// The documented defaults: a 40 s heartbeat lease (the kubelet's node
// lease), events kept 1 h and at most 100 per node.
func TestOptionsDefaults(t *testing.T) {
	o := Options{Client: struct{ Client }{}, Node: "n1"}
	if err := o.setDefaults(); err != nil {
		t.Fatal(err)
	}
	if o.LeaseDuration != 40*time.Second || o.EventTTL != time.Hour || o.MaxEvents != 100 ||
		o.EventPollPeriod != 2*time.Second || o.RequestTimeout != 5*time.Second {
		t.Errorf("defaults: lease %s, event TTL %s, max events %d, poll %s, request timeout %s",
			o.LeaseDuration, o.EventTTL, o.MaxEvents, o.EventPollPeriod, o.RequestTimeout)
	}
}
