// Package faults tests actorlet against real Docker through a
// fault-injecting proxy on the Docker socket (test/support/dockerproxy): the
// daemon unreachable, slow, hung for one pod, and its event stream broken
// or silent.
// Each test runs a node actor tree in this process on its own node name,
// talking to Docker only through the proxy; the test looks at Docker
// directly, and removes the node's containers at the end.
//
// The tests need Docker: without it they skip, or fail when CI=true (see
// test/support/testimages).
package faults

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/docker"
	"github.com/actorlet/actorlet/supervision"
	"github.com/actorlet/actorlet/test/support/dockerproxy"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// Timing. Deadlines leave room for a loaded machine; nothing sleeps to
// wait, everything polls.
const (
	pollInterval   = 50 * time.Millisecond
	podUpTimeout   = 60 * time.Second // a new pod's sandbox and app running
	convergeWithin = 45 * time.Second // after the faults clear
	dockerTimeout  = 60 * time.Second // one direct Docker call of the test
	askTimeout     = 5 * time.Second  // one question to the node actor
	// outageHold is how long a fault is held while the test checks that
	// nothing is created or killed.
	outageHold = 3 * time.Second
)

// env is one test's node: its own node name, a proxy to Docker, the node
// actor tree talking to Docker through the proxy, and a direct runtime for
// looking and for outside actions (kills, cleanup).
type env struct {
	t      *testing.T
	node   string
	direct *docker.Runtime
	proxy  *dockerproxy.Proxy
	sys    *actor.ActorSystem
	pid    *actor.PID
	logs   *observer.ObservedLogs
}

// newEnv marks the test parallel, builds the test images, and starts a
// node named prefix-<random> whose runtime goes through a new proxy.
// tune adjusts the actors.Config (timeouts, periods) before the node
// starts. At test end the node stops, the proxy closes and the node's
// containers are removed (in that order); the node's log is printed if
// the test failed.
func newEnv(t *testing.T, prefix string, tune func(*actors.Config)) *env {
	t.Parallel()
	direct := testimages.EnsureTestImages(t)
	e := &env{t: t, node: testimages.NodeName(prefix), direct: direct}
	testimages.CleanupNode(t, direct, e.node) // registered first: runs last, with the direct runtime

	p, err := dockerproxy.Start(t, "") // DOCKER_HOST, as the direct runtime
	if err != nil {
		t.Fatal(err)
	}
	e.proxy = p
	rt, err := docker.New(docker.WithHost(p.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	// The pause image is reachable through the proxy. (docker.New has
	// negotiated the API version already: see its doc.)
	ctx, cancel := context.WithTimeout(context.Background(), dockerTimeout)
	defer cancel()
	if ok, err := rt.ImageExists(ctx, testimages.PauseTag); err != nil || !ok {
		t.Fatalf("pause image through the proxy: %v, %v", ok, err)
	}

	core, logs := observer.New(zapcore.DebugLevel)
	e.logs = logs
	cfg := actors.Config{
		NodeName:      e.node,
		Runtime:       rt,
		PodInfraImage: testimages.PauseTag,
		HostSource:    true,
		RelistPeriod:  time.Second,
		// Restart a dead container soon: the tests wait for replacements.
		Backoff: supervision.BackoffPolicy{Initial: 500 * time.Millisecond, Max: time.Second},
		Spec:    podsync.SpecOptions{RootDir: t.TempDir()},
		Logger:  zap.New(core),
	}
	if tune != nil {
		tune(&cfg)
	}
	e.sys = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}))
	e.pid, err = e.sys.Root.SpawnNamed(actors.NodeProps(cfg), "node-"+e.node)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Clear() // hung calls go on, and end within their deadlines
		if err := actors.StopNode(e.sys.Root, e.pid, 10*time.Second); err != nil {
			t.Errorf("stop node: %v", err)
		}
		if t.Failed() {
			e.dumpLogs()
		}
	})
	t.Logf("node %s, proxy %s", e.node, p.Addr())
	return e
}

// dumpLogs prints the node's log and the proxy's request log.
func (e *env) dumpLogs() {
	var b strings.Builder
	for _, l := range e.logs.All() {
		fmt.Fprintf(&b, "%s %-5s %s: %s", l.Time.Format("15:04:05.000"), l.Level, l.LoggerName, l.Message)
		for k, v := range l.ContextMap() {
			fmt.Fprintf(&b, " %s=%v", k, v)
		}
		b.WriteByte('\n')
	}
	e.t.Logf("node log:\n%s", b.String())
	b.Reset()
	for _, r := range e.proxy.Requests() {
		q, _ := url.QueryUnescape(r.RawQuery)
		fmt.Fprintf(&b, "%s %s %s?%s rule=%d %s\n", r.Time.Format("15:04:05.000"), r.Method, r.Path, q, r.Rule, r.Fault)
	}
	e.t.Logf("proxy requests:\n%s", b.String())
}

