package actors

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/actorlet/actorlet/internal/protocol"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// A container that exits 1 s after each start is restarted at its exact
// CrashLoopBackOff deadlines, the kubelet's curve: at once after the first
// exit, then finish + 10 s, 20 s, 40 s, with the restart count rising by
// one each time and never two live instances.
func TestCrashLoopRestartsAtBackoffDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("app", fake.Behavior{ExitCode: 1, ExitAfter: time.Second})
		h := newHarness(t, rt)
		h.start()
		pod := testPod("crasher", "uid-crash", v1.RestartPolicyAlways, "app")
		h.apply(pod)

		prefix := "actorlet_app_crasher_default_"
		waitFor(t, 200*time.Second, "five app creates", func() bool {
			if n := len(h.live("uid-crash", "app")); n > 1 {
				t.Fatalf("%d live app containers (invariant 1)", n)
			}
			return len(h.creates(prefix)) >= 5
		})
		got := h.creates(prefix)
		first := got[0]
		// Each exits 1 s after its start; then a wait of 0, 10 s, 20 s, 40 s
		// after the finish.
		want := []time.Duration{0, 1 * time.Second, 12 * time.Second, 33 * time.Second, 74 * time.Second}
		for i, w := range want {
			if d := got[i].Sub(first); d != w {
				t.Errorf("create %d at +%v, want +%v", i, d, w)
			}
		}
		var counts []string
		for _, c := range rt.Containers() {
			if c.Labels[runtimeadapter.LabelContainerName] == "app" {
				counts = append(counts, c.Labels[runtimeadapter.LabelRestartCount])
			}
		}
		// The newest dead instance is kept for --previous; older ones are
		// removed by the GC (once a minute).
		time.Sleep(time.Minute)
		synctest.Wait()
		counts = counts[:0]
		for _, c := range rt.Containers() {
			if c.Labels[runtimeadapter.LabelContainerName] == "app" {
				counts = append(counts, c.Labels[runtimeadapter.LabelRestartCount])
			}
		}
		if len(counts) > 2 {
			t.Errorf("%d app instances kept (%v), want at most the live one and the newest dead one", len(counts), counts)
		}
		h.stop()
		rt.Close()
	})
}

// A container that ran more than twice the back-off's cap (600 s) after
// its last restart is restarted at once again, and the curve starts over;
// the kubelet's flowcontrol expiry.
func TestCrashLoopBackoffExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("app", fake.Behavior{ExitCode: 1, ExitAfter: time.Second})
		// The third instance (attempt 2) runs 601 s.
		rt.SetBehavior(func(s runtimeadapter.ContainerSpec) bool {
			return strings.HasSuffix(s.Name, "_2") && s.Labels[runtimeadapter.LabelContainerName] == "app"
		},
			fake.Behavior{ExitCode: 1, ExitAfter: 601 * time.Second})
		h := newHarness(t, rt)
		h.start()
		h.apply(testPod("crasher", "uid-crash", v1.RestartPolicyAlways, "app"))
		prefix := "actorlet_app_crasher_default_"
		waitFor(t, 1000*time.Second, "five app creates", func() bool { return len(h.creates(prefix)) >= 5 })
		got := h.creates(prefix)
		// Exits at +1 (restart at once), +2 (wait 10 s), +613 (601 s after
		// the restart at +12: expired, at once), +614 (wait 10 s again).
		want := []time.Duration{0, 1 * time.Second, 12 * time.Second, 613 * time.Second, 624 * time.Second}
		for i, w := range want {
			if d := got[i].Sub(got[0]); d != w {
				t.Errorf("create %d at +%v, want +%v", i, d, w)
			}
		}
		h.stop()
		rt.Close()
	})
}

