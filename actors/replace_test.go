package actors

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/internal/protocol"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// edgeProxy is issue 12's pod: grace 10 s, an app that traps SIGTERM and
// drains for 3 s (scripted on the fake), a host port, and a sidecar.
func edgeProxy(uid, env string) *v1.Pod {
	p := testPod("edge-proxy", uid, v1.RestartPolicyAlways, "proxy", "sidecar")
	grace := int64(10)
	p.Spec.TerminationGracePeriodSeconds = &grace
	p.Spec.Containers[0].Env = []v1.EnvVar{{Name: "MODE", Value: env}}
	p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 8080, HostPort: 18080, Protocol: v1.ProtocolTCP}}
	return p
}

// ofPod returns the IDs of the containers of pod uid now in rt, by name.
func ofPod(rt *fake.Runtime, uid string) map[string]string {
	out := map[string]string{}
	for _, c := range rt.Containers() {
		if c.Labels[runtimeadapter.LabelPodUID] == uid {
			out[c.ID] = c.Labels[runtimeadapter.LabelContainerName]
		}
	}
	return out
}

// replacement checks invariant 6 on the call log: no Create or Start of a
// container of pod newUID began before every container of the old pod
// (old: ID → name) was removed, and the old pod was stopped in its order:
// its apps with the pod's grace, its sandbox only once the apps had
// exited (drain: how long the app "proxy" takes after SIGTERM).
func checkReplacement(t *testing.T, rt *fake.Runtime, old map[string]string, newUID string, drain time.Duration) {
	t.Helper()
	var lastRemove, firstNew, sandboxStop, proxyStop time.Time
	prefix := newUID[:min(8, len(newUID))] // runtime names carry it
	removed := map[string]bool{}
	var log []string
	for _, c := range rt.Calls() {
		name, isOld := old[c.Arg]
		switch {
		case isOld && c.Method == fake.MethodRemove && c.Err == nil:
			removed[c.Arg] = true
			lastRemove = c.Time
		case isOld && c.Method == fake.MethodStop:
			if c.Grace != 10*time.Second {
				t.Errorf("old %s stopped with grace %v, want the pod's 10 s (from its labels)", name, c.Grace)
			}
			if name == runtimeadapter.SandboxName && sandboxStop.IsZero() {
				sandboxStop = c.Time
			}
			if name == "proxy" && proxyStop.IsZero() {
				proxyStop = c.Time
			}
		case c.Method == fake.MethodCreate && strings.Contains(c.Arg, "_"+prefix+"_") && firstNew.IsZero():
			firstNew = c.Time // a Start of it comes after
		}
		if isOld || strings.Contains(c.Arg, prefix) {
			log = append(log, fmt.Sprintf("%s %s %s", c.Time.Format("15:04:05.000"), c.Method, c.Arg))
		}
	}
	if len(removed) != len(old) {
		t.Fatalf("%d of the old pod's %d containers removed\n%s", len(removed), len(old), strings.Join(log, "\n"))
	}
	if firstNew.IsZero() || firstNew.Before(lastRemove) {
		t.Fatalf("invariant 6: the new pod's first container was created at %s, before the old pod's last container was removed at %s\n%s",
			firstNew.Format("15:04:05.000"), lastRemove.Format("15:04:05.000"), strings.Join(log, "\n"))
	}
	if proxyStop.IsZero() || sandboxStop.Sub(proxyStop) < drain {
		t.Fatalf("old sandbox stopped at %s, %v after its app proxy (which drains for %v): the apps first, then the sandbox\n%s",
			sandboxStop.Format("15:04:05.000"), sandboxStop.Sub(proxyStop), drain, strings.Join(log, "\n"))
	}
}

// Issue 12 #1: a pod edited while the agent was down (a new UID under the
// same name) is replaced in order after the restart: the old pod's apps
// stop first within its grace period (the proxy drains 3 s), then its
// sandbox, every container is removed, and only then is the new pod's
// sandbox created: never two instances of default/edge-proxy at once.
func TestEditWhileAgentDownReplacesInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("proxy", fake.Behavior{RunForever: true, TermDelay: 3 * time.Second})
		h := newHarness(t, rt)
		h.start()
		h.apply(edgeProxy("uid-old", "v1"))
		waitFor(t, 10*time.Second, "old pod running", func() bool {
			return len(rt.Running("uid-old", "proxy")) == 1 && len(rt.Running("uid-old", "sidecar")) == 1
		})
		h.stop()
		old := ofPod(rt, "uid-old")
		rt.ResetCalls()

		h2 := newHarness(t, rt)
		h2.start()
		h2.apply(edgeProxy("uid-new", "v2")) // the edited manifest
		waitFor(t, 60*time.Second, "new pod running, old pod gone", func() bool {
			return len(rt.Running("uid-new", "proxy")) == 1 && len(rt.Running("uid-new", "sidecar")) == 1 && len(ofPod(rt, "uid-old")) == 0
		})
		checkReplacement(t, rt, old, "uid-new", 3*time.Second)
		h2.stop()
		rt.Close()
	})
}