// pod is a pod of one "app" container running the test workload (which
// runs until stopped), with a 1 s grace period.
func pod(name string) *v1.Pod {
	grace := int64(1)
	p := &v1.Pod{}
	p.Name, p.Namespace = name, "default"
	p.Spec.TerminationGracePeriodSeconds = &grace
	p.Spec.Containers = []v1.Container{{Name: "app", Image: testimages.TestWorkloadTag, ImagePullPolicy: v1.PullNever}}
	return p
}

// setPods feeds the node its complete set of pods (which also makes it
// relist at once) and returns their UIDs.
func (e *env) setPods(pods ...*v1.Pod) []types.UID {
	e.t.Helper()
	res, err := e.sys.Root.RequestFuture(e.pid, &messages.SetHostPods{Pods: pods}, askTimeout).Result()
	if err != nil {
		e.t.Fatalf("SetHostPods: %v", err)
	}
	var uids []types.UID
	for i, r := range res.(*messages.SetHostPodsResult).Results {
		if r.Err != nil {
			e.t.Fatalf("SetHostPods: pod %s: %v", pods[i].Name, r.Err)
		}
		uids = append(uids, r.UID)
	}
	return uids
}

// runtimeCheck is the node's "runtime" health check.
func (e *env) runtimeCheck() messages.HealthCheck {
	e.t.Helper()
	res, err := e.sys.Root.RequestFuture(e.pid, &messages.GetHealth{}, askTimeout).Result()
	if err != nil {
		e.t.Fatalf("GetHealth: %v", err)
	}
	for _, c := range res.(*messages.NodeHealth).Checks {
		if c.Name == "runtime" {
			return c
		}
	}
	e.t.Fatal("GetHealth: no runtime check")
	return messages.HealthCheck{}
}

// podPhase is the phase the node reports for a pod.
func (e *env) podPhase(uid types.UID) v1.PodPhase {
	e.t.Helper()
	res, err := e.sys.Root.RequestFuture(e.pid, &messages.GetPodStatuses{}, askTimeout).Result()
	if err != nil {
		e.t.Fatalf("GetPodStatuses: %v", err)
	}
	for _, p := range res.(*messages.PodStatuses).Pods {
		if p.UID == uid {
			return p.Status.Phase
		}
	}
	return ""
}

// containers lists the node's containers of pod uid named name (the
// io.actorlet.container.name label; "POD" for the sandbox), straight from
// Docker; running only unless all.
func (e *env) containers(uid types.UID, name string, all bool) []runtimeadapter.Container {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), dockerTimeout)
	defer cancel()
	res, err := e.direct.List(ctx, runtimeadapter.ListOptions{Node: e.node, PodUID: string(uid), All: true})
	if err != nil {
		e.t.Fatalf("list containers: %v", err)
	}
	var out []runtimeadapter.Container
	for _, c := range res.Containers {
		if c.Labels[runtimeadapter.LabelContainerName] == name && (all || c.State == runtimeadapter.StateRunning) {
			out = append(out, c)
		}
	}
	return out
}

// waitRunning waits until pod uid has exactly one running container named
// name whose ID is not in not, and returns it.
func (e *env) waitRunning(timeout time.Duration, uid types.UID, name string, not ...string) runtimeadapter.Container {
	e.t.Helper()
	var got runtimeadapter.Container
	eventually(e.t, timeout, fmt.Sprintf("pod %s: one running %s container", short(uid), name), func() (bool, string) {
		cs := e.containers(uid, name, false)
		if len(cs) != 1 {
			return false, fmt.Sprintf("%d running", len(cs))
		}
		for _, id := range not {
			if cs[0].ID == id {
				return false, "the old container " + short(id) + " still runs"
			}
		}
		got = cs[0]
		return true, ""
	})
	return got
}

// waitSettled waits until pod uid runs, the node reports it Running (so
// its pod actor has seen its containers running), and no runtime call is
// in flight but the event stream: a fault injected now does not catch a
// sync half-way.
func (e *env) waitSettled(timeout time.Duration, uid types.UID) runtimeadapter.Container {
	e.t.Helper()
	app := e.waitRunning(timeout, uid, "app")
	eventually(e.t, timeout, fmt.Sprintf("pod %s to settle", short(uid)), func() (bool, string) {
		ph := e.podPhase(uid)
		busy := e.proxy.InFlight("") - e.proxy.InFlight("GET /events")
		return ph == v1.PodRunning && busy == 0, fmt.Sprintf("phase %s, %d calls in flight", ph, busy)
	})
	return app
}

