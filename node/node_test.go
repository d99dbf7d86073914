package node_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/node"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

func webPod() *v1.Pod {
	p := &v1.Pod{}
	p.Name = "web"
	p.Spec.Containers = []v1.Container{{Name: "app", Image: "img:1"}}
	return p
}

func request[T any](t *testing.T, sys *actor.ActorSystem, pid *actor.PID, msg any) T {
	t.Helper()
	res, err := sys.Root.RequestFuture(pid, msg, 5*time.Second).Result()
	if err != nil {
		t.Fatalf("%T: %v", msg, err)
	}
	return res.(T)
}

// recorder is a subscriber that keeps what it receives.
type recorder struct {
	mu   sync.Mutex
	msgs []*messages.PodStatusChanged
}

func (r *recorder) Receive(c actor.Context) {
	if m, ok := c.Message().(*messages.PodStatusChanged); ok {
		r.mu.Lock()
		r.msgs = append(r.msgs, m)
		r.mu.Unlock()
	}
}

func (r *recorder) removed(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.msgs {
		if m.Removed && m.Pod.Name == name {
			return true
		}
	}
	return false
}

func TestApplyDeleteAndSubscribe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := quietSystem()
		rt := fake.New(fake.AutoImages(true))
		pid, err := node.Spawn(sys.Root, node.Options{NodeName: "n1", Runtime: rt, HostSource: true})
		if err != nil {
			t.Fatal(err)
		}
		rec := &recorder{}
		sub := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return rec }))
		sys.Root.Send(pid, &messages.Subscribe{PID: sub})

		res := request[*messages.ApplyPodResult](t, sys, pid, &messages.ApplyPod{Pod: webPod()})
		if res.Err != nil || res.UID == "" {
			t.Fatalf("apply: %+v", res)
		}
		time.Sleep(3 * time.Second)
		synctest.Wait()
		if n := len(rt.Running(string(res.UID), "app")); n != 1 {
			t.Fatalf("%d running app containers, want 1", n)
		}
		// Applying the same pod again changes nothing.
		again := request[*messages.ApplyPodResult](t, sys, pid, &messages.ApplyPod{Pod: webPod()})
		if again.UID != res.UID {
			t.Fatalf("UID changed on re-apply: %s then %s", res.UID, again.UID)
		}
		del := request[*messages.DeletePodResult](t, sys, pid, &messages.DeletePod{Namespace: "default", Name: "web"})
		if del.Err != nil {
			t.Fatal(del.Err)
		}
		time.Sleep(35 * time.Second)
		synctest.Wait()
		if n := len(rt.Containers()); n != 0 {
			t.Fatalf("%d containers left after delete", n)
		}
		if !rec.removed("web") {
			t.Fatal("subscriber was not told the pod was removed")
		}
		missing := request[*messages.DeletePodResult](t, sys, pid, &messages.DeletePod{Namespace: "default", Name: "web"})
		if !errors.Is(missing.Err, messages.ErrPodNotFound) {
			t.Fatalf("delete of a missing pod: %v, want ErrPodNotFound", missing.Err)
		}
		if err := node.Stop(sys.Root, pid, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		rt.Close()
		time.Sleep(5 * time.Second) // stragglers (dead-letter throttle timers) end; no time in the bubble
	})
}

// With HostSource, orphans wait for the host's first SetHostPods: a host
// that restarts and re-feeds its pods loses nothing meanwhile.
func TestHostSourceGatesOrphans(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := quietSystem()
		rt := fake.New(fake.AutoImages(true))
		labels := runtimeadapter.Meta{Node: "n1", PodUID: "ghost", PodName: "ghost", PodNamespace: "default",
			ContainerName: "app", Type: runtimeadapter.TypeApp, GracePeriod: time.Second}.Labels()
		id := rt.AddContainer(runtimeadapter.Container{Name: "ghost", Image: "img:1", Labels: labels, State: runtimeadapter.StateRunning})
		pid, _ := node.Spawn(sys.Root, node.Options{NodeName: "n1", Runtime: rt, HostSource: true})
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if rt.CallCount(fake.MethodStop) != 0 {
			t.Fatal("orphan stopped before the host source synced")
		}
		request[*messages.SetHostPodsResult](t, sys, pid, &messages.SetHostPods{})
		time.Sleep(5 * time.Second)
		synctest.Wait()
		for _, c := range rt.Containers() {
			if c.ID == id {
				t.Fatal("orphan still there after the host source synced")
			}
		}
		node.Stop(sys.Root, pid, 10*time.Second)
		rt.Close()
		time.Sleep(5 * time.Second) // stragglers (dead-letter throttle timers) end; no time in the bubble
	})
}

func TestMetricsRegistryOption(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := quietSystem()
		rt := fake.New(fake.AutoImages(true))
		reg := prometheus.NewRegistry()
		pid, err := node.Spawn(sys.Root, node.Options{NodeName: "n1", Runtime: rt, Metrics: reg, InstrumentRuntime: true})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second)
		synctest.Wait()
		for _, name := range []string{"actorlet_pleg_relist_duration_seconds", "actorlet_runtime_operations_duration_seconds"} {
			if n, err := testutil.GatherAndCount(reg, name); err != nil || n == 0 {
				t.Errorf("%s: %d series (%v)", name, n, err)
			}
		}
		node.Stop(sys.Root, pid, 10*time.Second)
		rt.Close()
		time.Sleep(5 * time.Second) // stragglers (dead-letter throttle timers) end; no time in the bubble
	})
}

