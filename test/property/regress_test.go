package property_test

// Focused reproductions of the bugs TestNodeInvariants found (issue 6),
// each a plain synctest test. Each failed when it was written; the ones
// fixed since stay as regression tests.

import (
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/node"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// rig is one node on a fake runtime inside a bubble.
type rig struct {
	t   *testing.T
	rt  *fake.Runtime
	sys *actor.ActorSystem
	pid *actor.PID
	dir string
}

func newRig(t *testing.T, rt *fake.Runtime) *rig {
	r := &rig{t: t, rt: rt, sys: quietSystem(), dir: t.TempDir()}
	r.start()
	t.Cleanup(r.close) // in the bubble, also after a failure
	return r
}

func (r *rig) start() {
	pid, err := node.Spawn(r.sys.Root, node.Options{NodeName: "n", Runtime: r.rt, HostSource: true, RootDir: r.dir})
	if err != nil {
		r.t.Fatal(err)
	}
	r.pid = pid
}

func (r *rig) stop() {
	if r.pid != nil {
		if err := node.Stop(r.sys.Root, r.pid, 10*time.Second); err != nil {
			r.t.Error(err)
		}
		r.pid = nil
	}
}

// close stops the node and the runtime and outwaits calls under way.
func (r *rig) close() {
	r.stop()
	r.rt.Close()
	time.Sleep(5 * time.Minute)
	synctest.Wait()
}

func (r *rig) set(pods ...*v1.Pod) {
	r.t.Helper()
	res, err := r.sys.Root.RequestFuture(r.pid, &messages.SetHostPods{Pods: pods}, 5*time.Second).Result()
	if err != nil {
		r.t.Fatal(err)
	}
	for _, x := range res.(*messages.SetHostPodsResult).Results {
		if x.Err != nil {
			r.t.Fatal(x.Err)
		}
	}
}

func (r *rig) containers(name string) (running, all []runtimeadapter.Container) {
	for _, c := range r.rt.Containers() {
		if c.Labels[runtimeadapter.LabelContainerName] == name {
			all = append(all, c)
			if c.State == runtimeadapter.StateRunning {
				running = append(running, c)
			}
		}
	}
	return running, all
}

func alwaysPod(name string, containers ...string) *v1.Pod {
	p := &v1.Pod{}
	p.Name = name
	grace := int64(5)
	p.Spec.TerminationGracePeriodSeconds = &grace
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: c, Image: "img:1"})
	}
	return p
}

// Bug 1a: a container that exits in the instant it starts (the fake's zero
// Behavior: "a job that completes at once") under restartPolicy Always is
// never restarted, and its pod reports it Running forever. The pod
// actor's own listing after the start (it still runs) and the PLEG's
// listing after the exit carry the same ObservedAt, and observe() keeps
// its own listing over a PLEG listing of the same instant; the PLEG never
// reports the container again, and nothing else makes the pod list.
func TestSameInstantExitIsSeen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("app", fake.Behavior{ExitCode: 0}) // exits at once
		r := newRig(t, rt)
		r.set(alwaysPod("p", "app"))
		time.Sleep(2 * time.Minute) // restarts are due at once, then after 10 s, 20 s, 40 s
		synctest.Wait()
		// Count creates, not instances: container GC keeps only the newest
		// exited instance of a container that never stays up.
		creates := 0
		for _, c := range rt.Calls() {
			if c.Method == fake.MethodCreate && strings.HasPrefix(c.Arg, "actorlet_app_") && c.Err == nil {
				creates++
			}
		}
		// Exits at 0 s, 0 s, 10 s, 30 s, 70 s: restarts due at 0 s (a
		// first exit), 10 s, 30 s, 70 s (back-off 10 s, 20 s, 40 s), so five
		// creates within 2 min. (Two are not enough: later restarts, whose
		// instants differ from the listings', must be seen too.)
		if creates < 5 {
			t.Errorf("restartPolicy Always: %d create(s) in 2 min of a container that exits at once, want 5 (restarts at 0 s, 10 s, 30 s, 70 s)", creates)
		}
	})
}

// Bug 1b: the same with a container killed from outside in the instant
// its pod listed it (here: the instant the pod was applied).
func TestSameInstantKillIsSeen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		r := newRig(t, rt)
		r.set(alwaysPod("p", "app"))
		synctest.Wait() // the pod actor created, started and listed "app"
		running, _ := r.containers("app")
		if len(running) != 1 {
			t.Fatalf("%d running app containers, want 1", len(running))
		}
		if err := rt.Kill(running[0].ID, 137); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if running, all := r.containers("app"); len(running) != 1 {
			t.Errorf("restartPolicy Always: %d running of %d app instances 2 min after a kill, want it restarted", len(running), len(all))
		}
	})
}