// requireConverged waits for the node to report pod uid Running, then
// checks that every container of its spec and its sandbox run exactly
// once, under the right labels.
func (e *env) requireConverged(uid types.UID) {
	e.t.Helper()
	eventually(e.t, askTimeout, fmt.Sprintf("pod %s reported Running", short(uid)), func() (bool, string) {
		ph := e.podPhase(uid)
		return ph == v1.PodRunning, fmt.Sprintf("phase %s", ph)
	})
	for _, name := range []string{runtimeadapter.SandboxName, "app"} {
		cs := e.containers(uid, name, false)
		if len(cs) != 1 {
			e.t.Fatalf("pod %s: %d running %s containers, want exactly 1: %+v", short(uid), len(cs), name, cs)
		}
		if l := cs[0].Labels; l[runtimeadapter.LabelPodUID] != string(uid) || l[runtimeadapter.LabelContainerName] != name ||
			l[runtimeadapter.LabelNode] != e.node {
			e.t.Fatalf("pod %s: container %s has labels %v", short(uid), cs[0].Name, l)
		}
	}
}

// kill kills a container from outside actorlet, straight on Docker.
func (e *env) kill(id string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), dockerTimeout)
	defer cancel()
	if err := e.direct.Stop(ctx, id, 0); err != nil {
		e.t.Fatalf("kill %s: %v", short(id), err)
	}
}

// mutations counts the requests that change containers: create, start,
// stop, kill, restart, remove.
func (e *env) mutations() int {
	n := 0
	for _, p := range []string{"POST /containers/create", "POST /containers/*/start", "POST /containers/*/stop",
		"POST /containers/*/kill", "POST /containers/*/restart", "DELETE /containers/*"} {
		n += e.proxy.Count(p)
	}
	return n
}

// plegLists counts the PLEG's lists: lists of the whole node, not of one
// pod (the pod actors' own lists filter on the pod UID label too).
func (e *env) plegLists() int {
	n := 0
	for _, r := range e.proxy.Requests() {
		if r.Method != "GET" || r.Path != "/containers/json" {
			continue
		}
		if q, _ := url.QueryUnescape(r.RawQuery); !strings.Contains(q, runtimeadapter.LabelPodUID) {
			n++
		}
	}
	return n
}

// plegListTimes says when the PLEG's lists that rule faulted came, from
// the first one on: "0s, 194ms, 2.2s" (backing off).
func (e *env) plegListTimes(rule dockerproxy.RuleID) string {
	var first time.Time
	var out []string
	for _, r := range e.proxy.Requests() {
		q, _ := url.QueryUnescape(r.RawQuery)
		if r.Rule != rule || r.Path != "/containers/json" || strings.Contains(q, runtimeadapter.LabelPodUID) {
			continue
		}
		if first.IsZero() {
			first = r.Time
		}
		out = append(out, r.Time.Sub(first).Round(time.Millisecond).String())
	}
	return strings.Join(out, ", ")
}

// waitHealthy waits for the runtime check to pass.
func (e *env) waitHealthy(timeout time.Duration) {
	e.t.Helper()
	eventually(e.t, timeout, "the runtime check to pass", func() (bool, string) {
		c := e.runtimeCheck()
		return c.OK, c.Message
	})
}

// TestDockerUnreachable: every list fails (500, or the connection dropped)
// for a while, and a container dies meanwhile. actorlet reports the
// runtime unhealthy, creates and kills nothing, and keeps retrying; once
// lists work again it converges: the dead container is replaced once.
func TestDockerUnreachable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault dockerproxy.Fault
	}{
		{"error 500", dockerproxy.Error(500, "injected: daemon unreachable")},
		{"connection dropped", dockerproxy.Drop()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "t-faults-down", nil)
			uid := e.setPods(pod("web"))[0]
			first := e.waitSettled(podUpTimeout, uid)
			e.waitHealthy(podUpTimeout)

			before := e.mutations()
			outage := e.proxy.Add(dockerproxy.Rule{Method: "GET", Path: "/containers/json", Fault: tc.fault})
			e.setPods(pod("web")) // the same set: relist now
			eventually(t, 15*time.Second, "the runtime check to fail", func() (bool, string) {
				c := e.runtimeCheck()
				return !c.OK, c.Message
			})
			t.Logf("runtime check while lists fail: %s", e.runtimeCheck().Message)
			lists := e.proxy.Hits(outage)
			e.kill(first.ID) // actorlet would replace it, if it could list
			consistently(t, outageHold, "no create, start, stop or remove while lists fail", func() (bool, string) {
				if m := e.mutations(); m != before {
					return false, fmt.Sprintf("%d container-changing requests", m-before)
				}
				if c := e.runtimeCheck(); c.OK {
					return false, "the runtime check passes"
				}
				return true, ""
			})
			if e.proxy.Hits(outage) <= lists {
				t.Errorf("no list was retried during the outage (%d failed lists)", lists)
			}
			if n := len(e.containers(uid, "app", false)); n != 0 {
				t.Fatalf("%d running app containers during the outage, want 0 (the dead one not replaced)", n)
			}
			t.Logf("failed PLEG lists at %s", e.plegListTimes(outage))

			e.proxy.Clear()
			next := e.waitRunning(convergeWithin, uid, "app", first.ID)
			e.waitHealthy(convergeWithin)
			e.requireConverged(uid)
			if n := len(e.containers(uid, "app", true)); n != 2 {
				t.Errorf("%d app containers, want 2: the killed one and one replacement", n)
			}
			if rc := next.Labels[runtimeadapter.LabelRestartCount]; rc != "1" {
				t.Errorf("replacement has restart count %s, want 1", rc)
			}
		})
	}
}

