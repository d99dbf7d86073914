package actors

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// callOf is the first call of method with argument arg (ok false: none).
func callOf(rt *fake.Runtime, method, arg string) (fake.Call, bool) {
	for _, c := range rt.Calls() {
		if c.Method == method && c.Arg == arg {
			return c, true
		}
	}
	return fake.Call{}, false
}

// podContainer is the one container of pod uid named name (fails the
// test unless there is exactly one).
func podContainer(t *testing.T, rt *fake.Runtime, uid, name string) runtimeadapter.Container {
	t.Helper()
	var out []runtimeadapter.Container
	for _, c := range rt.Containers() {
		if c.Labels[runtimeadapter.LabelPodUID] == uid && c.Labels[runtimeadapter.LabelContainerName] == name {
			out = append(out, c)
		}
	}
	if len(out) != 1 {
		t.Fatalf("pod %s: %d containers named %s, want 1: %+v", uid, len(out), name, out)
	}
	return out[0]
}

// noSandboxContainers is a runtime without the SandboxContainers
// capability (as a CRI runtime), and without the fake's others.
type noSandboxContainers struct{ runtimeadapter.Runtime }

// A host-network pod's app container is created while its sandbox is
// created (each create takes 0.5 s here) and started while the sandbox
// starts (each start takes 1 s): its start call begins once the sandbox
// exists and before the sandbox's start has returned. A pod whose app
// joins a namespace of the sandbox (its network, or its PID namespace),
// or runs on a runtime whose sandbox is no container (CRI), starts it
// only after. Either way: two creates, two starts, the
// sandbox running and tracked.
func TestAppStartsBesideSandbox(t *testing.T) {
	yes := true
	for _, c := range []struct {
		name                  string
		hostNetwork, sharePID bool
		cri                   bool // the runtime makes containers inside their sandbox
		beside                bool
	}{
		{"host network", true, false, false, true},
		{"pod network: joins the sandbox's network", false, false, false, false},
		{"host network, shareProcessNamespace: joins the sandbox's PID namespace", true, true, false, false},
		{"host network, on a runtime whose sandbox is no container (CRI)", true, false, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const startTakes, createTakes = time.Second, 500 * time.Millisecond
				rt := fake.New(fake.WithImages("pause:1", "work:1"))
				rt.SetDelay(fake.MethodStart, startTakes)
				rt.SetDelay(fake.MethodCreate, createTakes)
				h := newHarness(t, rt)
				if c.cri {
					h.cfg.Runtime = noSandboxContainers{rt}
				}
				h.start()
				p := testPod("a", "uid-a", v1.RestartPolicyAlways, "app")
				p.Spec.HostNetwork = c.hostNetwork
				if c.sharePID {
					p.Spec.ShareProcessNamespace = &yes
				}
				h.apply(p)
				waitFor(t, 10*time.Second, "the sandbox and the app running", func() bool {
					return len(rt.Running("uid-a", runtimeadapter.SandboxName)) == 1 && len(rt.Running("uid-a", "app")) == 1
				})
				sb, app := podContainer(t, rt, "uid-a", runtimeadapter.SandboxName), podContainer(t, rt, "uid-a", "app")
				sbCreate, ok1 := callOf(rt, fake.MethodCreate, sb.Name)
				sbStart, ok2 := callOf(rt, fake.MethodStart, sb.ID)
				appStart, ok3 := callOf(rt, fake.MethodStart, app.ID)
				appCreate, ok4 := callOf(rt, fake.MethodCreate, app.Name)
				if !ok1 || !ok2 || !ok3 || !ok4 {
					t.Fatalf("calls: sandbox create %v, sandbox start %v, app start %v, app create %v; want all", ok1, ok2, ok3, ok4)
				}
				if appStart.Time.Before(sbCreate.Time.Add(createTakes)) {
					t.Errorf("the app's start began %v before the sandbox's create returned: the sandbox must exist first",
						sbCreate.Time.Add(createTakes).Sub(appStart.Time))
				}
				if got := appCreate.Time.Before(sbCreate.Time.Add(createTakes)); got != c.beside {
					t.Errorf("the app's create began %v after the sandbox's (which takes %v): during it %v, want %v",
						appCreate.Time.Sub(sbCreate.Time), createTakes, got, c.beside)
				}
				if got := appStart.Time.Before(sbStart.Time.Add(startTakes)); got != c.beside {
					t.Errorf("the app's start began %v after the sandbox's (which takes %v): during it %v, want %v",
						appStart.Time.Sub(sbStart.Time), startTakes, got, c.beside)
				}
				if n, m := rt.CallCount(fake.MethodCreate), rt.CallCount(fake.MethodStart); n != 2 || m != 2 {
					t.Errorf("%d creates and %d starts, want 2 and 2 (sandbox, app)", n, m)
				}
				if n := rt.CallCount(fake.MethodStop) + rt.CallCount(fake.MethodRemove); n != 0 {
					t.Errorf("%d stops and removals, want none", n)
				}
				h.stop()
				rt.Close()
			})
		})
	}
}

