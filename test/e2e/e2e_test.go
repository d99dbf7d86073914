package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// expectedName is the documented runtime name of a container:
// actorlet_<container>_<pod>_<namespace>_<uid prefix>_<attempt>.
func expectedName(container, pod, uid string, attempt int) string {
	return fmt.Sprintf("actorlet_%s_%s_default_%s_%d", container, pod, uid[:min(8, len(uid))], attempt)
}

// A manifest with two containers becomes a running sandbox and two app
// containers joined to its network namespace, labelled, named and
// configured as documented.
func TestPodComesUp(t *testing.T) {
	e := newEnv(t, "e2e-up")
	e.writeManifest("web.yaml", podManifest("web", -1, "app", "sidecar"))
	a := e.startAgent("agent")
	pod := e.waitPodRunning(a, "web", "app", "sidecar")
	if len(pod) != 3 {
		t.Fatalf("pod web: want 3 containers (sandbox, app, sidecar), got %s", pod)
	}

	sandbox := pod.running(runtimeadapter.SandboxName)[0]
	uid := sandbox.Labels[runtimeadapter.LabelPodUID]
	if uid == "" {
		t.Fatalf("sandbox %s has no %s label: %v", sandbox.Name, runtimeadapter.LabelPodUID, sandbox.Labels)
	}
	for _, c := range pod {
		name := c.Labels[runtimeadapter.LabelContainerName]
		typ, image := "app", testimages.TestWorkloadTag
		if c.ID == sandbox.ID {
			typ, image = "sandbox", testimages.PauseTag
		}
		want := map[string]string{
			runtimeadapter.LabelNode:          e.node,
			runtimeadapter.LabelPodUID:        uid,
			runtimeadapter.LabelPodName:       "web",
			runtimeadapter.LabelPodNamespace:  "default",
			runtimeadapter.LabelContainerType: typ,
			runtimeadapter.LabelRestartCount:  "0",
			runtimeadapter.LabelGracePeriod:   "30",
		}
		for k, v := range want {
			if got, ok := c.Labels[k]; !ok || got != v {
				t.Errorf("container %s: label %s = %q (present: %v), want %q", c.Name, k, got, ok, v)
			}
		}
		if c.Labels[runtimeadapter.LabelContainerHash] == "" {
			t.Errorf("container %s: label %s missing or empty", c.Name, runtimeadapter.LabelContainerHash)
		}

		in, found := e.inspect(c.ID)
		if !found {
			t.Fatalf("container %s (%s) vanished", c.Name, short(c.ID))
		}
		if wantName := "/" + expectedName(name, "web", uid, 0); in.Name != wantName {
			t.Errorf("container %s: name %q, want %q", short(c.ID), in.Name, wantName)
		}
		if in.Config.Image != image {
			t.Errorf("container %s: image %q, want %q", c.Name, in.Config.Image, image)
		}
		if in.State == nil || !in.State.Running {
			t.Errorf("container %s: not running: %+v", c.Name, in.State)
		}
		hc := in.HostConfig
		if hc.RestartPolicy.Name != container.RestartPolicyDisabled {
			t.Errorf("container %s: restart policy %q, want %q", c.Name, hc.RestartPolicy.Name, container.RestartPolicyDisabled)
		}
		if hc.LogConfig.Type != "json-file" || hc.LogConfig.Config["max-size"] != "10m" || hc.LogConfig.Config["max-file"] != "5" {
			t.Errorf("container %s: log config %+v, want json-file max-size 10m max-file 5", c.Name, hc.LogConfig)
		}
		if typ == "app" {
			if want := "container:" + sandbox.ID; string(hc.NetworkMode) != want {
				t.Errorf("container %s: network mode %q, want %q (the sandbox's)", c.Name, hc.NetworkMode, want)
			}
		} else if hc.NetworkMode.IsContainer() {
			t.Errorf("sandbox %s: network mode %q joins another container", c.Name, hc.NetworkMode)
		}
	}
	for _, n := range []string{runtimeadapter.SandboxName, "app", "sidecar"} {
		if len(pod.running(n)) != 1 {
			t.Errorf("want one running %s, got %s", n, pod)
		}
	}
}