// TestListOutageMidSync: lists start failing while a pod's first sync is
// between starting its app container and listing the pod's containers
// back, and the app container dies during the outage. Once lists work
// again the dead container is replaced by a new one (attempt 1, restart
// count 1) after its CrashLoopBackOff. (The bug this found: the pod actor,
// whose own list had failed, planned from the set it held from before the
// start, created attempt 0 again, hit the name conflict and "adopted" the
// exited container, starting it in place: the exit was lost. Now a pod
// actor lists before planning after a failed list or an outage, and never
// starts an instance that already ran.)
func TestListOutageMidSync(t *testing.T) {
	e := newEnv(t, "t-faults-midsync", nil)
	hold := e.proxy.Add(dockerproxy.Rule{Method: "POST", Path: "/containers/{id}/start", Container: "actorlet_app_mid_", Fault: dockerproxy.Hang()})
	uid := e.setPods(pod("mid"))[0]
	eventually(t, podUpTimeout, "the app container's start to be held", func() (bool, string) {
		return e.proxy.Hits(hold) == 1, fmt.Sprintf("%d hits", e.proxy.Hits(hold))
	})
	e.proxy.Add(dockerproxy.Rule{Method: "GET", Path: "/containers/json", Fault: dockerproxy.Error(500, "injected: daemon unreachable")})
	e.proxy.Remove(hold) // the start goes through; the list after it fails
	app := e.waitRunning(podUpTimeout, uid, "app")
	eventually(t, 15*time.Second, "the runtime check to fail", func() (bool, string) {
		c := e.runtimeCheck()
		return !c.OK, c.Message
	})
	e.kill(app.ID)
	before := e.mutations()
	consistently(t, outageHold, "no create, start, stop or remove while lists fail", func() (bool, string) {
		m := e.mutations()
		return m == before, fmt.Sprintf("%d container-changing requests", m-before)
	})
	e.proxy.Clear()
	next := e.waitRunning(convergeWithin, uid, "app", app.ID)
	if rc := next.Labels[runtimeadapter.LabelRestartCount]; rc != "1" {
		t.Errorf("replacement has restart count %s, want 1", rc)
	}
	e.requireConverged(uid)
}

// TestHungInspectStallsOnlyItsPod: the inspect of pod a's app container
// hangs (as Docker's inspect does while the daemon holds the container's
// lock, e.g. during a slow start). As issue 6 says of a hung inspect, it
// stalls only pod a, never the relist or other pods: the PLEG's List gives
// that inspect its own deadline and reports a's container from the list
// alone, so relists succeed, the runtime check passes, and pod b's
// container, killed from outside meanwhile, is replaced.
func TestHungInspectStallsOnlyItsPod(t *testing.T) {
	e := newEnv(t, "t-faults-inspect", func(c *actors.Config) { c.ListTimeout = 2 * time.Second })
	uids := e.setPods(pod("b"))
	b := uids[0]
	bApp := e.waitSettled(podUpTimeout, b)
	hang := e.proxy.Add(dockerproxy.Rule{Method: "GET", Path: "/containers/{id}/json", Container: "actorlet_app_a_", Fault: dockerproxy.Hang()})
	a := e.setPods(pod("a"), pod("b"))[0]
	e.waitRunning(podUpTimeout, a, "app")
	eventually(t, podUpTimeout, "an inspect of a's app container to hang", func() (bool, string) {
		return e.proxy.Hits(hang) >= 1, fmt.Sprintf("%d hits", e.proxy.Hits(hang))
	})
	e.kill(bApp.ID)
	e.waitRunning(15*time.Second, b, "app", bApp.ID)
	if c := e.runtimeCheck(); !c.OK {
		t.Errorf("runtime check failing while one inspect hangs: %s", c.Message)
	}
}

