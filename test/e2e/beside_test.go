package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/actorlet/actorlet/internal/manifest"
	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// besidePod is a pod of one testworkload container "app", on the host's
// network or the pod network.
func besidePod(name string, hostNetwork bool) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  hostNetwork: %t
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: %s
`, name, hostNetwork, testimages.TestWorkloadTag)
}

// startedAt is a container's State.StartedAt, straight from Docker.
func (e *env) startedAt(id string) time.Time {
	e.t.Helper()
	in, found := e.inspect(id)
	if !found {
		e.t.Fatalf("container %s is gone", short(id))
	}
	at, err := time.Parse(time.RFC3339Nano, in.State.StartedAt)
	if err != nil {
		e.t.Fatalf("container %s: StartedAt %q: %v", short(id), in.State.StartedAt, err)
	}
	return at
}

// logTime is the time of a JSON log entry (zap's "ts", seconds since the
// epoch).
func logTime(t *testing.T, l logEntry) time.Time {
	t.Helper()
	ts, ok := l["ts"].(float64)
	if !ok {
		t.Fatalf("log entry without a numeric ts: %v", l)
	}
	return time.Unix(0, int64(ts*1e9))
}

// A host-network pod's app container is started beside its sandbox: Docker
// ran it before the agent's start of the sandbox had returned (the
// agent's "sandbox started" line comes once the sandbox's start and the
// app's have both returned). A pod on the pod network, whose app joins the
// sandbox's network namespace, starts its app after. Both sandboxes run,
// labelled and tracked as ever, and the pods report Running.
func TestHostNetworkAppStartsBesideSandbox(t *testing.T) {
	e := newEnv(t, "e2e-beside")
	e.writeManifest("hn.yaml", besidePod("hn", true))
	e.writeManifest("pn.yaml", besidePod("pn", false))
	a := e.startAgent("agent")
	hn := e.waitPodRunning(a, "hn", "app")
	pn := e.waitPodRunning(a, "pn", "app")
	started := map[string]time.Time{} // pod name → the agent's "sandbox started"
	for _, l := range a.findLogs("sandbox started") {
		started[l.str("pod")] = logTime(t, l)
	}
	for _, c := range []struct {
		pod    string
		cs     containers
		beside bool
	}{{"hn", hn, true}, {"pn", pn, false}} {
		sb, app := c.cs.running(runtimeadapter.SandboxName)[0], c.cs.running("app")[0]
		logged, ok := started["default/"+c.pod]
		if !ok {
			t.Fatalf("pod %s: no \"sandbox started\" log line; lines: %v", c.pod, a.findLogs("sandbox started"))
		}
		sbAt, appAt := e.startedAt(sb.ID), e.startedAt(app.ID)
		t.Logf("pod %s: sandbox StartedAt %s, app StartedAt %s (%+v after the sandbox), agent's \"sandbox started\" %+v after the app's StartedAt",
			c.pod, sbAt.Format(time.RFC3339Nano), appAt.Format(time.RFC3339Nano), appAt.Sub(sbAt), logged.Sub(appAt))
		if got := appAt.Before(logged); got != c.beside {
			t.Errorf("pod %s: app running before the sandbox's start returned to the agent: %v, want %v (app StartedAt %s, \"sandbox started\" at %s)",
				c.pod, got, c.beside, appAt.Format(time.RFC3339Nano), logged.Format(time.RFC3339Nano))
		}
		if sb.Labels[runtimeadapter.LabelRestartCount] != "0" || app.Labels[runtimeadapter.LabelRestartCount] != "0" {
			t.Errorf("pod %s: sandbox attempt %s, app restart count %s; want 0 and 0", c.pod,
				sb.Labels[runtimeadapter.LabelRestartCount], app.Labels[runtimeadapter.LabelRestartCount])
		}
	}
	if n := len(e.list()); n != 4 {
		t.Errorf("%d containers on the node, want 4 (two sandboxes, two apps): %s", n, e.list())
	}
	for _, msg := range []string{"killing container", "container created ahead removed: its sandbox did not start"} {
		if ls := a.findLogs(msg); len(ls) > 0 {
			t.Errorf("agent logged %q: %v", msg, ls)
		}
	}
}

// What an agent killed (SIGKILL) between the app's start beside its
// sandbox and the sandbox's start leaves — a created, never started
// sandbox and the running app, as actorlet names and labels them — is
// adopted by the next agent: it starts that sandbox and keeps the app (same
// container, not restarted); it creates, kills and removes nothing. Killed
// again and restarted, it adopts the running pod as any other.
func TestHostNetworkPodAdoptedAfterSIGKILLBesideItsSandbox(t *testing.T) {
	e := newEnv(t, "e2e-beside-kill")
	path := e.writeManifest("hn.yaml", besidePod("hn", true))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pod, _, err := manifest.LoadFile(e.node, filepath.Clean(path), data)
	if err != nil {
		t.Fatalf("manifest %s: %v", path, err)
	}
	// The window's state, made as the agent makes it (names, labels).
	sbSpec := podsync.SandboxSpec(e.node, pod, testimages.PauseTag, 0)
	appSpec, err := podsync.AppSpecWith(podsync.SpecOptions{RootDir: e.rootDir}, e.node, pod, &pod.Spec.Containers[0], "", 0)
	if err != nil {
		t.Fatal(err)
	}
	appSpec.Mounts = nil
	ctx, cancel := e.ctx()
	defer cancel()
	sbID, err := e.rt.Create(ctx, sbSpec)
	if err != nil {
		t.Fatalf("create sandbox %s: %v", sbSpec.Name, err)
	}
	appID, err := e.rt.Create(ctx, appSpec)
	if err != nil {
		t.Fatalf("create app %s: %v", appSpec.Name, err)
	}
	if err := e.rt.Start(ctx, appID); err != nil {
		t.Fatalf("start app %s: %v", appSpec.Name, err)
	}
	appStarted := e.startTimes(map[string]string{appID: "app"})

	a1 := e.startAgent("agent#1")
	cs := e.waitPodRunning(a1, "hn", "app")
	if sb := cs.running(runtimeadapter.SandboxName)[0]; sb.ID != sbID {
		t.Errorf("the running sandbox is %s (%s), not the created one %s", sb.Name, short(sb.ID), short(sbID))
	}
	if app := cs.running("app")[0]; app.ID != appID {
		t.Errorf("the running app is %s (%s), not the one started beside the sandbox %s", app.Name, short(app.ID), short(appID))
	}
	want := map[string]string{sbID: "sandbox", appID: "app"}
	consistently(t, 3*relistPeriod, "the adopted pod: the same two containers running", func() (bool, string) {
		a1.requireRunning()
		return sameContainers(e.list(), want)
	})
	e.requireNotRestarted(map[string]string{appID: "app"}, appStarted)
	for _, msg := range []string{"killing container", "container started"} {
		if ls := a1.findLogs(msg); len(ls) > 0 {
			t.Errorf("agent#1 logged %q: %v", msg, ls)
		}
	}

	started := e.startTimes(want)
	a1.kill()
	a2 := e.startAgent("agent#2")
	a2.waitLog(podUpTimeout, "source synced")
	consistently(t, 4*relistPeriod, "the same containers running after the restart", func() (bool, string) {
		a2.requireRunning()
		return sameContainers(e.list(), want)
	})
	e.requireNotRestarted(want, started)
	for _, msg := range []string{"sandbox started", "container started", "killing container", "adopting existing container"} {
		if ls := a2.findLogs(msg); len(ls) > 0 {
			t.Errorf("agent#2 logged %q: %v", msg, ls)
		}
	}
}

// Host-network pods found at once (a burst): every pod's app runs before
// any pod's sandbox starts — each sandbox created before its app starts,
// its start after the burst's apps (the node's start order) — and every
// pod then reports Running with its sandbox and app, nothing killed or
// removed. On main the first pods' sandboxes started beside their apps,
// before the last pods' apps.
func TestHostNetworkBurstStartsAppsBeforeSandboxes(t *testing.T) {
	e := newEnv(t, "e2e-burst-order")
	const n = 4
	for i := range n {
		e.writeManifest(fmt.Sprintf("hn%d.yaml", i), besidePod(fmt.Sprintf("hn%d", i), true))
	}
	a := e.startAgent("agent")
	var lastApp, firstSB time.Time
	for i := range n {
		cs := e.waitPodRunning(a, fmt.Sprintf("hn%d", i), "app")
		sbAt, appAt := e.startedAt(cs.running(runtimeadapter.SandboxName)[0].ID), e.startedAt(cs.running("app")[0].ID)
		t.Logf("pod hn%d: app StartedAt %s, sandbox StartedAt %s", i, appAt.Format(time.RFC3339Nano), sbAt.Format(time.RFC3339Nano))
		if appAt.After(lastApp) {
			lastApp = appAt
		}
		if firstSB.IsZero() || sbAt.Before(firstSB) {
			firstSB = sbAt
		}
	}
	if !firstSB.After(lastApp) {
		t.Errorf("the first sandbox started %v before the last app: want every app first", lastApp.Sub(firstSB))
	}
	if got := len(e.list()); got != 2*n {
		t.Errorf("%d containers on the node, want %d: %s", got, 2*n, e.list())
	}
	for _, msg := range []string{"killing container", "container created ahead removed: its sandbox did not start"} {
		if ls := a.findLogs(msg); len(ls) > 0 {
			t.Errorf("agent logged %q: %v", msg, ls)
		}
	}
}
