package actors

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

func TestCanStartAhead(t *testing.T) {
	podIPEnv := []v1.EnvVar{{Name: "IP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.podIP"}}}}
	plain := &v1.Pod{}
	hostNet := &v1.Pod{}
	hostNet.Spec.HostNetwork = true
	for _, c := range []struct {
		name string
		pod  *v1.Pod
		c    *v1.Container
		s    podsync.Start
		want bool
	}{
		{"a new container", plain, &v1.Container{Name: "app"}, podsync.Start{Name: "app"}, true},
		{"an init container", plain, &v1.Container{Name: "init"}, podsync.Start{Name: "init", Init: true}, true},
		{"a created container to adopt", plain, &v1.Container{Name: "app"}, podsync.Start{Name: "app", AdoptID: "c1"}, false},
		{"env names the pod IP: known once the sandbox runs", plain, &v1.Container{Name: "app", Env: podIPEnv}, podsync.Start{Name: "app"}, false},
		{"env names the pod IP of a host-network pod: the node's", hostNet, &v1.Container{Name: "app", Env: podIPEnv}, podsync.Start{Name: "app"}, true},
		{"not in the spec", plain, nil, podsync.Start{Name: "gone"}, false},
		{"no pod (removed)", nil, &v1.Container{Name: "app"}, podsync.Start{Name: "app"}, false},
	} {
		if got := canStartAhead(c.pod, c.c, c.s); got != c.want {
			t.Errorf("%s: canStartAhead = %v, want %v", c.name, got, c.want)
		}
	}
}

// callAt is when the first call of method whose argument starts with
// prefix began (zero: none).
func callAt(rt *fake.Runtime, method, prefix string) time.Time {
	for _, c := range rt.Calls() {
		if c.Method == method && strings.HasPrefix(c.Arg, prefix) {
			return c.Time
		}
	}
	return time.Time{}
}

// A new pod's app container is created while its sandbox starts (each
// start takes 1 s here), not after; an app whose env names the pod's IP
// waits for the running sandbox.
func TestAppCreatedWhileSandboxStarts(t *testing.T) {
	for _, c := range []struct {
		name    string
		podIP   bool
		overlap bool
	}{{"plain", false, true}, {"env names the pod IP", true, false}} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const startTakes = time.Second
				rt := fake.New(fake.WithImages("pause:1", "work:1"))
				rt.SetDelay(fake.MethodStart, startTakes)
				h := newHarness(t, rt)
				h.start()
				p := testPod("a", "uid-a", v1.RestartPolicyAlways, "app")
				if c.podIP {
					p.Spec.Containers[0].Env = []v1.EnvVar{{Name: "IP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.podIP"}}}}
				}
				h.apply(p)
				waitFor(t, 10*time.Second, "the app running", func() bool { return len(rt.Running("uid-a", "app")) == 1 })
				sbCreated := callAt(rt, fake.MethodCreate, "actorlet_POD_a_")
				var sbStart time.Time
				for _, call := range rt.Calls() {
					if call.Method == fake.MethodStart && sbStart.IsZero() {
						sbStart = call.Time // the pod's first start is its sandbox's
					}
				}
				appCreate := callAt(rt, fake.MethodCreate, "actorlet_app_a_")
				if sbCreated.IsZero() || sbStart.IsZero() || appCreate.IsZero() {
					t.Fatalf("calls: sandbox create %v, sandbox start %v, app create %v; want all", sbCreated, sbStart, appCreate)
				}
				if got := appCreate.Before(sbStart.Add(startTakes)); got != c.overlap {
					t.Errorf("app created %v after the sandbox's start began (it takes %v): during it %v, want %v",
						appCreate.Sub(sbStart), startTakes, got, c.overlap)
				}
				if n := rt.CallCount(fake.MethodCreate); n != 2 {
					t.Errorf("%d creates, want 2 (sandbox, app)", n)
				}
				h.stop()
				rt.Close()
			})
		})
	}
}

// When the sandbox's start fails, the app container created meanwhile is
// removed (it would join a sandbox that never ran); the next sync starts
// the sandbox and the app, and the pod runs one app container.
func TestSandboxFailureRemovesAppCreatedAhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.WithImages("pause:1", "work:1"))
		rt.SetDelay(fake.MethodStart, 100*time.Millisecond)
		rt.InjectError(fake.MethodStart, errors.New("sandbox start failed"), 1)
		h := newHarness(t, rt)
		h.start()
		h.apply(testPod("a", "uid-a", v1.RestartPolicyAlways, "app"))
		waitFor(t, 30*time.Second, "the app running", func() bool { return len(rt.Running("uid-a", "app")) == 1 })
		// The failed start, then at once (before the worker lists the
		// pod) the removal: not left to a later plan.
		first, failed := "", false
		for _, call := range rt.Calls() {
			switch {
			case call.Method == fake.MethodStart && call.Err != nil:
				failed = true
			case failed && call.Method == fake.MethodRemove:
				first = call.Arg
			case failed && call.Method == fake.MethodList && strings.Contains(call.Arg, "uid-a"):
				t.Fatalf("the pod listed after its sandbox's failed start before any removal; want the app created ahead removed first")
			}
			if first != "" {
				break
			}
		}
		if first == "" {
			t.Fatal("nothing removed; want the app created while the failed sandbox started")
		}
		apps := 0
		for _, c := range rt.Containers() {
			if c.Labels[runtimeadapter.LabelPodUID] != "uid-a" {
				continue
			}
			if c.ID == first {
				t.Errorf("the app created ahead (%s) is still there, %s", short(first), c.RawState)
			}
			if c.Labels[runtimeadapter.LabelContainerName] == "app" {
				apps++
			}
		}
		if apps != 1 {
			t.Errorf("%d app containers, want 1", apps)
		}
		h.stop()
		rt.Close()
	})
}