// A status report shows CrashLoopBackOff while the restart waits.
func TestStatusShowsCrashLoopBackOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("app", fake.Behavior{ExitCode: 2, ExitAfter: time.Second})
		h := newHarness(t, rt)
		h.start()
		h.apply(testPod("crasher", "uid-st", v1.RestartPolicyAlways, "app"))
		time.Sleep(5 * time.Second) // exits at +1 s (restarted at once) and +2 s (restart due at +12 s)
		synctest.Wait()
		res, err := h.sys.Root.RequestFuture(h.pid, &messages.GetPodStatuses{}, time.Second).Result()
		if err != nil {
			t.Fatal(err)
		}
		pods := res.(*messages.PodStatuses).Pods
		if len(pods) != 1 {
			t.Fatalf("%d pods", len(pods))
		}
		cs := pods[0].Status.ContainerStatuses
		if len(cs) != 1 || cs[0].State.Waiting == nil || cs[0].State.Waiting.Reason != "CrashLoopBackOff" {
			t.Fatalf("container status %+v, want waiting CrashLoopBackOff", cs)
		}
		if lt := cs[0].LastTerminationState.Terminated; lt == nil || lt.ExitCode != 2 {
			t.Fatalf("lastState %+v, want terminated with exit 2", cs[0].LastTerminationState)
		}
		h.stop()
		rt.Close()
	})
}

// A labelled container of this node whose pod is not desired is an
// orphan: untouched until every source has synced, then stopped within two
// relists and removed. A container without labels is never touched, and
// neither is one labelled for another node.
func TestOrphansKilledOnlyAfterSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		labels := runtimeadapter.Meta{Node: testNode, PodUID: "ghost", PodName: "ghost", PodNamespace: "default",
			ContainerName: "app", Type: runtimeadapter.TypeApp, GracePeriod: 5 * time.Second}.Labels()
		orphan := rt.AddContainer(runtimeadapter.Container{Name: "orphan", Image: "work:1", Labels: labels, State: runtimeadapter.StateRunning})
		other := runtimeadapter.Meta{Node: "node-b", PodUID: "ghost", ContainerName: "app", Type: runtimeadapter.TypeApp}.Labels()
		otherNode := rt.AddContainer(runtimeadapter.Container{Name: "other-node", Image: "work:1", Labels: other, State: runtimeadapter.StateRunning})
		foreign := rt.AddContainer(runtimeadapter.Container{Name: "foreign", Image: "work:1", Labels: map[string]string{"app": "x"}, State: runtimeadapter.StateRunning})

		h := newHarness(t, rt)
		h.start()
		time.Sleep(5 * time.Second) // five relists, source not synced
		synctest.Wait()
		for _, c := range rt.Calls() {
			if (c.Method == fake.MethodStop || c.Method == fake.MethodRemove) && c.Arg == orphan {
				t.Fatalf("orphan touched before the source synced: %+v", c)
			}
		}
		h.apply() // synced, empty
		synced := time.Now()
		waitFor(t, 2*time.Second+10*time.Millisecond, "the orphan to start stopping", func() bool {
			return rt.CallCount(fake.MethodStop) > 0
		})
		waitFor(t, 5*time.Second+2*time.Second, "the orphan to be removed", func() bool {
			for _, c := range rt.Containers() {
				if c.ID == orphan {
					return false
				}
			}
			return true
		})
		if d := time.Since(synced); d > 7*time.Second {
			t.Errorf("orphan gone after %v, want within grace (5 s) + two relists", d)
		}
		for _, c := range rt.Calls() {
			if (c.Method == fake.MethodStop || c.Method == fake.MethodRemove) && (c.Arg == foreign || c.Arg == otherNode) {
				t.Fatalf("a container that is not this node's was touched: %+v", c)
			}
		}
		h.stop()
		rt.Close()
	})
}