// A container killed from outside is replaced by a new one with restart
// count 1 at once (a first exit arms the back-off, as the kubelet); the
// sandbox and the other container are untouched and no two instances ever
// run at once.
func TestKilledContainerIsReplaced(t *testing.T) {
	e := newEnv(t, "e2e-kill")
	e.writeManifest("web.yaml", podManifest("web", 2, "app", "sidecar"))
	a := e.startAgent("agent")
	pod := e.waitPodRunning(a, "web", "app", "sidecar")
	sandboxID := pod.running(runtimeadapter.SandboxName)[0].ID
	sidecarID := pod.running("sidecar")[0].ID
	old := pod.running("app")[0]
	uid := old.Labels[runtimeadapter.LabelPodUID]
	untouched := map[string]string{sandboxID: "sandbox", sidecarID: "sidecar"}
	started := e.startTimes(untouched)

	// invariant checks what must hold at every poll: one app at most, the
	// sandbox and the sidecar unchanged.
	invariant := func(cs containers) {
		t.Helper()
		if n := len(cs.running("app")); n > 1 {
			t.Fatalf("%d app containers running at once: %s", n, cs)
		}
		if sb := cs.running(runtimeadapter.SandboxName); len(sb) != 1 || sb[0].ID != sandboxID {
			t.Fatalf("sandbox %s no longer the one running: %s", short(sandboxID), cs)
		}
		if sc := cs.running("sidecar"); len(sc) != 1 || sc[0].ID != sidecarID {
			t.Fatalf("sidecar %s no longer the one running: %s", short(sidecarID), cs)
		}
	}

	dockerCLI(t, "kill", old.ID)
	killed := time.Now()
	var repl runtimeadapter.Container
	// No back-off for a first exit; a few 1 s relists (and 1 s of slack).
	eventually(t, 1*time.Second+6*relistPeriod, "a new app container running", func() (bool, string) {
		a.requireRunning()
		cs := e.list().ofPod("web")
		invariant(cs)
		if r := cs.running("app"); len(r) == 1 && r[0].ID != old.ID {
			repl = r[0]
			return true, ""
		}
		return false, cs.String()
	})
	t.Logf("app %s killed; %s running %v later", short(old.ID), short(repl.ID), time.Since(killed).Round(time.Millisecond))
	if got := repl.Labels[runtimeadapter.LabelRestartCount]; got != "1" {
		t.Errorf("replacement %s: restart count label %q, want \"1\"", repl.Name, got)
	}
	if want := expectedName("app", "web", uid, 1); repl.Name != want {
		t.Errorf("replacement: name %q, want %q", repl.Name, want)
	}
	// A few more relists: still one instance, nothing else restarted.
	consistently(t, 3*relistPeriod, "one app instance (the replacement), same sandbox and sidecar", func() (bool, string) {
		a.requireRunning()
		cs := e.list().ofPod("web")
		invariant(cs)
		r := cs.running("app")
		return len(r) == 1 && r[0].ID == repl.ID, cs.String()
	})
	e.requireNotRestarted(untouched, started)
}

// Deleting a manifest stops and removes every container of its pod.
func TestManifestDeletedRemovesPod(t *testing.T) {
	e := newEnv(t, "e2e-delete")
	path := e.writeManifest("web.yaml", podManifest("web", 2, "app", "sidecar"))
	a := e.startAgent("agent")
	e.waitPodRunning(a, "web", "app", "sidecar")

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	// Grace 2 s (the workload exits on SIGTERM at once) plus relists.
	eventually(t, 2*time.Second+10*relistPeriod, "every container of pod web removed", func() (bool, string) {
		a.requireRunning()
		cs := e.list()
		return len(cs) == 0, cs.String()
	})
	if len(a.findLogs("pod removed")) == 0 {
		t.Errorf("no \"pod removed\" log line")
	}
}