// The same when the old pod's actor fails (panics past its restart limit)
// while it removes the pod: the node removes the containers itself, in
// the pod's order, and the new pod still waits for them.
func TestReplacementWaitsForAbandonedRemoval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var removing atomic.Bool
		hook := func(uid types.UID, msg any) {
			if uid != "uid-old" {
				return
			}
			if _, ok := msg.(*protocol.PodRemoved); ok {
				removing.Store(true)
			}
			switch msg.(type) {
			case *actor.Stopping, *actor.Stopped, *actor.Restarting:
				return // a panic there is no test of anything
			}
			if removing.Load() {
				panic("boom while removing")
			}
		}
		podReceiveHook.Store(&hook)
		defer podReceiveHook.Store(nil)

		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("proxy", fake.Behavior{RunForever: true, TermDelay: 3 * time.Second})
		h := newHarness(t, rt)
		h.start()
		h.apply(edgeProxy("uid-old", "v1"))
		waitFor(t, 10*time.Second, "old pod running", func() bool {
			return len(rt.Running("uid-old", "proxy")) == 1 && len(rt.Running("uid-old", "sidecar")) == 1
		})
		old := ofPod(rt, "uid-old")
		rt.ResetCalls()
		h.apply(edgeProxy("uid-new", "v2"))
		waitFor(t, 120*time.Second, "new pod running, old pod gone", func() bool {
			return len(rt.Running("uid-new", "proxy")) == 1 && len(rt.Running("uid-new", "sidecar")) == 1 && len(ofPod(rt, "uid-old")) == 0
		})
		if !removing.Load() {
			t.Fatal("the old pod's actor never got its removal")
		}
		checkReplacement(t, rt, old, "uid-new", 3*time.Second)
		h.stop()
		rt.Close()
	})
}

// Two sources, one name, after a restart: source b (synced first) now
// defines the pod under a new UID, while source a, not synced yet, may
// still want the old one. The new pod waits for the old instance; when a
// syncs wanting it, a wins (the first source by name) and the old pod is
// adopted: nothing is stopped, created or started.
func TestUnsyncedSourceKeepsOldInstance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		h := newHarness(t, rt)
		h.start()
		h.apply(edgeProxy("uid-old", "v1"))
		waitFor(t, 10*time.Second, "old pod running", func() bool { return len(rt.Running("uid-old", "proxy")) == 1 })
		h.stop()
		rt.ResetCalls()

		a, b := newChanSource("a-src"), newChanSource("b-src")
		h2 := newHarness(t, rt)
		h2.pid = h2.sys.Root.Spawn(NodeProps(h2.cfg, a, b))
		b.send([]*v1.Pod{edgeProxy("uid-new", "v2")})
		time.Sleep(10 * time.Second) // ten relists
		synctest.Wait()
		for _, c := range rt.Calls() {
			switch c.Method {
			case fake.MethodCreate, fake.MethodStart, fake.MethodStop, fake.MethodRemove:
				t.Fatalf("%s %s while source a has not synced: the old instance may still be wanted", c.Method, c.Arg)
			}
		}
		a.send([]*v1.Pod{edgeProxy("uid-old", "v1")})
		time.Sleep(10 * time.Second)
		synctest.Wait()
		for _, c := range rt.Calls() {
			switch c.Method {
			case fake.MethodCreate, fake.MethodStart, fake.MethodStop, fake.MethodRemove:
				t.Fatalf("%s %s: source a wants the running instance", c.Method, c.Arg)
			}
		}
		if len(rt.Running("uid-old", "proxy")) != 1 {
			t.Fatal("the old instance no longer runs")
		}
		h2.stop()
		rt.Close()
	})
}

// A pod moved from one source to another while the agent was down (a new
// UID: the source is part of it) is replaced in order too.
func TestMoveBetweenSourcesWhileDownReplacesInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("proxy", fake.Behavior{RunForever: true, TermDelay: 3 * time.Second})
		a, b := newChanSource("a-src"), newChanSource("b-src")
		h := newHarness(t, rt)
		h.pid = h.sys.Root.Spawn(NodeProps(h.cfg, a, b))
		a.send([]*v1.Pod{edgeProxy("uid-a", "v1")})
		b.send(nil)
		waitFor(t, 10*time.Second, "pod running", func() bool { return len(rt.Running("uid-a", "proxy")) == 1 })
		h.stop()
		old := ofPod(rt, "uid-a")
		rt.ResetCalls()

		a2, b2 := newChanSource("a-src"), newChanSource("b-src")
		h2 := newHarness(t, rt)
		h2.pid = h2.sys.Root.Spawn(NodeProps(h2.cfg, a2, b2))
		b2.send([]*v1.Pod{edgeProxy("uid-b", "v1")})
		a2.send(nil)
		waitFor(t, 60*time.Second, "moved pod running, old pod gone", func() bool {
			return len(rt.Running("uid-b", "proxy")) == 1 && len(ofPod(rt, "uid-a")) == 0
		})
		checkReplacement(t, rt, old, "uid-b", 3*time.Second)
		h2.stop()
		rt.Close()
	})
}