// When the sandbox's start fails, the app container started beside it is
// stopped (with the pod's grace) and removed before the pod is listed
// again — the kubelet never runs a container of a sandbox that did not
// start; the next sandbox (attempt 1) starts alone, the app after it, as
// a first start (restart count 0).
func TestSandboxFailureStopsAppStartedBeside(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.WithImages("pause:1", "work:1"))
		rt.SetDelay(fake.MethodStart, 100*time.Millisecond)
		rt.SetBehavior(func(s runtimeadapter.ContainerSpec) bool {
			return s.Labels[runtimeadapter.LabelContainerName] == runtimeadapter.SandboxName && s.Labels[runtimeadapter.LabelRestartCount] == "0"
		}, fake.Behavior{StartError: errors.New(`exec: "/pause": permission denied`), StartExitCode: 126})
		h := newHarness(t, rt)
		h.start()
		p := testPod("a", "uid-a", v1.RestartPolicyAlways, "app")
		p.Spec.HostNetwork = true
		h.apply(p)
		waitFor(t, 30*time.Second, "the second sandbox and the app running, nothing else", func() bool {
			sbs, apps := rt.Running("uid-a", runtimeadapter.SandboxName), rt.Running("uid-a", "app")
			return len(sbs) == 1 && sbs[0].Labels[runtimeadapter.LabelRestartCount] == "1" && len(apps) == 1 && len(rt.Containers()) == 2
		})

		sb, app := podContainer(t, rt, "uid-a", runtimeadapter.SandboxName), podContainer(t, rt, "uid-a", "app")
		if sb.Labels[runtimeadapter.LabelRestartCount] != "1" || app.Labels[runtimeadapter.LabelRestartCount] != "0" {
			t.Errorf("sandbox attempt %s, app restart count %s; want 1 (the second sandbox) and 0 (a first start)",
				sb.Labels[runtimeadapter.LabelRestartCount], app.Labels[runtimeadapter.LabelRestartCount])
		}
		// The starts: the failed sandbox's, the app's beside it (in either
		// order), then the next sandbox's and, after it returned, the app's.
		var failedSB, beside string
		var sbStart, appStart fake.Call
		for _, call := range rt.Calls() {
			switch {
			case call.Method != fake.MethodStart:
			case call.Err != nil:
				failedSB = call.Arg
			case call.Arg == sb.ID:
				sbStart = call
			case call.Arg == app.ID:
				appStart = call
			default:
				beside = call.Arg
			}
		}
		if failedSB == "" || beside == "" || sbStart.Arg == "" || appStart.Arg == "" {
			t.Fatalf("starts: failed sandbox %q, app beside it %q, next sandbox %q, app %q; want all", failedSB, beside, sbStart.Arg, appStart.Arg)
		}
		if n := rt.CallCount(fake.MethodStart); n != 4 {
			t.Errorf("%d starts, want 4", n)
		}
		if appStart.Time.Before(sbStart.Time.Add(100 * time.Millisecond)) {
			t.Errorf("after a failed sandbox, the app's start began before the next sandbox's start returned; want after")
		}
		stop, stopped := callOf(rt, fake.MethodStop, beside)
		remove, removed := callOf(rt, fake.MethodRemove, beside)
		if !stopped || !removed {
			t.Fatalf("the app started beside the failed sandbox: stopped %v, removed %v; want both", stopped, removed)
		}
		if stop.Grace != 30*time.Second {
			t.Errorf("the app started beside stopped with grace %v, want the pod's 30s", stop.Grace)
		}
		for _, call := range rt.Calls() {
			if call.Method == fake.MethodList && call.Arg == "node="+testNode+" pod=uid-a all=true" &&
				call.Time.After(stop.Time) && call.Time.Before(remove.Time) {
				t.Errorf("the pod listed between the stop and the removal of the app started beside its failed sandbox")
			}
		}
		for _, c := range rt.Containers() {
			if c.ID == beside || c.ID == failedSB && c.State == runtimeadapter.StateRunning {
				t.Errorf("container %s (%s) still there, %s", c.Name, short(c.ID), c.RawState)
			}
		}
		h.stop()
		rt.Close()
	})
}