// A container with actorlet's labels for this node and a pod UID no
// manifest has (left by an earlier agent, say) is stopped and removed; the
// node's desired pod is not touched.
func TestLabelledOrphanIsRemoved(t *testing.T) {
	e := newEnv(t, "e2e-orphan")
	orphanID := e.runWorkload("e2e-orphan-"+e.node, orphanLabels(e.node, "orphan-uid-"+e.node, "ghost", "app"))
	if cs := e.list(); len(cs.running("app")) != 1 {
		t.Fatalf("the orphan should be listed as a running managed container of the node: %s", cs)
	}
	e.writeManifest("keeper.yaml", podManifest("keeper", 2, "app"))
	a := e.startAgent("agent")

	// Grace 1 s plus two relists (invariant 2), with slack.
	eventually(t, 1*time.Second+8*relistPeriod, "orphan "+short(orphanID)+" removed", func() (bool, string) {
		a.requireRunning()
		in, found := e.inspect(orphanID)
		if !found {
			return true, ""
		}
		return false, "orphan still exists, " + in.State.Status
	})
	keeper := e.waitPodRunning(a, "keeper", "app")

	// The orphan is removed as a pod (apps, then sandbox) by a pod actor.
	removals := a.findLogs("removing orphan pod")
	if len(removals) != 1 || removals[0].str("podUID") != "orphan-uid-"+e.node || removals[0].str("pod") != "default/ghost" {
		t.Errorf("\"removing orphan pod\" log lines %v, want one, of default/ghost (orphan-uid-%s)", removals, e.node)
	}
	for _, l := range a.findLogs("killing container") {
		if id := l.str("id"); id == "" || !strings.HasPrefix(orphanID, id) || l.str("reason") != "PodRemoved" {
			t.Errorf("killed: %v; only %s is an orphan (keeper: %s)", l, short(orphanID), keeper)
		}
	}
}

// Containers without actorlet's labels (or labelled for another node, or
// missing an identifying label) are never stopped or removed, though the
// agent sweeps orphans among them.
func TestForeignContainersLeftAlone(t *testing.T) {
	e := newEnv(t, "e2e-alone")
	otherNode := testimages.NodeName("e2e-othernode")
	bystanders := map[string]string{ // description → ID
		"unlabelled": e.runWorkload("e2e-unlabelled-"+e.node, nil),
		"labelled for node " + otherNode: e.runWorkload("e2e-othernode-"+e.node,
			orphanLabels(otherNode, "other-uid-"+e.node, "ghost", "app")),
		"partially labelled (no pod uid, no type)": e.runWorkload("e2e-partial-"+e.node, map[string]string{
			runtimeadapter.LabelNode:          e.node,
			runtimeadapter.LabelPodName:       "ghost",
			runtimeadapter.LabelPodNamespace:  "default",
			runtimeadapter.LabelContainerName: "app",
		}),
	}
	started := map[string]string{}
	for what, id := range bystanders {
		in, found := e.inspect(id)
		if !found || !in.State.Running {
			t.Fatalf("%s container %s not running before the agent starts", what, short(id))
		}
		started[id] = in.State.StartedAt
	}
	orphanID := e.runWorkload("e2e-orphan-"+e.node, orphanLabels(e.node, "orphan-uid-"+e.node, "ghost", "app"))

	a := e.startAgent("agent")
	// The orphan's removal proves a sweep ran while the bystanders existed.
	eventually(t, 1*time.Second+8*relistPeriod, "orphan "+short(orphanID)+" removed", func() (bool, string) {
		a.requireRunning()
		in, found := e.inspect(orphanID)
		if !found {
			return true, ""
		}
		return false, "orphan still exists, " + in.State.Status
	})
	// Several more relists, each with a sweep: the bystanders keep running,
	// never restarted.
	consistently(t, 4*relistPeriod, "foreign containers untouched", func() (bool, string) {
		a.requireRunning()
		for what, id := range bystanders {
			in, found := e.inspect(id)
			switch {
			case !found:
				return false, what + " container " + short(id) + " was removed"
			case !in.State.Running:
				return false, fmt.Sprintf("%s container %s is %s", what, short(id), in.State.Status)
			case in.State.StartedAt != started[id]:
				return false, fmt.Sprintf("%s container %s was restarted (started %s, before %s)", what, short(id), in.State.StartedAt, started[id])
			}
		}
		return true, ""
	})
	out := a.out.String()
	for what, id := range bystanders {
		if strings.Contains(out, short(id)) {
			t.Errorf("agent's log mentions the %s container %s", what, short(id))
		}
	}
}