// TestHungCallStallsOnlyItsPod: the create of pod a's app container hangs
// (then its stop, when a is removed). Pod b (then c) comes up meanwhile,
// the PLEG keeps relisting, and the hung call gives up at RuntimeTimeout
// and is retried. Once the daemon answers, a converges (then terminates)
// without a duplicate, and b is never touched.
func TestHungCallStallsOnlyItsPod(t *testing.T) {
	const runtimeTimeout = 5 * time.Second
	e := newEnv(t, "t-faults-hang", func(c *actors.Config) {
		c.RuntimeTimeout = runtimeTimeout
		c.EventRelistPeriod = 2 * time.Second
	})
	hang := e.proxy.Add(dockerproxy.Rule{Method: "POST", Path: "/containers/create", Container: "actorlet_app_a_", Fault: dockerproxy.Hang()})
	uids := e.setPods(pod("a"), pod("b"))
	a, b := uids[0], uids[1]

	bApp := e.waitRunning(podUpTimeout, b, "app")
	eventually(t, podUpTimeout, "pod a's create to hang", func() (bool, string) {
		return e.proxy.Hits(hang) >= 1, fmt.Sprintf("%d hits", e.proxy.Hits(hang))
	})
	lists := e.plegLists()
	eventually(t, 15*time.Second, "the PLEG to relist twice while a's create hangs", func() (bool, string) {
		n := e.plegLists()
		return n >= lists+2, fmt.Sprintf("%d relists since", n-lists)
	})
	eventually(t, runtimeTimeout+10*time.Second, "the hung create to give up at its deadline and be retried", func() (bool, string) {
		return e.proxy.Hits(hang) >= 2, fmt.Sprintf("%d hits", e.proxy.Hits(hang))
	})
	if n := len(e.containers(a, "app", true)); n != 0 {
		t.Fatalf("pod a has %d app containers while its create hangs", n)
	}
	if c := e.runtimeCheck(); !c.OK {
		t.Errorf("runtime check failing while only a create hangs: %s", c.Message)
	}

	e.proxy.Remove(hang) // the daemon answers again
	e.waitRunning(convergeWithin, a, "app")
	e.requireConverged(a)
	e.requireConverged(b)
	if n := len(e.containers(a, "app", true)); n != 1 {
		t.Errorf("pod a has %d app containers, want exactly 1", n)
	}

	// Now a stop hangs: pod a is removed while pod c is added.
	stop := e.proxy.Add(dockerproxy.Rule{Method: "POST", Path: "/containers/{id}/stop", Container: "actorlet_app_a_", Fault: dockerproxy.Hang()})
	c := e.setPods(pod("b"), pod("c"))[1]
	eventually(t, podUpTimeout, "pod a's stop to hang", func() (bool, string) {
		return e.proxy.Hits(stop) >= 1, fmt.Sprintf("%d hits", e.proxy.Hits(stop))
	})
	e.waitRunning(podUpTimeout, c, "app")
	lists = e.plegLists()
	eventually(t, 15*time.Second, "the PLEG to relist twice while a's stop hangs", func() (bool, string) {
		n := e.plegLists()
		return n >= lists+2, fmt.Sprintf("%d relists since", n-lists)
	})
	if n := len(e.containers(a, "app", false)); n != 1 {
		t.Errorf("pod a has %d running app containers while its stop hangs, want 1", n)
	}
	e.proxy.Remove(stop)
	eventually(t, convergeWithin, "pod a's containers to be removed", func() (bool, string) {
		n := len(e.containers(a, "app", true)) + len(e.containers(a, runtimeadapter.SandboxName, true))
		return n == 0, fmt.Sprintf("%d left", n)
	})
	e.requireConverged(c)
	e.requireConverged(b)
	if got := e.containers(b, "app", true); len(got) != 1 || got[0].ID != bApp.ID {
		t.Errorf("pod b's app containers %+v, want only the first one, %s", got, short(bApp.ID))
	}
}