// Removing a pod stops its app containers, then its sandbox, and removes
// them all.
func TestRemovedPodLeavesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		h := newHarness(t, rt)
		h.start()
		h.apply(testPod("web", "uid-web", v1.RestartPolicyAlways, "a", "b"))
		waitFor(t, 10*time.Second, "three containers", func() bool { return len(rt.Containers()) == 3 })
		h.apply()
		waitFor(t, 40*time.Second, "no containers", func() bool { return len(rt.Containers()) == 0 })
		h.stop()
		rt.Close()
	})
}

// Invariant 4: stopping the actor tree and starting a new one on the same
// runtime recreates nothing that is still running.
func TestRestartOfAgentRecreatesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		h := newHarness(t, rt)
		h.start()
		pod := testPod("web", "uid-web", v1.RestartPolicyAlways, "a", "b")
		h.apply(pod)
		waitFor(t, 10*time.Second, "three running containers", func() bool { return len(rt.Running("uid-web", "a")) == 1 && len(rt.Running("uid-web", "b")) == 1 })
		h.stop()
		before := rt.CallCount(fake.MethodCreate)

		h2 := newHarness(t, rt)
		h2.start()
		h2.apply(pod)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if n := rt.CallCount(fake.MethodCreate); n != before {
			t.Fatalf("%d creates after restart, want none", n-before)
		}
		if n := rt.CallCount(fake.MethodStop); n != 0 {
			t.Fatalf("%d stops after restart, want none", n)
		}
		h2.stop()
		rt.Close()
	})
}

// A real edit of a static pod gives it a new UID under the same name: the
// replacement's sandbox is created only once the old pod has fully stopped.
func TestReplacementStartsAfterOldStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("app", fake.Behavior{RunForever: true, IgnoreSIGTERM: true})
		h := newHarness(t, rt)
		h.start()
		h.apply(testPod("web", "uid-old", v1.RestartPolicyAlways, "app"))
		waitFor(t, 10*time.Second, "old running", func() bool { return len(rt.Running("uid-old", "app")) == 1 })
		h.apply(testPod("web", "uid-new", v1.RestartPolicyAlways, "app"))
		waitFor(t, 60*time.Second, "new running", func() bool { return len(rt.Running("uid-new", "app")) == 1 })
		var lastOldRemove, firstNewCreate time.Time
		for _, c := range rt.Calls() {
			if c.Method == fake.MethodRemove {
				lastOldRemove = c.Time
			}
			if c.Method == fake.MethodCreate && firstNewCreate.IsZero() && c.Arg == "actorlet_POD_web_default_uid-new_0" {
				firstNewCreate = c.Time
			}
		}
		if firstNewCreate.Before(lastOldRemove) || firstNewCreate.IsZero() {
			t.Fatalf("new sandbox created at %v, before the old pod was removed at %v", firstNewCreate, lastOldRemove)
		}
		// The old app ignored SIGTERM: it was killed at the 30 s grace.
		if d := lastOldRemove.Sub(h.creates("actorlet_app_web_default_uid-old")[0]); d < 30*time.Second {
			t.Errorf("old pod removed %v after start; its grace period is 30 s", d)
		}
		h.stop()
		rt.Close()
	})
}

// A create whose answer is lost (the container exists, the call failed) is
// retried: the sandbox is adopted by its deterministic name or state, and
// the app container by name conflict; nothing is duplicated.
func TestLostCreateAnswersAreAdopted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.InjectErrorAfter(fake.MethodCreate, errors.New("connection reset"), 2)
		h := newHarness(t, rt)
		h.start()
		h.apply(testPod("web", "uid-web", v1.RestartPolicyAlways, "app"))
		waitFor(t, 30*time.Second, "app running", func() bool { return len(rt.Running("uid-web", "app")) == 1 })
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if n := len(rt.Containers()); n != 2 {
			var names []string
			for _, c := range rt.Containers() {
				names = append(names, c.Name+"/"+c.RawState)
			}
			t.Fatalf("%d containers %v, want exactly one sandbox and one app", n, names)
		}
		for _, c := range rt.Containers() {
			if c.State != runtimeadapter.StateRunning {
				t.Errorf("container %s is %s, want running", c.Name, c.RawState)
			}
			if c.Labels[runtimeadapter.LabelRestartCount] != "0" {
				t.Errorf("container %s has restart count %s, want 0", c.Name, c.Labels[runtimeadapter.LabelRestartCount])
			}
		}
		h.stop()
		rt.Close()
	})
}