// An agent killed with SIGKILL and started again adopts the running pod:
// it recreates, restarts and removes nothing.
func TestRestartAfterSIGKILLRecreatesNothing(t *testing.T) {
	e := newEnv(t, "e2e-restart")
	e.writeManifest("web.yaml", podManifest("web", 2, "app", "sidecar"))
	a1 := e.startAgent("agent#1")
	e.waitPodRunning(a1, "web", "app", "sidecar")
	want := e.list().ids()
	if len(want) != 3 {
		t.Fatalf("want 3 containers before the restart, got %s", e.list())
	}
	started := e.startTimes(want)

	a1.kill()
	if ok, seen := sameContainers(e.list(), want); !ok {
		t.Fatalf("after SIGKILL of the agent: %s", seen)
	}
	a2 := e.startAgent("agent#2")
	a2.waitLog(podUpTimeout, "source synced")
	// At least 5 relists (1 s each) after the source synced; every poll
	// asserts the same containers, all running.
	consistently(t, 6*relistPeriod, "the same containers running after the restart", func() (bool, string) {
		a2.requireRunning()
		return sameContainers(e.list(), want)
	})
	e.requireNotRestarted(want, started)
	for _, msg := range []string{"sandbox started", "container started", "killing container", "removing orphan pod", "adopting existing container"} {
		if ls := a2.findLogs(msg); len(ls) > 0 {
			t.Errorf("restarted agent logged %q: %v", msg, ls)
		}
	}
}

// A second agent for a node whose lock is held refuses to run.
func TestSecondAgentRefusesHeldNodeLock(t *testing.T) {
	e := newEnv(t, "e2e-lock")
	a1 := e.startAgent("agent#1")
	a1.waitLog(podUpTimeout, "actorlet running")

	a2 := e.startAgent("agent#2")
	if !a2.waitExit(exitTimeout) {
		t.Fatalf("second agent still running %v after start; want it to refuse the held node lock", exitTimeout)
	}
	if code := a2.exitCode(); code == 0 {
		t.Errorf("second agent: %s, want a non-zero status", a2.exitDescription())
	}
	out := a2.out.String()
	lockPath := filepath.Join(e.rootDir, "nodes", e.node+".lock")
	if !strings.Contains(out, "node lock") || !strings.Contains(out, lockPath) {
		t.Errorf("second agent's output does not name the node lock %s:\n%s", lockPath, out)
	}
	a1.requireRunning()
}