// TestSlowList: lists take longer than ListTimeout, so they fail at their
// deadline: the runtime is unhealthy and nothing is created or killed,
// though a container died. Once lists are fast again, actorlet converges.
func TestSlowList(t *testing.T) {
	e := newEnv(t, "t-faults-slow", func(c *actors.Config) { c.ListTimeout = time.Second })
	uid := e.setPods(pod("slow"))[0]
	first := e.waitSettled(podUpTimeout, uid)
	e.waitHealthy(podUpTimeout)

	before := e.mutations()
	slow := e.proxy.Add(dockerproxy.Rule{Method: "GET", Path: "/containers/json", Fault: dockerproxy.Delay(3 * time.Second)})
	e.setPods(pod("slow")) // relist now
	eventually(t, 15*time.Second, "the runtime check to fail with a deadline error", func() (bool, string) {
		c := e.runtimeCheck()
		return !c.OK && strings.Contains(c.Message, "deadline exceeded"), c.Message
	})
	e.kill(first.ID)
	consistently(t, outageHold, "no create, start, stop or remove while lists time out", func() (bool, string) {
		if m := e.mutations(); m != before {
			return false, fmt.Sprintf("%d container-changing requests", m-before)
		}
		if c := e.runtimeCheck(); c.OK {
			return false, "the runtime check passes"
		}
		return true, ""
	})
	if n := len(e.containers(uid, "app", false)); n != 0 {
		t.Fatalf("%d running app containers while lists time out, want 0", n)
	}
	t.Logf("%d slow lists", e.proxy.Hits(slow))

	e.proxy.Clear()
	next := e.waitRunning(convergeWithin, uid, "app", first.ID)
	e.waitHealthy(convergeWithin)
	e.requireConverged(uid)
	if rc := next.Labels[runtimeadapter.LabelRestartCount]; rc != "1" {
		t.Errorf("replacement has restart count %s, want 1", rc)
	}
}

// TestEventStreamBroken: the event stream breaks and the first
// resubscription is dropped. actorlet resubscribes, and a container killed
// from outside afterwards is replaced at once: by its death's event, since
// the safety-net relist is a minute away.
func TestEventStreamBroken(t *testing.T) {
	e := newEnv(t, "t-faults-events", func(c *actors.Config) { c.EventRelistPeriod = time.Minute })
	uid := e.setPods(pod("ev"))[0]
	first := e.waitSettled(podUpTimeout, uid)
	eventually(t, podUpTimeout, "the event stream to be subscribed", func() (bool, string) {
		n := e.proxy.Responding("GET /events")
		return n == 1, fmt.Sprintf("%d streams", n)
	})
	subs := e.proxy.Count("/events")

	drop := e.proxy.Add(dockerproxy.Rule{Path: "/events", Fault: dockerproxy.Drop(), Times: 1})
	if n := e.proxy.Abort("/events"); n != 1 {
		t.Fatalf("broke %d event streams, want 1", n)
	}
	eventually(t, 20*time.Second, "actorlet to resubscribe", func() (bool, string) {
		n, hits, up := e.proxy.Count("/events")-subs, e.proxy.Hits(drop), e.proxy.Responding("/events")
		return n >= 2 && hits == 1 && up == 1, fmt.Sprintf("%d new subscriptions, %d dropped, %d streaming", n, hits, up)
	})
	if n := e.logs.FilterMessageSnippet("event stream broken").Len(); n == 0 {
		t.Error("actorlet did not log that the event stream broke")
	} else {
		t.Logf("actorlet saw the event stream break %d times (a dropped resubscription on a reused connection is retried by Go's HTTP client)", n)
	}

	e.kill(first.ID)
	e.waitRunning(15*time.Second, uid, "app", first.ID)
	e.requireConverged(uid)
	if n := e.proxy.Count("/events") - subs; n < 2 {
		t.Errorf("%d subscriptions after the break, want at least 2", n)
	}
}

// healthCheck is the node's health check called name.
func (e *env) healthCheck(name string) (messages.HealthCheck, bool) {
	e.t.Helper()
	res, err := e.sys.Root.RequestFuture(e.pid, &messages.GetHealth{}, askTimeout).Result()
	if err != nil {
		e.t.Fatalf("GetHealth: %v", err)
	}
	for _, c := range res.(*messages.NodeHealth).Checks {
		if c.Name == name {
			return c, true
		}
	}
	return messages.HealthCheck{}, false
}

// plegListsSince returns when the PLEG's lists (see plegLists) reached
// the proxy, from since on.
func (e *env) plegListsSince(since time.Time) []time.Time {
	var out []time.Time
	for _, r := range e.proxy.Requests() {
		q, _ := url.QueryUnescape(r.RawQuery)
		if r.Method == "GET" && r.Path == "/containers/json" && !strings.Contains(q, runtimeadapter.LabelPodUID) && !r.Time.Before(since) {
			out = append(out, r.Time)
		}
	}
	return out
}