// Bug 2 (invariant 1): when the sandbox dies and stopping the app
// containers fails, the pod actor still creates the new sandbox and
// starts the containers again: two instances of each run. worker.run
// collects the kill errors and goes on with the starts.
func TestFailedStopNeverLeavesTwoRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		r := newRig(t, rt)
		r.set(alwaysPod("p", "app"))
		time.Sleep(3 * time.Second)
		synctest.Wait()
		sandboxes, _ := r.containers(runtimeadapter.SandboxName)
		if len(sandboxes) != 1 {
			t.Fatalf("%d running sandboxes", len(sandboxes))
		}
		rt.InjectError(fake.MethodStop, runtimeadapter.ErrUnavailable, 2)
		if err := rt.Kill(sandboxes[0].ID, 1); err != nil {
			t.Fatal(err)
		}
		for range 300 { // 30 s in 100 ms steps
			time.Sleep(100 * time.Millisecond)
			synctest.Wait()
			if running, _ := r.containers("app"); len(running) > 1 {
				t.Fatalf("invariant 1: %d app containers run at once after the sandbox died and a stop failed", len(running))
			}
		}
	})
}

// Bug 3: a stopped node keeps acting. node.Stop returns while a pod
// worker is in the middle of a plan; the worker goes on with the plan's
// next steps (more runtime calls: stop the sandbox, remove the
// containers) after the node is gone, racing a node started again on the
// same runtime. Here the pod is removed while stopping its container
// hangs; after node.Stop, once the hang ends, calls that were not under
// way at Stop time still reach the runtime.
func TestStoppedNodeStartsNoNewCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		r := newRig(t, rt)
		r.set(alwaysPod("p", "app"))
		time.Sleep(3 * time.Second)
		synctest.Wait()
		rt.Hang(fake.MethodStop, "")
		r.set() // remove the pod: the worker stops app (hangs), then the sandbox, then removes both
		time.Sleep(3 * time.Second)
		synctest.Wait()
		r.stop()
		synctest.Wait()
		mark := len(rt.Calls())
		rt.ClearFaults() // the hung stop returns
		time.Sleep(time.Minute)
		synctest.Wait()
		for _, c := range rt.Calls()[mark:] {
			t.Errorf("after node.Stop returned, with no node running: %s %s", c.Method, c.Arg)
		}
	})
}

// Bug 4: a busy loop. A pod whose containers have all finished
// (restartPolicy Never or OnFailure) and that has a created, never
// started sandbox (the daemon created it but the answer was lost, or an
// earlier agent died between create and start) is planned to kill that
// sandbox (podDone → Kill ReasonPodCompleted, since a created container
// counts as live). Stopping a created container does nothing (as with
// Docker), the sync reports no error, and the pod actor syncs again at
// once: Stop and List are called tens of thousands of times a second,
// forever, and virtual time never advances again. (breakBusyLoop ends the
// loop so that the test fails instead of hanging.)
func TestCreatedSandboxOfFinishedPodNoBusyLoop(t *testing.T) {
	var shared atomic.Pointer[fake.Runtime]
	defer breakBusyLoop(&shared)()
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		shared.Store(rt)
		rt.ScriptContainer("job", fake.Behavior{ExitCode: 0, ExitAfter: time.Second})
		r := newRig(t, rt)
		p := alwaysPod("p", "job")
		p.Spec.RestartPolicy = v1.RestartPolicyNever
		r.set(p)
		time.Sleep(10 * time.Second) // job completed, the pod is done, its sandbox stopped
		synctest.Wait()
		var sandbox runtimeadapter.Container
		for _, c := range rt.Containers() {
			if c.Labels[runtimeadapter.LabelContainerName] == runtimeadapter.SandboxName {
				sandbox = c
			}
		}
		if sandbox.ID == "" || sandbox.State != runtimeadapter.StateExited {
			t.Fatalf("sandbox %+v, want one, exited", sandbox)
		}
		meta, err := runtimeadapter.ParseMeta(sandbox.Labels)
		if err != nil {
			t.Fatal(err)
		}
		meta.RestartCount++
		rt.AddContainer(runtimeadapter.Container{ // created, never started
			Name: sandbox.Name[:len(sandbox.Name)-1] + "1", Image: sandbox.Image, Labels: meta.Labels(),
			State: runtimeadapter.StateUnknown, RawState: "created",
		})
		before := rt.CallCount(fake.MethodStop)
		time.Sleep(10 * time.Second) // the next relists find it (no event announces it)
		synctest.Wait()
		if n := rt.CallCount(fake.MethodStop) - before; n > 10 {
			t.Errorf("%d Stop calls within 10 virtual seconds on a created sandbox of a finished pod: a busy loop", n)
		}
	})
}

