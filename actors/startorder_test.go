package actors

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// The order's arithmetic: a sandbox start waits for the apps registered
// before it asked, never its own pod's, never a later pod's.
func TestOrderState(t *testing.T) {
	for _, c := range []struct {
		name       string
		registered int      // tickets 0..registered-1
		done       []uint64 // their apps started (or pulling, or not beside)
		barAt      int      // tickets registered when the sandbox asked
		own        uint64
		more       int // registered after it asked
		want       int
	}{
		{name: "a lone pod: its own app aside, nothing to wait for", registered: 1, barAt: 1, own: 0, want: 0},
		{name: "the first pod of a burst of four waits for the three others' apps", registered: 4, barAt: 4, own: 0, want: 3},
		{name: "the last pod of a burst waits for the three before it", registered: 4, barAt: 4, own: 3, want: 3},
		{name: "apps started no longer count", registered: 4, done: []uint64{1, 3}, barAt: 4, own: 0, want: 1},
		{name: "every other app started", registered: 4, done: []uint64{1, 2, 3}, barAt: 4, own: 0, want: 0},
		{name: "its own app done too", registered: 4, done: []uint64{0, 1, 2, 3}, barAt: 4, own: 0, want: 0},
		{name: "pods registered after it asked do not hold it (bounded)", registered: 2, barAt: 2, own: 0, more: 5, want: 1},
		{name: "done twice is done once", registered: 3, done: []uint64{1, 1}, barAt: 3, own: 0, want: 1},
		{name: "an unknown ticket done changes nothing", registered: 3, done: []uint64{9}, barAt: 3, own: 2, want: 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s orderState
			for range c.registered {
				s.register()
			}
			for _, d := range c.done {
				s.done(d)
			}
			if c.barAt != c.registered {
				t.Fatal("bad row: the bar is taken once the pods before it registered")
			}
			bar := s.bar()
			for range c.more {
				s.register()
			}
			if got := s.ahead(bar, c.own); got != c.want {
				t.Errorf("ahead(bar %d, own %d) with pending %v = %d, want %d", bar, c.own, s.pending, got, c.want)
			}
		})
	}
}

// A waiter is let go once the apps ahead of it are done, or when its
// context ends.
func TestStartOrderWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newStartOrder()
		a, b, c := o.register(), o.register(), o.register()
		bar, n := o.bar(a)
		if n != 2 {
			t.Fatalf("waits for %d apps, want 2", n)
		}
		got := make(chan error, 1)
		go func() { got <- o.wait(context.Background(), bar, a) }()
		o.done(b)
		synctest.Wait()
		select {
		case err := <-got:
			t.Fatalf("let go (%v) with c's app still to start", err)
		default:
		}
		o.register() // a later pod: not waited for
		o.done(c)
		if err := <-got; err != nil {
			t.Fatal(err)
		}
		d := o.register()
		bar, _ = o.bar(d)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := o.wait(ctx, bar, d); err == nil {
			t.Error("wait with an app ahead and an ended context: nil error, want the context's")
		}
	})
}

// startCalls returns the Start calls of the containers of uids named
// name, in call order.
func startCalls(rt *fake.Runtime, uids []string, name string) []fake.Call {
	ids := map[string]bool{}
	for _, c := range rt.Containers() {
		if slices.Contains(uids, c.Labels[runtimeadapter.LabelPodUID]) && c.Labels[runtimeadapter.LabelContainerName] == name {
			ids[c.ID] = true
		}
	}
	var out []fake.Call
	for _, c := range rt.Calls() {
		if c.Method == fake.MethodStart && ids[c.Arg] {
			out = append(out, c)
		}
	}
	return out
}