// SIGTERM: the agent exits 0 within 10 s and leaves the pod running.
func TestSIGTERMLeavesPodRunning(t *testing.T) {
	e := newEnv(t, "e2e-sigterm")
	e.writeManifest("web.yaml", podManifest("web", 2, "app", "sidecar"))
	a := e.startAgent("agent")
	e.waitPodRunning(a, "web", "app", "sidecar")
	want := e.list().ids()
	started := e.startTimes(want)

	a.signal(syscall.SIGTERM)
	sent := time.Now()
	if !a.waitExit(10 * time.Second) {
		t.Fatalf("agent still running 10 s after SIGTERM")
	}
	t.Logf("agent exited %v after SIGTERM: %s", time.Since(sent).Round(time.Millisecond), a.exitDescription())
	if a.exitCode() != 0 {
		t.Errorf("agent after SIGTERM: %s, want exit status 0", a.exitDescription())
	}
	if ok, seen := sameContainers(e.list(), want); !ok {
		t.Fatalf("after SIGTERM: %s", seen)
	}
	// Nothing the agent left in flight stops them afterwards.
	consistently(t, 2*time.Second, "the pod's containers running after the agent exited", func() (bool, string) {
		return sameContainers(e.list(), want)
	})
	e.requireNotRestarted(want, started)
}

// A manifest with a misspelt field is rejected alone, with a log line
// naming the file and the field it lacks, and a warning naming the
// misspelt field (ignored, as the kubelet ignores unknown fields); the
// good manifest's pod runs.
func TestBrokenManifestFailsAlone(t *testing.T) {
	e := newEnv(t, "e2e-broken")
	goodUID := "good-uid-" + e.node
	// GCE names its static pods *.manifest; the .bak an operator leaves
	// next to one must not run as a second pod.
	e.writeManifest("good.manifest", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: good
  uid: %s
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: %s
`, goodUID, testimages.TestWorkloadTag))
	e.writeManifest("good.manifest.bak", podManifest("stale", 2, "app"))
	badPath := e.writeManifest("bad.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: bad
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    imagee: %s
`, testimages.TestWorkloadTag))
	a := e.startAgent("agent")
	good := e.waitPodRunning(a, "good", "app")
	for _, c := range good {
		if got := c.Labels[runtimeadapter.LabelPodUID]; got != goodUID {
			t.Errorf("container %s: pod uid label %q, want metadata.uid %q", c.Name, got, goodUID)
		}
	}

	// The fields as the decoder and the validation name them: their paths
	// in the pod.
	const field, unknown = "spec.containers[0].image: Required value", `unknown field "spec.containers[0].imagee"`
	var rejected, warned []logEntry
	eventually(t, podUpTimeout, "log lines naming "+badPath+", the field "+field+" and "+unknown, func() (bool, string) {
		rejected, warned = rejected[:0], warned[:0]
		for _, l := range a.logs() {
			if !strings.Contains(fmt.Sprint(l), badPath) {
				continue
			}
			switch {
			case strings.HasPrefix(l.str("msg"), "manifest rejected"):
				rejected = append(rejected, l)
			case l.str("msg") == "manifest field ignored":
				warned = append(warned, l)
			}
		}
		for _, l := range rejected {
			if l.str("msg") == "manifest rejected" && strings.Contains(l.str("error"), field) && len(warned) > 0 {
				return true, ""
			}
		}
		a.requireRunning()
		return false, fmt.Sprintf("rejections naming the file: %v; warnings: %v", rejected, warned)
	})
	// Reported once (not on every scan), as an error; the misspelt field
	// once, as a warning.
	if len(rejected) != 1 {
		t.Errorf("want the bad manifest reported once, got %d lines: %v", len(rejected), rejected)
	}
	for _, l := range rejected {
		if l.str("level") != "error" {
			t.Errorf("bad manifest reported at level %q, want error: %v", l.str("level"), l)
		}
	}
	if len(warned) != 1 || warned[0].str("level") != "warn" || !strings.Contains(warned[0].str("warning"), unknown) {
		t.Errorf("want one warning naming %s, got %v", unknown, warned)
	}
	if cs := e.list().ofPod("stale"); len(cs) != 0 {
		t.Errorf("containers of the .bak's pod exist: %s", cs)
	}
	if n := len(a.findLogs("file in the manifest directory skipped")); n == 0 {
		t.Error("the .bak was skipped without a word")
	}
	if cs := e.list().ofPod("bad"); len(cs) != 0 {
		t.Errorf("containers of the rejected pod exist: %s", cs)
	}
}