// TestEventStreamSilent: the event stream stays open and delivers nothing
// (the proxy mutes it). A container killed from outside is found by the
// 5 s safety-net relist; 2 s later the "event stream" check fails, the
// stream is replaced by a new subscription and the PLEG relists every
// 1 s. A death the new stream reports confirms it: the check passes and
// the safety net is every 5 s again.
func TestEventStreamSilent(t *testing.T) {
	e := newEnv(t, "t-faults-silent", nil) // relist 1 s, safety net 5 s (the defaults)
	never := func(name string, containers ...string) *v1.Pod {
		p := pod(name)
		p.Spec.RestartPolicy = v1.RestartPolicyNever
		p.Spec.Containers = nil
		for _, c := range containers {
			p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: c, Image: testimages.TestWorkloadTag, ImagePullPolicy: v1.PullNever})
		}
		return p
	}
	// a keeps a second container, so its app's death leads to no action.
	uids := e.setPods(never("a", "app", "keep"), never("b", "app"))
	appA, appB := e.waitSettled(podUpTimeout, uids[0]), e.waitSettled(podUpTimeout, uids[1])
	eventually(t, podUpTimeout, "the event stream check to pass", func() (bool, string) {
		c, _ := e.healthCheck("event stream")
		return c.OK, c.Message
	})

	// The stream breaks, and the one that replaces it is muted.
	mute := e.proxy.Add(dockerproxy.Rule{Path: "/events", Fault: dockerproxy.Mute(), Times: 1})
	if n := e.proxy.Abort("/events"); n != 1 {
		t.Fatalf("broke %d event streams, want 1", n)
	}
	var muted time.Time
	eventually(t, 20*time.Second, "actorlet to resubscribe to a muted stream", func() (bool, string) {
		for _, r := range e.proxy.Requests() {
			if r.Rule == mute {
				muted = r.Time
			}
		}
		c, _ := e.healthCheck("event stream")
		up := e.proxy.Responding("/events")
		return !muted.IsZero() && up == 1 && c.OK, fmt.Sprintf("muted %v, %d streaming, check %+v", !muted.IsZero(), up, c)
	})
	// A broken stream's successor is trusted: nothing says it is silent
	// until it misses a change, which counts once a listing started grace
	// (2 s, plus 1 s for the subscription's answer) after it opened.
	eventually(t, 20*time.Second, "a PLEG list 3 s after the muted subscription", func() (bool, string) {
		n := len(e.plegListsSince(muted.Add(3 * time.Second)))
		return n > 0, fmt.Sprintf("%d lists", n)
	})

	killed := time.Now()
	e.kill(appA.ID)
	eventually(t, 30*time.Second, "the event stream check to fail", func() (bool, string) {
		c, _ := e.healthCheck("event stream")
		return !c.OK, c.Message
	})
	noticed := time.Now()
	t.Logf("silence noticed %v after the unreported death", noticed.Sub(killed).Round(time.Millisecond))
	if d := noticed.Sub(killed); d > 15*time.Second {
		t.Errorf("silence noticed %v after the death, want within the 5 s safety net + 2 s grace (15 s on a loaded machine)", d)
	}
	c, _ := e.healthCheck("event stream")
	if !strings.Contains(c.Message, "silent") || !strings.Contains(c.Message, short(appA.ID)) {
		t.Errorf("event stream check says %q, want the silence and the missed container %s", c.Message, short(appA.ID))
	}
	if n := e.logs.FilterMessageSnippet("event stream silent").Len(); n != 1 {
		t.Errorf("%d log lines of a silent stream, want 1", n)
	}
	eventually(t, 20*time.Second, "a new (unmuted) subscription", func() (bool, string) {
		var after int
		for _, r := range e.proxy.Requests() {
			if r.Path == "/events" && r.Time.After(muted) && r.Rule == 0 {
				after++
			}
		}
		return after == 1 && e.proxy.Responding("/events") == 1, fmt.Sprintf("%d new subscriptions", after)
	})

	// Unconfirmed: relists every 1 s.
	eventually(t, 20*time.Second, "5 PLEG lists after the silence was noticed", func() (bool, string) {
		n := len(e.plegListsSince(noticed))
		return n >= 5, fmt.Sprintf("%d lists", n)
	})
	lists := e.plegListsSince(noticed)
	for i := 1; i < len(lists); i++ {
		if d := lists[i].Sub(lists[i-1]); d > 2500*time.Millisecond {
			t.Errorf("PLEG lists %v apart while the new stream is unconfirmed, want about 1 s (all: %v)", d.Round(time.Millisecond), lists)
		}
	}
	if c, _ := e.healthCheck("event stream"); c.OK {
		t.Errorf("event stream check passes before the new stream was confirmed: %+v", c)
	}

	// A death the new stream reports, which the relist it triggers confirms.
	e.kill(appB.ID)
	eventually(t, 20*time.Second, "the event stream check to pass again", func() (bool, string) {
		c, _ := e.healthCheck("event stream")
		return c.OK, c.Message
	})
	confirmed := time.Now()
	consistently(t, 12*time.Second, "the event stream check passing", func() (bool, string) {
		c, _ := e.healthCheck("event stream")
		return c.OK, c.Message
	})
	if n := len(e.plegListsSince(confirmed.Add(2 * time.Second))); n > 3 {
		t.Errorf("%d PLEG lists in the 10 s after the confirmation, want 2 or 3 (every 5 s)", n)
	}
}

