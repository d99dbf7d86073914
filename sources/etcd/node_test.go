package etcd

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap/zaptest"

	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/node"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
	"github.com/actorlet/actorlet/sources"
	"github.com/actorlet/actorlet/test/support/etcdtest"
)

// TestNodeHealthShowsUnreachableEtcd runs a node (on the fake runtime)
// fed by the etcd source: while etcd is unreachable the node's health
// shows the source failing, and its pod stays desired.
func TestNodeHealthShowsUnreachableEtcd(t *testing.T) {
	srv, c := startEtcd(t)
	proxy := etcdtest.NewProxy(t, srv.Endpoint())
	put(t, c, testKeys.Pod(testNode, "default", "web"), podYAML("web", "nginx:1"))
	src, err := New(etcdtest.NewClient(t, proxy.Endpoint()), testKeys, testNode,
		WithLogger(zaptest.NewLogger(t)), WithProbePeriod(testProbePeriod), WithRequestTimeout(testRequestTimeout))
	if err != nil {
		t.Fatal(err)
	}
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}))
	rt := fake.New(fake.AutoImages(true))
	t.Cleanup(rt.Close)
	pid, err := node.Spawn(sys.Root, node.Options{NodeName: testNode, Runtime: rt, Sources: []sources.Source{src}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := node.Stop(sys.Root, pid, 10*time.Second); err != nil {
			t.Errorf("stop node: %v", err)
		}
	})

	check := func() (messages.HealthCheck, []string) {
		res, err := sys.Root.RequestFuture(pid, &messages.GetHealth{}, 5*time.Second).Result()
		if err != nil {
			t.Fatalf("GetHealth: %v", err)
		}
		var found messages.HealthCheck
		for _, c := range res.(*messages.NodeHealth).Checks {
			if c.Name == "source "+src.Name() {
				found = c
			}
		}
		res, err = sys.Root.RequestFuture(pid, &messages.GetPodStatuses{}, 5*time.Second).Result()
		if err != nil {
			t.Fatalf("GetPodStatuses: %v", err)
		}
		var pods []string
		for _, p := range res.(*messages.PodStatuses).Pods {
			pods = append(pods, p.Namespace+"/"+p.Name)
		}
		return found, pods
	}
	waitHealth := func(what string, ok func(messages.HealthCheck, []string) bool) {
		t.Helper()
		deadline := time.Now().Add(recoverSlack)
		for {
			c, pods := check()
			if ok(c, pods) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s within %v; source check %+v, pods %v", what, recoverSlack, c, pods)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	hasWeb := func(pods []string) bool { return fmt.Sprint(pods) == "[default/web]" }

	waitHealth("synced source with web", func(c messages.HealthCheck, pods []string) bool {
		return c.OK && c.Message == "synced" && hasWeb(pods)
	})
	proxy.SetDown(true)
	waitHealth("failing source keeping web", func(c messages.HealthCheck, pods []string) bool {
		if !hasWeb(pods) {
			t.Fatalf("the node lost web while etcd is unreachable: pods %v", pods)
		}
		return !c.OK && strings.Contains(c.Message, "failing, keeping its last set: etcd /actorlet/nodes/node-1/pods/: ")
	})
	proxy.SetDown(false)
	waitHealth("healthy source again", func(c messages.HealthCheck, pods []string) bool {
		return c.OK && hasWeb(pods)
	})
}