// An agent that stopped after it started a host-network pod's app beside
// its sandbox and before the sandbox's start returned leaves a created
// sandbox and a running app: the next agent starts that sandbox and keeps
// the app (invariant 4: it recreates nothing that is still running).
func TestCreatedSandboxAdoptedWithAppStartedBeside(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.WithImages("pause:1", "work:1"))
		p := testPod("a", "uid-a", v1.RestartPolicyAlways, "app")
		p.Spec.HostNetwork = true
		sbSpec := podsync.SandboxSpec(testNode, p, "pause:1", 0)
		appSpec, err := podsync.AppSpecWith(podsync.SpecOptions{RootDir: podsync.DefaultRootDir}, testNode, p, &p.Spec.Containers[0], "", 0)
		if err != nil {
			t.Fatal(err)
		}
		sbID := rt.AddContainer(runtimeadapter.Container{Name: sbSpec.Name, Image: "pause:1", Labels: sbSpec.Labels, State: runtimeadapter.StateUnknown})
		appID := rt.AddContainer(runtimeadapter.Container{Name: appSpec.Name, Image: "work:1", Labels: appSpec.Labels})
		h := newHarness(t, rt)
		h.start()
		h.apply(p)
		waitFor(t, 10*time.Second, "the created sandbox running", func() bool {
			return len(rt.Running("uid-a", runtimeadapter.SandboxName)) == 1
		})
		time.Sleep(10 * time.Second) // virtual time: a window of relists and syncs in which nothing else may happen
		if _, ok := callOf(rt, fake.MethodStart, sbID); !ok {
			t.Errorf("the created sandbox %s was not started", short(sbID))
		}
		if n := rt.CallCount(fake.MethodCreate); n != 0 {
			t.Errorf("%d creates, want none", n)
		}
		for _, m := range []string{fake.MethodStop, fake.MethodRemove} {
			if n := rt.CallCount(m); n != 0 {
				t.Errorf("%d calls of %s, want none", n, m)
			}
		}
		if r := rt.Running("uid-a", "app"); len(r) != 1 || r[0].ID != appID {
			t.Errorf("running app containers %+v, want the one started beside (%s)", r, short(appID))
		}
		h.stop()
		rt.Close()
	})
}

// When the sandbox's create fails, the app container created at the same
// time is removed, never started; the pod runs once the runtime answers.
func TestSandboxCreateFailureRemovesAppCreatedBeside(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.WithImages("pause:1", "work:1"))
		rt.Hang(fake.MethodCreate, "actorlet_POD_a_") // until the call's deadline: the create fails
		h := newHarness(t, rt)
		h.start()
		p := testPod("a", "uid-a", v1.RestartPolicyAlways, "app")
		p.Spec.HostNetwork = true
		h.apply(p)
		var removed string
		waitFor(t, 5*time.Minute, "the app created beside the failed sandbox removed", func() bool {
			for _, c := range rt.Calls() {
				if c.Method == fake.MethodRemove {
					removed = c.Arg
				}
			}
			return removed != ""
		})
		rt.ClearFaults()
		waitFor(t, 5*time.Minute, "the sandbox and the app running", func() bool {
			return len(rt.Running("uid-a", runtimeadapter.SandboxName)) == 1 && len(rt.Running("uid-a", "app")) == 1
		})
		if _, ok := callOf(rt, fake.MethodStart, removed); ok {
			t.Errorf("the app created beside the sandbox whose create failed (%s) was started", short(removed))
		}
		for _, c := range rt.Containers() {
			if c.ID == removed {
				t.Errorf("the app created beside the failed sandbox (%s) is still there, %s", short(removed), c.RawState)
			}
		}
		if n := len(rt.Containers()); n != 2 {
			t.Errorf("%d containers, want 2", n)
		}
		h.stop()
		rt.Close()
	})
}