// TestEventStreamNoFalseAlarm: on real Docker with a working stream, a
// node busy with crash-looping containers (restarted within a second),
// a pod removed and one added never finds its event stream silent: every
// change a relist finds has its event within the grace, even with the
// other tests loading the machine.
func TestEventStreamNoFalseAlarm(t *testing.T) {
	e := newEnv(t, "t-faults-noalarm", nil)
	crasher := func(name string) *v1.Pod {
		p := pod(name)
		p.Spec.Containers[0].Env = []v1.EnvVar{{Name: "TW_EXIT_AFTER", Value: "700ms"}, {Name: "TW_EXIT_CODE", Value: "3"}}
		return p
	}
	pods := []*v1.Pod{crasher("c1"), crasher("c2"), pod("steady")}
	e.setPods(pods...)
	eventually(t, podUpTimeout, "the event stream check to pass", func() (bool, string) {
		c, _ := e.healthCheck("event stream")
		return c.OK, c.Message
	})
	start := time.Now()
	holds := func() (bool, string) {
		c, _ := e.healthCheck("event stream")
		return c.OK, c.Message
	}
	consistently(t, 15*time.Second, "the event stream check passing on a busy node", holds)
	e.setPods(pods[:2]...) // steady removed
	consistently(t, 5*time.Second, "the event stream check passing on a busy node", holds)
	e.setPods(append(pods[:2], pod("late"))...)
	consistently(t, 15*time.Second, "the event stream check passing on a busy node", holds)
	if n := e.logs.FilterMessageSnippet("event stream silent").Len(); n != 0 {
		t.Errorf("%d silent-stream log lines on a working stream", n)
	}
	starts := 0
	for _, r := range e.proxy.Requests() {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/start") && r.Time.After(start) {
			starts++
		}
	}
	t.Logf("%d container starts in %v", starts, time.Since(start).Round(time.Second))
	if starts < 10 {
		t.Errorf("%d container starts in 35 s, want a busy node (10 or more)", starts)
	}
}

// TestStreamsPassThrough: through the proxy, an exec (Docker's hijacked,
// upgraded connection) and a followed log stream work on real Docker.
func TestStreamsPassThrough(t *testing.T) {
	e := newEnv(t, "t-faults-streams", nil)
	rt, err := docker.New(docker.WithHost(e.proxy.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	uid := e.setPods(pod("st"))[0]
	app := e.waitRunning(podUpTimeout, uid, "app")
	ctx, cancel := context.WithTimeout(context.Background(), dockerTimeout)
	defer cancel()

	res, err := rt.Exec(ctx, app.ID, []string{"/testworkload", "--exit-after", "1ms", "--exit-code", "3"}, 10*time.Second)
	if err != nil {
		t.Fatalf("exec through the proxy: %v", err)
	}
	if res.ExitCode != 3 || !strings.Contains(string(res.Output), "testworkload: exiting 3") {
		t.Errorf("exec: exit code %d, output %q", res.ExitCode, res.Output)
	}
	if e.proxy.Count("POST /exec/{id}/start") != 1 {
		t.Errorf("%d exec starts through the proxy, want 1", e.proxy.Count("POST /exec/{id}/start"))
	}

	logs, err := rt.Logs(ctx, app.ID, runtimeadapter.LogOptions{Follow: true})
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	buf := make([]byte, 256)
	n, err := logs.Read(buf) // the first line arrives while the stream stays open
	if err != nil || !strings.Contains(string(buf[:n]), "testworkload: started") {
		t.Fatalf("followed logs: %q, %v", buf[:n], err)
	}
	eventually(t, askTimeout, "the followed log stream to be open at the proxy", func() (bool, string) {
		n := e.proxy.Responding("GET /containers/{id}/logs")
		return n == 1, fmt.Sprintf("%d log streams", n)
	})
}

// eventually polls cond until it holds, failing the test after timeout
// with what cond last saw.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		ok, seen := cond()
		if ok {
			t.Logf("%s: after %v", what, time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; last seen: %s", timeout, what, seen)
		}
		<-tick.C
	}
}

// consistently polls cond for d and fails the test the first time it does
// not hold.
func consistently(t testing.TB, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	start := time.Now()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		if ok, seen := cond(); !ok {
			t.Fatalf("%s stopped holding after %v: %s", what, time.Since(start).Round(time.Millisecond), seen)
		}
		if time.Since(start) >= d {
			return
		}
		<-tick.C
	}
}

func short[S ~string](s S) string {
	id := string(s)
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