// A failed relist is an error, never an empty list: while every list
// fails, no orphan is killed and no container is touched; lists are
// retried with exponential backoff (1 s, 2 s, 4 s, 8 s …).
func TestFailedRelistTouchesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		h := newHarness(t, rt)
		h.start()
		h.apply(testPod("web", "uid-web", v1.RestartPolicyAlways, "app"))
		waitFor(t, 10*time.Second, "app running", func() bool { return len(rt.Running("uid-web", "app")) == 1 })
		rt.InjectError(fake.MethodList, runtimeadapter.ErrUnavailable, -1)
		rt.ResetCalls()
		h.sys.Root.Send(h.pid, &protocol.DesiredPods{Source: "test", Pods: []*v1.Pod{testPod("web", "uid-web", v1.RestartPolicyAlways, "app")}}) // triggers a relist now
		time.Sleep(20 * time.Second)
		synctest.Wait()
		var lists []time.Time
		for _, c := range rt.Calls() {
			switch {
			case c.Method == fake.MethodList && c.Arg != "" && c.Err != nil && !strings.Contains(c.Arg, "uid-web"):
				lists = append(lists, c.Time)
			case c.Method != fake.MethodList && c.Method != fake.MethodEvents:
				t.Fatalf("runtime call %s(%s) while lists fail", c.Method, c.Arg)
			}
		}
		var gaps []time.Duration
		for i := 1; i < len(lists); i++ {
			gaps = append(gaps, lists[i].Sub(lists[i-1]))
		}
		want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}
		if len(gaps) < len(want) {
			t.Fatalf("relist retries %v, want gaps %v", gaps, want)
		}
		for i, w := range want {
			if gaps[i] != w {
				t.Fatalf("relist retry gaps %v, want %v …", gaps, want)
			}
		}
		if len(rt.Running("uid-web", "app")) != 1 {
			t.Fatal("the running app container is gone")
		}
		rt.ClearFaults()
		h.stop()
		rt.Close()
	})
}

// Removal stops the app containers before the sandbox, each with the pod's
// grace period.
func TestRemovalStopsAppsBeforeSandbox(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		h := newHarness(t, rt)
		h.start()
		pod := testPod("web", "uid-web", v1.RestartPolicyAlways, "a", "b")
		grace := int64(7)
		pod.Spec.TerminationGracePeriodSeconds = &grace
		h.apply(pod)
		waitFor(t, 10*time.Second, "apps running", func() bool {
			return len(rt.Running("uid-web", "a")) == 1 && len(rt.Running("uid-web", "b")) == 1
		})
		names := map[string]string{}
		for _, c := range rt.Containers() {
			names[c.ID] = c.Labels[runtimeadapter.LabelContainerName]
		}
		h.apply()
		waitFor(t, 30*time.Second, "no containers", func() bool { return len(rt.Containers()) == 0 })
		var order []string
		for _, c := range rt.Calls() {
			if c.Method == fake.MethodStop {
				order = append(order, names[c.Arg])
				if c.Grace != 7*time.Second {
					t.Errorf("stop %s with grace %v, want the pod's 7s", c.Arg, c.Grace)
				}
			}
		}
		if len(order) != 3 || order[2] != runtimeadapter.SandboxName {
			t.Fatalf("stop order %v, want both apps, then the sandbox", order)
		}
		h.stop()
		rt.Close()
	})
}

func TestDefaultRelistPeriodIsOneSecond(t *testing.T) {
	if c := (Config{}).withDefaults(); c.RelistPeriod != time.Second {
		t.Fatalf("default relist period %v, want 1s as the kubelet", c.RelistPeriod)
	}
}