// Bug 5 (invariant 1 across an agent restart): runtime calls under way
// when node.Stop returns still take effect afterwards (their contexts are
// not cancelled; node.Stop documents that they "finish in the
// background"). Here the old node was replacing a dead sandbox (attempt 1:
// create, then a slow start) when the old sandbox was removed from outside
// and the node restarted; the new node sees no sandbox at all, creates
// attempt 0 again, and the old node's start then runs attempt 1: two
// sandboxes of one pod run at once.
func TestRestartDuringSandboxReplacementRunsOneSandbox(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		r := newRig(t, rt)
		p := alwaysPod("p", "app")
		r.set(p)
		time.Sleep(3 * time.Second)
		synctest.Wait()
		sandboxes, _ := r.containers(runtimeadapter.SandboxName)
		if len(sandboxes) != 1 {
			t.Fatalf("%d running sandboxes", len(sandboxes))
		}
		rt.SetDelay(fake.MethodCreate, time.Second)
		rt.SetDelay(fake.MethodStart, 5*time.Second)
		if err := rt.Kill(sandboxes[0].ID, 1); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond) // the node is creating attempt 1
		synctest.Wait()
		if err := rt.RemoveExternally(sandboxes[0].ID); err != nil {
			t.Fatal(err)
		}
		r.stop()
		r.start()
		r.set(p)
		for range 300 { // 30 s in 100 ms steps
			time.Sleep(100 * time.Millisecond)
			synctest.Wait()
			if running, _ := r.containers(runtimeadapter.SandboxName); len(running) > 1 {
				var names []string
				for _, c := range running {
					names = append(names, c.Name)
				}
				t.Fatalf("invariant 1: %d sandboxes of one pod run at once after an agent restart: %v", len(running), names)
			}
		}
	})
}

// breakBusyLoop watches *rt in real time, outside the bubble, and makes
// every Stop fail once more than 1000 were made, which ends a busy loop of
// stops (the pod actor then retries with back-off, and the bubble's clock
// moves again). Close cannot be called from outside the bubble.
func breakBusyLoop(rt *atomic.Pointer[fake.Runtime]) (stop func()) {
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if r := rt.Load(); r != nil && r.CallCount(fake.MethodStop) > 1000 {
				r.InjectError(fake.MethodStop, runtimeadapter.ErrUnavailable, -1)
				return
			}
		}
	}()
	return func() { close(done) }
}

// Bug 4b: the busy loop of bug 4 with an app container. A created, never
// started instance next to the running one (an earlier agent died between
// create and start of an instance that a later one superseded) is a
// duplicate; the plan kills it (ReasonDuplicate), stopping it does
// nothing, and the pod actor syncs again at once, forever. A created
// instance that is not adopted has to be removed, not stopped.
func TestCreatedDuplicateNoBusyLoop(t *testing.T) {
	var shared atomic.Pointer[fake.Runtime]
	defer breakBusyLoop(&shared)()
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		shared.Store(rt)
		r := newRig(t, rt)
		r.set(alwaysPod("p", "app"))
		time.Sleep(3 * time.Second)
		synctest.Wait()
		running, _ := r.containers("app")
		if len(running) != 1 {
			t.Fatalf("%d running app containers, want 1", len(running))
		}
		meta, err := runtimeadapter.ParseMeta(running[0].Labels)
		if err != nil {
			t.Fatal(err)
		}
		rt.AddContainer(runtimeadapter.Container{Name: "created-earlier", Image: "img:1", Labels: meta.Labels(),
			State: runtimeadapter.StateUnknown, RawState: "created", CreatedAt: running[0].CreatedAt.Add(-time.Second)})
		before := rt.CallCount(fake.MethodStop)
		time.Sleep(10 * time.Second) // the next relists find it (no event announces it)
		synctest.Wait()
		if n := rt.CallCount(fake.MethodStop) - before; n > 10 {
			t.Errorf("%d Stop calls within 10 virtual seconds on a created duplicate: a busy loop", n)
		}
	})
}