// A burst of host-network pods (each app joins nothing of its sandbox)
// given at once, two start slots, each start taking 1 s: every pod's app
// start is issued before any pod's sandbox start — the sandboxes follow,
// created before their apps start as before — where on main the first
// pods' sandboxes started with their apps, before the later pods' apps.
// While a pod's app runs and its sandbox waits, the pod is reported as
// before the sandbox ran (Pending, PodReadyToStartContainers not true);
// then every pod runs, with two creates and two starts each, nothing
// stopped. Pods on the pod network keep their order (sandbox first).
func TestBurstStartsAppsBeforeSandboxes(t *testing.T) {
	for _, hostNetwork := range []bool{true, false} {
		t.Run(fmt.Sprintf("hostNetwork %v", hostNetwork), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const startTakes, createTakes, n = time.Second, 100 * time.Millisecond, 4
				rt := fake.New(fake.WithImages("pause:1", "work:1"))
				rt.SetDelay(fake.MethodStart, startTakes)
				rt.SetDelay(fake.MethodCreate, createTakes)
				h := newHarness(t, rt)
				h.cfg.ParallelPodStarts = 2
				h.start()
				var pods []*v1.Pod
				var uids []string
				for i := range n {
					p := testPod(fmt.Sprintf("p%d", i), fmt.Sprintf("uid-p%d", i), v1.RestartPolicyAlways, "app")
					p.Spec.HostNetwork = hostNetwork
					pods, uids = append(pods, p), append(uids, string(p.UID))
				}
				h.apply(pods...)
				if hostNetwork {
					waitFor(t, 30*time.Second, "p0's app running", func() bool { return len(rt.Running("uid-p0", "app")) == 1 })
					if len(rt.Running("uid-p0", runtimeadapter.SandboxName)) != 0 {
						t.Error("p0's sandbox runs as soon as its app: want it after the burst's apps")
					} else {
						st := podStatus(t, h, "p0")
						for _, c := range st.Conditions {
							if c.Type == v1.PodReadyToStartContainers && c.Status == v1.ConditionTrue {
								t.Errorf("p0's sandbox is not running, its status says %s true", c.Type)
							}
						}
						if st.Phase == v1.PodRunning {
							t.Errorf("p0's sandbox is not running, its phase is %s", st.Phase)
						}
					}
				}
				waitFor(t, 60*time.Second, "every pod's sandbox and app running", func() bool {
					for _, u := range uids {
						if len(rt.Running(u, "app")) != 1 || len(rt.Running(u, runtimeadapter.SandboxName)) != 1 {
							return false
						}
					}
					return true
				})
				apps, sbs := startCalls(rt, uids, "app"), startCalls(rt, uids, runtimeadapter.SandboxName)
				if len(apps) != n || len(sbs) != n {
					t.Fatalf("%d app starts and %d sandbox starts, want %d each", len(apps), len(sbs), n)
				}
				lastApp := slices.MaxFunc(apps, func(a, b fake.Call) int { return a.Time.Compare(b.Time) })
				firstSB := slices.MinFunc(sbs, func(a, b fake.Call) int { return a.Time.Compare(b.Time) })
				if got := !firstSB.Time.Before(lastApp.Time); got != hostNetwork {
					t.Errorf("the first sandbox start at %v, the last app start at %v: apps first %v, want %v",
						firstSB.Time.Sub(apps[0].Time), lastApp.Time.Sub(apps[0].Time), got, hostNetwork)
				}
				for _, u := range uids {
					sb, app := podContainer(t, rt, u, runtimeadapter.SandboxName), podContainer(t, rt, u, "app")
					sbCreate, _ := callOf(rt, fake.MethodCreate, sb.Name)
					appStart, _ := callOf(rt, fake.MethodStart, app.ID)
					if appStart.Time.Before(sbCreate.Time.Add(createTakes)) {
						t.Errorf("pod %s: the app's start began before its sandbox's create returned: the sandbox must exist first", u)
					}
				}
				if c, s := rt.CallCount(fake.MethodCreate), rt.CallCount(fake.MethodStart); c != 2*n || s != 2*n {
					t.Errorf("%d creates and %d starts, want %d each", c, s, 2*n)
				}
				if k := rt.CallCount(fake.MethodStop) + rt.CallCount(fake.MethodRemove); k != 0 {
					t.Errorf("%d stops and removals, want none", k)
				}
				h.stop()
				rt.Close()
			})
		})
	}
}

// A host-network pod waiting for its image's pull holds back no other
// pod's sandbox: b's sandbox and app run while a's 30 s pull goes on.
func TestPullHoldsBackNoSandbox(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.WithImages("pause:1", "work:1"), fake.WithPullable("slow:1"))
		rt.SetDelay(fake.MethodPullImage, 30*time.Second)
		rt.SetDelay(fake.MethodStart, 100*time.Millisecond)
		h := newHarness(t, rt)
		h.start()
		a, b := testPod("a", "uid-a", v1.RestartPolicyAlways, "app"), testPod("b", "uid-b", v1.RestartPolicyAlways, "app")
		a.Spec.Containers[0].Image, a.Spec.Containers[0].ImagePullPolicy = "slow:1", v1.PullIfNotPresent
		a.Spec.HostNetwork, b.Spec.HostNetwork = true, true
		h.apply(a, b)
		waitFor(t, 5*time.Second, "b's sandbox and app running, and a's sandbox, while a's image is pulled", func() bool {
			return len(rt.Running("uid-b", runtimeadapter.SandboxName)) == 1 && len(rt.Running("uid-b", "app")) == 1 &&
				len(rt.Running("uid-a", runtimeadapter.SandboxName)) == 1
		})
		if len(rt.Running("uid-a", "app")) != 0 {
			t.Fatal("a's app runs before its image is pulled")
		}
		waitFor(t, 40*time.Second, "a running once its image is pulled", func() bool { return len(rt.Running("uid-a", "app")) == 1 })
		h.stop()
		rt.Close()
	})
}