// Init containers run one at a time, in order, each to exit 0, before the
// app container; they are not re-run while the sandbox lives, and all run
// again in order when it is lost.
func TestInitContainersRunInOrderOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("init1", fake.Behavior{ExitAfter: time.Second})
		rt.ScriptContainer("init2", fake.Behavior{ExitAfter: 2 * time.Second})
		h := newHarness(t, rt)
		h.start()
		pod := testPod("web", "uid-init", v1.RestartPolicyAlways, "app")
		pod.Spec.InitContainers = []v1.Container{{Name: "init1", Image: "work:1"}, {Name: "init2", Image: "work:1"}}
		h.apply(pod)
		waitFor(t, 20*time.Second, "app running", func() bool { return len(rt.Running("uid-init", "app")) == 1 })
		i1, i2, app := h.creates("actorlet_init1_"), h.creates("actorlet_init2_"), h.creates("actorlet_app_")
		if len(i1) != 1 || len(i2) != 1 || len(app) != 1 {
			t.Fatalf("creates: init1 %d, init2 %d, app %d; want one each", len(i1), len(i2), len(app))
		}
		if !(i1[0].Add(time.Second).Compare(i2[0]) <= 0 && i2[0].Add(2*time.Second).Compare(app[0]) <= 0) {
			t.Fatalf("order: init1 at %v, init2 at %v, app at %v; want each after the previous exited", i1[0], i2[0], app[0])
		}
		time.Sleep(30 * time.Second)
		synctest.Wait()
		if n := len(h.creates("actorlet_init1_")); n != 1 {
			t.Fatalf("init1 created %d times while the sandbox lived, want once", n)
		}
		// Lose the sandbox: everything runs again, inits first.
		for _, c := range rt.Containers() {
			if c.Labels[runtimeadapter.LabelContainerType] == string(runtimeadapter.TypeSandbox) && c.State == runtimeadapter.StateRunning {
				if err := rt.Kill(c.ID, 137); err != nil {
					t.Fatal(err)
				}
			}
		}
		waitFor(t, 30*time.Second, "app running again", func() bool {
			return len(h.creates("actorlet_app_")) == 2 && len(rt.Running("uid-init", "app")) == 1
		})
		i1, i2, app = h.creates("actorlet_init1_"), h.creates("actorlet_init2_"), h.creates("actorlet_app_")
		if len(i1) != 2 || len(i2) != 2 || !(i1[1].Before(i2[1]) && i2[1].Before(app[1])) {
			t.Fatalf("after sandbox loss: init1 %v, init2 %v, app %v; want all again, in order", i1, i2, app)
		}
		var sandboxes int
		for _, c := range rt.Containers() {
			if c.Labels[runtimeadapter.LabelContainerType] == string(runtimeadapter.TypeSandbox) && c.State == runtimeadapter.StateRunning {
				sandboxes++
			}
		}
		if sandboxes != 1 {
			t.Fatalf("%d running sandboxes, want 1", sandboxes)
		}
		h.stop()
		rt.Close()
	})
}

// A pod whose host port collides with an admitted pod's is rejected:
// Failed, reason NodePorts, and no containers.
func TestHostPortClashRejected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		h := newHarness(t, rt)
		h.start()
		port := v1.ContainerPort{ContainerPort: 80, HostPort: 8080, Protocol: v1.ProtocolTCP}
		a, b := portPod("a-first", port), portPod("b-second", port)
		h.apply(a, b)
		waitFor(t, 10*time.Second, "a running", func() bool { return len(rt.Running("uid-a-first", "app")) == 1 })
		time.Sleep(5 * time.Second)
		synctest.Wait()
		for _, c := range rt.Containers() {
			if c.Labels[runtimeadapter.LabelPodUID] == "uid-b-second" {
				t.Fatalf("rejected pod got container %s", c.Name)
			}
		}
		res, err := h.sys.Root.RequestFuture(h.pid, &messages.GetPodStatuses{}, time.Second).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range res.(*messages.PodStatuses).Pods {
			if p.Name == "b-second" && (p.Status.Phase != v1.PodFailed || p.Status.Reason != "NodePorts") {
				t.Fatalf("b-second status %s/%s, want Failed/NodePorts", p.Status.Phase, p.Status.Reason)
			}
		}
		h.stop()
		rt.Close()
	})
}