// The Clock option drives actorlet's timers: with a fake clock nothing
// relists until the test steps it.
func TestClockOption(t *testing.T) {
	sys := quietSystem()
	rt := fake.New(fake.AutoImages(true))
	defer rt.Close()
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	pid, err := node.Spawn(sys.Root, node.Options{NodeName: "clk", Runtime: rt, Clock: clk, EventRelistPeriod: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Stop(sys.Root, pid, 10*time.Second)
	lists := func() int { return rt.CallCount(fake.MethodList) }
	deadline := time.Now().Add(5 * time.Second)
	for lists() < 1 && time.Now().Before(deadline) { // the first relist runs at start
		runtime.Gosched()
	}
	if lists() != 1 {
		t.Fatalf("%d lists at start, want 1", lists())
	}
	for !clk.HasWaiters() && time.Now().Before(deadline) { // the next relist's timer is set
		runtime.Gosched()
	}
	clk.Step(time.Second)
	for lists() < 2 && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	if lists() != 2 {
		t.Fatalf("%d lists after stepping the clock 1 s, want 2", lists())
	}
}

// An embedded node spawned while its runtime does not answer (issue 12
// #5) keeps running: GetHealth shows the runtime check failing, it calls
// nothing but lists, and once the runtime answers it adopts the pod a
// previous node left running (nothing stopped, created or started) and
// starts the pod added meanwhile.
func TestSpawnWhileRuntimeDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := quietSystem()
		rt := fake.New(fake.AutoImages(true))
		pid, err := node.Spawn(sys.Root, node.Options{NodeName: "n1", Runtime: rt, HostSource: true, RootDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		request[*messages.SetHostPodsResult](t, sys, pid, &messages.SetHostPods{Pods: []*v1.Pod{webPod()}})
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if len(runningApps(rt)) != 1 {
			t.Fatalf("web not running: %v", runningApps(rt))
		}
		if err := node.Stop(sys.Root, pid, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		rt.InjectError(fake.MethodList, runtimeadapter.ErrUnavailable, -1) // the runtime does not answer
		rt.ResetCalls()

		pid, err = node.Spawn(sys.Root, node.Options{NodeName: "n1", Runtime: rt, HostSource: true, RootDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		late := webPod()
		late.Name = "late"
		request[*messages.SetHostPodsResult](t, sys, pid, &messages.SetHostPods{Pods: []*v1.Pod{webPod(), late}})
		time.Sleep(20 * time.Second)
		synctest.Wait()
		h := request[*messages.NodeHealth](t, sys, pid, &messages.GetHealth{})
		for _, c := range h.Checks {
			if c.Name == "runtime" && c.OK {
				t.Fatalf("runtime check passes while every list fails: %+v", c)
			}
		}
		for _, c := range rt.Calls() {
			if c.Method != fake.MethodList && c.Method != fake.MethodEvents {
				t.Fatalf("%s %s while the runtime does not answer", c.Method, c.Arg)
			}
		}
		rt.InjectError(fake.MethodList, nil, 0) // it answers
		time.Sleep(40 * time.Second)            // the list backoff is at most 30 s
		synctest.Wait()
		if apps := runningApps(rt); len(apps) != 2 {
			t.Fatalf("running apps %v, want web's and late's", apps)
		}
		for _, c := range rt.Calls() {
			switch {
			case c.Method == fake.MethodStop || c.Method == fake.MethodRemove:
				t.Errorf("%s %s after the runtime came back", c.Method, c.Arg)
			case (c.Method == fake.MethodCreate || c.Method == fake.MethodStart) && !strings.Contains(c.Arg, "_late_"):
				if c.Method == fake.MethodStart { // Start names an ID: is it late's?
					if inspect, err := rt.Inspect(context.Background(), c.Arg); err == nil && inspect.Labels[runtimeadapter.LabelPodName] == "late" {
						continue
					}
				}
				t.Errorf("%s %s: web was running", c.Method, c.Arg)
			}
		}
		h = request[*messages.NodeHealth](t, sys, pid, &messages.GetHealth{})
		for _, c := range h.Checks {
			if c.Name == "runtime" && !c.OK {
				t.Errorf("runtime check still failing: %+v", c)
			}
		}
		node.Stop(sys.Root, pid, 10*time.Second)
		rt.Close()
		time.Sleep(5 * time.Second) // stragglers (dead-letter throttle timers) end; no time in the bubble
	})
}

// runningApps names the pods with a running app container.
func runningApps(rt *fake.Runtime) []string {
	var out []string
	for _, c := range rt.Containers() {
		if c.State == runtimeadapter.StateRunning && c.Labels[runtimeadapter.LabelContainerName] == "app" {
			out = append(out, c.Labels[runtimeadapter.LabelPodName])
		}
	}
	return out
}
