package e2ecri

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// TestStartAdoptRemove: a hostNetwork pod starts on containerd (a sandbox
// and its app), its log is served by the API; an agent killed with
// SIGKILL is replaced by one that adopts the pod with zero recreations;
// deleting the manifest removes every container and the sandbox.
func TestStartAdoptRemove(t *testing.T) {
	e := newEnv(t, "t-cri-adopt")
	path := e.writeManifest("web.yaml", hostPod("web", "Always"))
	a1 := e.startAgent("agent-1")
	events := a1.waitLog("container exits: containerd task events, the relist as the safety net")
	if events["relistPeriod"] == nil || events["namespace"] != "k8s.io" || events["containerd"] != e.cd.Endpoint {
		t.Errorf("the exit path's log names no relist period, or not the endpoint's containerd and namespace k8s.io: %v", events)
	}
	if events["criEvents"] != "GetContainerEvents Unimplemented (as on containerd 1.6)" {
		t.Errorf("the exit path's log does not say containerd 1.6 answers GetContainerEvents Unimplemented: %v", events)
	}
	var running []runtimeadapter.Container
	e.waitFor(waitTimeout, "pod web's sandbox and app running", func() bool {
		running = running[:0]
		for _, c := range e.list() {
			if c.State == runtimeadapter.StateRunning {
				running = append(running, c)
			}
		}
		return len(byName(running, runtimeadapter.SandboxName)) == 1 && len(byName(running, "app")) == 1
	})
	before := ids(e.list())

	api := a1.api()
	e.waitFor(waitTimeout, "the app's log through the API", func() bool {
		body, ok := get(t, api+"/logs/default/web/app")
		return ok && strings.Contains(body, "testworkload: started")
	})

	a1.kill()
	a2 := e.startAgent("agent-2")
	api = a2.api()
	app := byName(running, "app")[0]
	e.waitFor(waitTimeout, "agent-2 reporting pod web Running on the app it adopted", func() bool {
		body, ok := get(t, api+"/pods/default/web")
		if !ok {
			return false
		}
		var pod v1.Pod
		if json.Unmarshal([]byte(body), &pod) != nil || pod.Status.Phase != v1.PodRunning || len(pod.Status.ContainerStatuses) != 1 {
			return false
		}
		cs := pod.Status.ContainerStatuses[0]
		return cs.Ready && cs.ContainerID == "containerd://"+app.ID
	})
	// Two more relists: nothing recreated, nothing restarted.
	a2.waitLog("actorlet running")
	deadline := time.Now().Add(2 * relistPeriod)
	for time.Now().Before(deadline) {
		if after := ids(e.list()); !equal(before, after) {
			t.Fatalf("after the agent's restart the node has %v, before %v: something was recreated", after, before)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, c := range e.list() {
		if c.State != runtimeadapter.StateRunning {
			t.Errorf("after the agent's restart %s is %s", c.Name, c.RawState)
		}
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	e.waitFor(waitTimeout, "pod web removed", func() bool { return len(e.list()) == 0 })
}

// TestCrashLoopBackOff: a container that exits 1 is restarted at once,
// then after 1 s, then 2 s (the agent's --backoff-initial and
// --backoff-max), each restart a new container with restartCount + 1.
func TestCrashLoopBackOff(t *testing.T) {
	e := newEnv(t, "t-cri-backoff")
	e.writeManifest("crash.yaml", hostPod("crash", "Always", "--exit-code", "1", "--exit-after", "200ms"))
	e.startAgent("agent")
	byCount := map[int]runtimeadapter.Container{}
	e.waitFor(time.Minute, "the app's fourth instance (restartCount 3) exited", func() bool {
		for _, c := range byName(e.list(), "app") {
			m, err := runtimeadapter.ParseMeta(c.Labels)
			if err == nil {
				byCount[m.RestartCount] = c
			}
		}
		c, ok := byCount[3]
		return ok && c.State == runtimeadapter.StateExited
	})
	// The container GC keeps only the newest exited instance, so older
	// ones may be gone; check the delays of those that were seen.
	for n, want := range map[int]time.Duration{1: 0, 2: time.Second, 3: 2 * time.Second} {
		prev, ok1 := byCount[n-1]
		cur, ok2 := byCount[n]
		if !ok1 || !ok2 || prev.FinishedAt.IsZero() || cur.StartedAt.IsZero() {
			continue
		}
		if got := cur.StartedAt.Sub(prev.FinishedAt); got < want-100*time.Millisecond {
			t.Errorf("restart %d came %v after the exit, before its back-off %v", n, got, want)
		}
		if cur.ExitCode != 1 || cur.Reason != "Error" {
			t.Errorf("instance %d: exit %d reason %q, want 1, Error", n, cur.ExitCode, cur.Reason)
		}
	}
	if len(byCount) < 2 {
		t.Errorf("saw instances %v only", keys(byCount))
	}
}

// TestOrphanRemoved: a pod of this node that no source wants (left by an
// earlier agent) is stopped and removed, its app first.
func TestOrphanRemoved(t *testing.T) {
	e := newEnv(t, "t-cri-orphan")
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	meta := runtimeadapter.Meta{Node: e.node, PodUID: "orphan-uid", PodName: "orphan", PodNamespace: "default",
		ContainerName: runtimeadapter.SandboxName, Type: runtimeadapter.TypeSandbox, GracePeriod: time.Second}
	sid, err := e.rt.Create(ctx, runtimeadapter.ContainerSpec{Name: "actorlet_POD_orphan_default_orphan-u_0", Labels: meta.Labels(), NetworkMode: "host"})
	if err != nil {
		t.Fatal(err)
	}
	meta.ContainerName, meta.Type = "app", runtimeadapter.TypeApp
	aid, err := e.rt.Create(ctx, runtimeadapter.ContainerSpec{Name: "actorlet_app_orphan_default_orphan-u_0",
		Image: "actorlet/testworkload:0.1.0", Labels: meta.Labels(), NetworkMode: "container:" + sid})
	if err == nil {
		err = e.rt.Start(ctx, aid)
	}
	if err != nil {
		t.Fatal(err)
	}
	a := e.startAgent("agent")
	e.waitFor(waitTimeout, "the orphan pod removed", func() bool { return len(e.list()) == 0 })
	a.waitLog("removing orphan pod")
}

func ids(cs []runtimeadapter.Container) map[string]string {
	out := map[string]string{}
	for _, c := range cs {
		out[c.ID] = c.RawState
	}
	return out
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

func keys(m map[int]runtimeadapter.Container) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	return out
}