// A pod whose requests do not fit in the node's allocatable resources is
// rejected before it gets a container: Failed, reason OutOfcpu, the
// kubelet's message, a warning event; a pod that fits runs.
func TestResourceAdmissionRejects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		h := newHarness(t, rt)
		h.cfg.Spec.Allocatable = v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("4Gi")}
		h.start()
		fits := testPod("a-fits", "uid-fits", v1.RestartPolicyAlways, "app")
		fits.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("1500m")}
		big := testPod("b-big", "uid-big", v1.RestartPolicyAlways, "app")
		big.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("100")}
		h.apply(fits, big)
		waitFor(t, 10*time.Second, "fits running", func() bool { return len(rt.Running("uid-fits", "app")) == 1 })
		const want = "Pod was rejected: Node didn't have enough resource: cpu, requested: 100000, used: 1500, capacity: 2000"
		waitFor(t, 10*time.Second, "big Failed/OutOfcpu", func() bool {
			res, err := h.sys.Root.RequestFuture(h.pid, &messages.GetPodStatuses{}, time.Second).Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range res.(*messages.PodStatuses).Pods {
				if p.Name == "b-big" {
					return p.Status.Phase == v1.PodFailed && p.Status.Reason == "OutOfcpu" && p.Status.Message == want
				}
			}
			return false
		})
		res, _ := h.sys.Root.RequestFuture(h.pid, &messages.GetEvents{}, time.Second).Result()
		events := 0
		for _, e := range res.(*messages.Events).Items {
			if e.Pod == "b-big" && e.Reason == "OutOfcpu" && e.Type == messages.EventWarning && e.Message == strings.TrimPrefix(want, "Pod was rejected: ") {
				events++
			}
		}
		if events != 1 {
			t.Errorf("%d OutOfcpu warning events for big, want 1", events)
		}
		for _, c := range rt.Containers() {
			if c.Labels[runtimeadapter.LabelPodUID] == "uid-big" {
				t.Fatalf("rejected pod got container %s", c.Name)
			}
		}
		h.stop()
		rt.Close()
	})
}

// A container whose image cannot be pulled waits (ErrImagePull, then
// ImagePullBackOff at 10 s doubling), never blocks other pods, and starts
// once the image can be pulled. (TestImagePullReasonsAndEvents times the
// reasons.)
func TestImagePullBackOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.WithImages("pause:1", "work:1"))
		h := newHarness(t, rt)
		h.start()
		good := testPod("good", "uid-good", v1.RestartPolicyAlways, "app")
		bad := testPod("bad", "uid-bad", v1.RestartPolicyAlways, "app")
		bad.Spec.Containers[0].Image = "registry.example/missing:1"
		bad.Spec.Containers[0].ImagePullPolicy = v1.PullIfNotPresent
		h.apply(good, bad)
		waitFor(t, 5*time.Second, "good running", func() bool { return len(rt.Running("uid-good", "app")) == 1 })
		time.Sleep(2 * time.Second)
		synctest.Wait()
		status := func() string {
			res, err := h.sys.Root.RequestFuture(h.pid, &messages.GetPodStatuses{}, time.Second).Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range res.(*messages.PodStatuses).Pods {
				if p.Name == "bad" && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Waiting != nil {
					return p.Status.ContainerStatuses[0].State.Waiting.Reason
				}
			}
			return ""
		}
		if r := status(); r != "ErrImagePull" && r != "ImagePullBackOff" {
			t.Fatalf("bad pod's container waits with %q, want ErrImagePull or ImagePullBackOff", r)
		}
		pulls := rt.PullCount("registry.example/missing:1")
		time.Sleep(5 * time.Second) // inside the 10 s back-off: no new pull
		synctest.Wait()
		if n := rt.PullCount("registry.example/missing:1"); n != pulls {
			t.Fatalf("%d pulls during the back-off", n-pulls)
		}
		waitFor(t, 40*time.Second, "ImagePullBackOff", func() bool { return status() == "ImagePullBackOff" })
		rt.AddPullable("registry.example/missing:1")
		waitFor(t, 60*time.Second, "bad running once its image can be pulled", func() bool { return len(rt.Running("uid-bad", "app")) == 1 })
		res, _ := h.sys.Root.RequestFuture(h.pid, &messages.GetEvents{}, time.Second).Result()
		reasons := map[string]bool{}
		for _, e := range res.(*messages.Events).Items {
			if e.Pod == "bad" {
				reasons[e.Reason] = true
			}
		}
		for _, want := range []string{"Pulling", "Failed", "BackOff", "Pulled", "Started"} {
			if !reasons[want] {
				t.Errorf("no %s event for the bad pod (have %v)", want, reasons)
			}
		}
		h.stop()
		rt.Close()
	})
}

// A long pull reports its layers' progress as Pulling events of the pods
// waiting for the image.
func TestPullProgressEvents(t *testing.T) {
	h := newPullProgress()
	var got []string
	w := &worker{pulling: "app", emit: func(_ messages.EventType, reason, container, msg string) {
		got = append(got, reason+" "+container+" "+msg)
	}}
	done := h.wait("busybox:1", w)
	h.report("docker.io/library/busybox:1", runtimeadapter.PullProgress{Layer: "abc", Status: "Downloading", Current: 1e6, Total: 4e6})
	h.report("docker.io/library/busybox:1", runtimeadapter.PullProgress{Layer: "abc", Status: "Downloading", Current: 2e6, Total: 4e6})
	h.report("docker.io/library/busybox:1", runtimeadapter.PullProgress{Layer: "abc", Status: "Pull complete"})
	done()
	h.report("docker.io/library/busybox:1", runtimeadapter.PullProgress{Layer: "abc", Status: "Extracting"})
	want := []string{
		`Pulling app Pulling image "docker.io/library/busybox:1": layer abc: Downloading (1.0 of 4.0 MB)`,
		`Pulling app Pulling image "docker.io/library/busybox:1": layer abc: Pull complete`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// StopAllPods stops and removes every pod, ignores the sources from then
// on, and answers once everything is gone (--stop-pods-on-exit).
func TestStopAllPods(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		h := newHarness(t, rt)
		h.start()
		h.apply(testPod("a", "uid-a", v1.RestartPolicyAlways, "app"), testPod("b", "uid-b", v1.RestartPolicyAlways, "app"))
		waitFor(t, 10*time.Second, "pods running", func() bool {
			return len(rt.Running("uid-a", "app")) == 1 && len(rt.Running("uid-b", "app")) == 1
		})
		res, err := h.sys.Root.RequestFuture(h.pid, &messages.StopAllPods{}, time.Minute).Result()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := res.(*messages.AllPodsStopped); !ok {
			t.Fatalf("answer %T", res)
		}
		if n := len(rt.Containers()); n != 0 {
			t.Fatalf("%d containers left after StopAllPods answered", n)
		}
		h.apply(testPod("a", "uid-a", v1.RestartPolicyAlways, "app")) // a source still sending
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if n := len(rt.Containers()); n != 0 {
			t.Fatalf("a source restarted %d containers while stopping", n)
		}
		h.stop()
		rt.Close()
	})
}
