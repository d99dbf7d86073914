package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// Probe timing of the pods below: every probe runs each second, and a
// liveness probe kills its container after three failures in a row.
const (
	lcProbePeriod      = time.Second
	lcFailureThreshold = 3
	// lcKillSlack is how much earlier than (failureThreshold-1) periods
	// after a probe began failing a kill may come: a probe issued just
	// before the workload turned unhealthy may see it unhealthy already.
	lcKillSlack = 150 * time.Millisecond
	// lcKillTimeout bounds the wait for a probe's kill: the failures, the
	// pod's 2 s grace (the workload exits on SIGTERM at once) and relists.
	lcKillTimeout = lcFailureThreshold*lcProbePeriod + 12*time.Second
	// lcReplaceTimeout bounds the wait for a restarted container: the
	// back-off (none for a first exit, else 1 s or 2 s), a few relists,
	// and the create and start, which a loaded Docker can take many seconds
	// over (seen: a start still under way 9 s after its create at load
	// average 10).
	lcReplaceTimeout = 1*time.Second + 30*relistPeriod
	// lcAPITimeout bounds the wait for the API to show what the containers
	// already show.
	lcAPITimeout = 10 * time.Second
	// lcPromptly bounds the time from a container's exit to the agent's
	// next step (create the next init container, stop the apps of a lost
	// sandbox): the exit is seen within one 1 s relist (at once with the
	// event stream), then one or two runtime calls. Three relist periods
	// leave room for a loaded machine.
	lcPromptly = 3 * relistPeriod
)

// lcBugSlowReaction is the failure message when the agent took longer
// than lcPromptly to act on an exit. On Docker 20.10 the "die" event
// comes before the daemon's list shows the container exited, so a relist
// made on that event sees it still running and the exit waits for the
// next safety-net relist (--event-relist-period, 5 s by default), though
// the agent runs with --relist-period 1s.
func lcBugSlowReaction(what string, took time.Duration) string {
	return fmt.Sprintf("ACTORLET BUG: %s %v after the exit that should trigger it (want within %v with --relist-period %v): "+
		"the relist run on Docker's \"die\" event still lists the container as running, and the exit is only seen at the "+
		"next safety-net relist (--event-relist-period, 5 s)", what, took.Round(time.Millisecond), lcPromptly, relistPeriod)
}

// lcRequireOneApp fails the test if the listing cs (one pod's containers)
// has more than one running instance of container name.
func lcRequireOneApp(t *testing.T, cs containers, name string) {
	t.Helper()
	if n := len(cs.running(name)); n > 1 {
		t.Fatalf("%d instances of container %s running at once: %s", n, name, cs)
	}
}

// lcStaysRunning checks for d that container name of pod podName is the
// one instance id, running.
func (e *env) lcStaysRunning(a *agent, d time.Duration, what, podName, name, id string) {
	e.t.Helper()
	consistently(e.t, d, what, func() (bool, string) {
		a.requireRunning()
		cs := e.list().ofPod(podName)
		r := cs.running(name)
		return len(r) == 1 && r[0].ID == id, cs.String()
	})
}

// lcWaitProbeKill waits until the app container oldID, whose liveness
// probe started failing at failedAt at the earliest, has been stopped by
// the agent, and checks that this took failureThreshold failures: not
// before (failureThreshold-1) periods. It returns Docker's FinishedAt.
func (e *env) lcWaitProbeKill(a *agent, podName, name, oldID string, failedAt time.Time) time.Time {
	e.t.Helper()
	var fin time.Time
	eventually(e.t, lcKillTimeout, fmt.Sprintf("container %s (%s) killed after its liveness probe failed", name, short(oldID)), func() (bool, string) {
		a.requireRunning()
		st, found := e.lcInspect(oldID)
		if !found {
			e.t.Fatalf("container %s (%s) removed; want it stopped and kept: %s", name, short(oldID), e.list().ofPod(podName))
		}
		if st.running {
			return false, fmt.Sprintf("%s still running %v after the probe began failing", short(oldID), time.Since(failedAt).Round(time.Millisecond))
		}
		fin = st.finish
		return true, ""
	})
	after := fin.Sub(failedAt)
	e.t.Logf("container %s (%s) finished %v after its probe began failing", name, short(oldID), after.Round(time.Millisecond))
	if earliest := (lcFailureThreshold-1)*lcProbePeriod - lcKillSlack; after < earliest {
		e.t.Errorf("container %s (%s) killed %v after its liveness probe began failing; with periodSeconds 1 and failureThreshold %d it must live at least ~%v",
			name, short(oldID), after.Round(time.Millisecond), lcFailureThreshold, (lcFailureThreshold-1)*lcProbePeriod)
	}
	// The agent says why: a kill for the Unhealthy reason.
	var kills []logEntry
	for _, l := range a.findLogs("killing container") {
		if l.str("container") == name && strings.HasPrefix(oldID, l.str("id")) && l.str("id") != "" {
			kills = append(kills, l)
		}
	}
	if len(kills) != 1 || kills[0].str("reason") != "Unhealthy" {
		e.t.Errorf(`want one "killing container" log line for %s (%s) with reason Unhealthy, got %v`, name, short(oldID), kills)
	}
	return fin
}

// lcWaitReplacement waits for a running instance of container name of pod
// podName other than oldID, checking at every poll that no two run at
// once, and returns it.
func (e *env) lcWaitReplacement(a *agent, podName, name, oldID string) runtimeadapter.Container {
	e.t.Helper()
	var repl runtimeadapter.Container
	eventually(e.t, lcReplaceTimeout, fmt.Sprintf("a new %s container replacing %s", name, short(oldID)), func() (bool, string) {
		a.requireRunning()
		cs := e.list().ofPod(podName)
		lcRequireOneApp(e.t, cs, name)
		if r := cs.running(name); len(r) == 1 && r[0].ID != oldID {
			repl = r[0]
			return true, ""
		}
		return false, cs.String()
	})
	return repl
}

// lcWaitRestartedInAPI waits until /pods shows container name of podName
// running as instance id with restartCount 1 and a last termination, and
// /events an Unhealthy event for it whose message contains msg.
func (e *env) lcWaitRestartedInAPI(api *lcAPI, podName, name, id, msg string) {
	e.t.Helper()
	eventually(e.t, lcAPITimeout, fmt.Sprintf("/pods showing %s restarted once and /events an Unhealthy event %q", name, msg), func() (bool, string) {
		p, err := api.pod(podName)
		if err != nil {
			return false, err.Error()
		}
		cs := lcContainerStatus(p, name)
		ok := cs != nil && cs.RestartCount == 1 && cs.State.Running != nil &&
			cs.ContainerID == "docker://"+id && cs.LastTerminationState.Terminated != nil
		evs, err := api.podEvents(podName, "Unhealthy")
		if err != nil {
			return false, err.Error()
		}
		found := false
		for _, ev := range evs {
			found = found || strings.Contains(ev.Message, msg)
		}
		return ok && found, fmt.Sprintf("pod: %s; Unhealthy events: %s", lcDescribePod(p), lcEventsString(evs))
	})
}

// An httpGet liveness probe (hostNetwork pod, so to 127.0.0.1) that starts
// failing kills the container after failureThreshold periods; a new one
// replaces it with restart count 1, the API shows restartCount 1 and an
// Unhealthy event, and the new instance, healthy, stays.
func TestLivenessHTTPProbeFailureRestartsContainer(t *testing.T) {
	e := newEnv(t, "e2e-live-http")
	port := lcFreePort(t)
	e.writeManifest("live.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: live
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: %s
    args: ["--http", "127.0.0.1:%d"]
    livenessProbe:
      httpGet: {path: /healthz, port: %d}
      periodSeconds: 1
      failureThreshold: %d
`, testimages.TestWorkloadTag, port, port, lcFailureThreshold))
	a := e.startAgent("agent")
	api := lcAPIOf(t, a)
	old := e.waitPodRunning(a, "live", "app").running("app")[0]
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	eventually(t, 10*time.Second, "the workload answering "+base+"/healthz", func() (bool, string) {
		a.requireRunning()
		code, body, err := lcHTTPGet(base + "/healthz")
		if err != nil {
			return false, err.Error()
		}
		return code == 200, fmt.Sprintf("%d %q", code, body)
	})
	// Healthy: the probe passes and nothing restarts.
	e.lcStaysRunning(a, 3*lcProbePeriod, "the healthy container left running", "live", "app", old.ID)

	failedAt := time.Now()
	if code, body, err := lcHTTPGet(base + "/fail"); err != nil || code != 200 {
		t.Fatalf("GET %s/fail: %d %q %v", base, code, body, err)
	}
	e.lcWaitProbeKill(a, "live", "app", old.ID, failedAt)
	repl := e.lcWaitReplacement(a, "live", "app", old.ID)
	if got := repl.Labels[runtimeadapter.LabelRestartCount]; got != "1" {
		t.Errorf("replacement %s: restart count label %q, want \"1\"", repl.Name, got)
	}
	e.lcWaitRestartedInAPI(api, "live", "app", repl.ID, "Liveness probe failed")
	// The new instance is probed afresh: it is healthy, so it stays.
	e.lcStaysRunning(a, 3*lcProbePeriod, "the healthy replacement left running", "live", "app", repl.ID)
	if code, body, err := lcHTTPGet(base + "/healthz"); err != nil || code != 200 {
		t.Errorf("the replacement's /healthz: %d %q %v", code, body, err)
	}
}

// An exec liveness probe (testworkload check --file) that starts failing
// kills the container after failureThreshold periods. The file lives on
// an emptyDir volume: an init container creates it, the test removes it
// from the host (and puts it back so the replacement is healthy).
func TestLivenessExecProbeFailureRestartsContainer(t *testing.T) {
	e := newEnv(t, "e2e-live-exec")
	e.writeManifest("live.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: live
spec:
  terminationGracePeriodSeconds: 2
  volumes:
  - name: state
    emptyDir: {}
  initContainers:
  - name: mark-ok
    image: %[1]s
    command: ["/testworkload", "touch", "--file", "/state/ok"]
    volumeMounts: [{name: state, mountPath: /state}]
  containers:
  - name: app
    image: %[1]s
    volumeMounts: [{name: state, mountPath: /state}]
    livenessProbe:
      exec: {command: ["/testworkload", "check", "--file", "/state/ok"]}
      periodSeconds: 1
      failureThreshold: %[2]d
`, testimages.TestWorkloadTag, lcFailureThreshold))
	a := e.startAgent("agent")
	api := lcAPIOf(t, a)
	old := e.waitPodRunning(a, "live", "app").running("app")[0]
	marker := filepath.Join(e.lcMountSource(old.ID, "/state"), "ok")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the init container's file on the emptyDir volume: %v", err)
	}
	e.lcStaysRunning(a, 3*lcProbePeriod, "the healthy container left running", "live", "app", old.ID)

	failedAt := time.Now()
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	e.lcWaitProbeKill(a, "live", "app", old.ID, failedAt)
	// Healthy again, perhaps after the replacement started (a first exit
	// restarts at once): it would need three failing periods to be killed.
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	repl := e.lcWaitReplacement(a, "live", "app", old.ID)
	if got := repl.Labels[runtimeadapter.LabelRestartCount]; got != "1" {
		t.Errorf("replacement %s: restart count label %q, want \"1\"", repl.Name, got)
	}
	e.lcWaitRestartedInAPI(api, "live", "app", repl.ID, "Liveness probe failed")
	e.lcStaysRunning(a, 3*lcProbePeriod, "the healthy replacement left running", "live", "app", repl.ID)
	// The init container is not run again for a container restart.
	if inits := e.list().ofPod("live").lcOfType(runtimeadapter.TypeInit); len(inits) != 1 {
		t.Errorf("want the init container run once, got %s", inits)
	}
}

// A startup probe (30 × 1 s) protects a slow starter from a liveness probe
// that would kill it at its first failure: nothing restarts while it
// starts; once it has started, /pods shows it started and ready, and the
// liveness probe, now passing, leaves it running. (The probes' 5 s
// timeout: on a loaded machine a docker exec took over the default 1 s
// every time, so the startup probe never passed.)
func TestStartupProbeProtectsSlowStarter(t *testing.T) {
	e := newEnv(t, "e2e-startup")
	e.writeManifest("slow.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: slow
spec:
  terminationGracePeriodSeconds: 2
  volumes:
  - name: state
    emptyDir: {}
  containers:
  - name: app
    image: %s
    volumeMounts: [{name: state, mountPath: /state}]
    startupProbe:
      exec: {command: ["/testworkload", "check", "--file", "/state/started"]}
      periodSeconds: 1
      timeoutSeconds: 5
      failureThreshold: 30
    livenessProbe:
      exec: {command: ["/testworkload", "check", "--file", "/state/started"]}
      periodSeconds: 1
      timeoutSeconds: 5
      failureThreshold: 1
`, testimages.TestWorkloadTag))
	a := e.startAgent("agent")
	api := lcAPIOf(t, a)
	app := e.waitPodRunning(a, "slow", "app").running("app")[0]

	// notStarted: the API shows the container running, neither started
	// nor ready.
	notStarted := func() (bool, string) {
		p, err := api.pod("slow")
		if err != nil {
			return false, err.Error()
		}
		st := lcContainerStatus(p, "app")
		if st == nil || st.State.Running == nil || st.ContainerID != "docker://"+app.ID || st.RestartCount != 0 ||
			st.Started == nil || *st.Started || st.Ready || lcCondition(p, v1.PodReady) != v1.ConditionFalse {
			return false, "pod: " + lcDescribePod(p)
		}
		return true, ""
	}
	// The API follows the agent's own observation, which may lag Docker.
	eventually(t, lcAPITimeout, "/pods showing app running, not started", notStarted)
	// Eight more startup probes fail: no restart, still not started.
	consistently(t, 8*lcProbePeriod, "the slow starter running, not started, not restarted", func() (bool, string) {
		a.requireRunning()
		cs := e.list().ofPod("slow")
		if r := cs.running("app"); len(r) != 1 || r[0].ID != app.ID || len(cs.lcNamed("app")) != 1 {
			return false, "containers: " + cs.String()
		}
		return notStarted()
	})
	dockerCLI(t, "exec", app.ID, "/testworkload", "touch", "--file", "/state/started")
	eventually(t, lcAPITimeout, "/pods showing app started and ready", func() (bool, string) {
		a.requireRunning()
		p, err := api.pod("slow")
		if err != nil {
			return false, err.Error()
		}
		st := lcContainerStatus(p, "app")
		ok := st != nil && st.State.Running != nil && st.Started != nil && *st.Started && st.Ready &&
			st.ContainerID == "docker://"+app.ID && st.RestartCount == 0 &&
			lcCondition(p, v1.ContainersReady) == v1.ConditionTrue && lcCondition(p, v1.PodReady) == v1.ConditionTrue
		return ok, "pod: " + lcDescribePod(p)
	})
	// Liveness runs now (failureThreshold 1) and passes.
	e.lcStaysRunning(a, 3*lcProbePeriod, "the started container left running", "slow", "app", app.ID)
	evs, err := api.events()
	if err != nil {
		t.Fatal(err)
	}
	// Each failed startup probe has its Unhealthy event, as the kubelet's
	// (the API counts repeats of one event); no liveness failure, no kill.
	startupFailures := int32(0)
	for _, ev := range evs {
		if ev.InvolvedObject.Name != "slow" {
			continue
		}
		switch {
		case ev.Reason == "Unhealthy" && strings.HasPrefix(ev.Message, "Startup probe failed: "):
			startupFailures += ev.Count
		case ev.Reason == "Unhealthy" || ev.Reason == "Killing":
			t.Errorf("unexpected event for the slow starter: %s", lcEventsString([]v1.Event{ev}))
		}
	}
	// Over 8 s of 1 s periods at least 3 probes fail even on a loaded
	// machine (an exec may take longer than a period); the actor tests
	// check one event per failed run exactly.
	if startupFailures < 3 {
		t.Errorf("%d Unhealthy \"Startup probe failed\" events, want one per failed startup probe (at least 3)", startupFailures)
	}
}

// Two init containers run once each, one after the other, before the app
// container; they do not run again while the app runs, and /pods shows
// them Completed and the pod Initialized.
func TestInitContainersRunOnceInOrder(t *testing.T) {
	e := newEnv(t, "e2e-init")
	e.writeManifest("init.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: init
spec:
  terminationGracePeriodSeconds: 2
  initContainers:
  - name: init1
    image: %[1]s
    env: [{name: TW_EXIT_AFTER, value: 1s}, {name: TW_EXIT_CODE, value: "0"}]
  - name: init2
    image: %[1]s
    env: [{name: TW_EXIT_AFTER, value: 1s}, {name: TW_EXIT_CODE, value: "0"}]
  containers:
  - name: app
    image: %[1]s
`, testimages.TestWorkloadTag))
	a := e.startAgent("agent")
	api := lcAPIOf(t, a)
	app := e.waitPodRunning(a, "init", "app").running("app")[0]

	pod := e.list().ofPod("init")
	inits := pod.lcOfType(runtimeadapter.TypeInit)
	if got := inits.lcCountByName(); got != "init1=1 init2=1" {
		t.Fatalf("init containers: want one instance of each, got %q: %s", got, pod)
	}
	i1, _ := e.lcInspect(inits.lcNamed("init1")[0].ID)
	i2, _ := e.lcInspect(inits.lcNamed("init2")[0].ID)
	ap, _ := e.lcInspect(app.ID)
	for what, st := range map[string]lcTimes{"init1": i1, "init2": i2} {
		if st.running || st.exitCode != 0 || st.finish.IsZero() {
			t.Errorf("%s: want exited 0, got status %s exit %d finished %v", what, st.status, st.exitCode, st.finish)
		}
	}
	t.Logf("init1 %s..%s, init2 %s..%s, app from %s", i1.started.Format(time.StampMilli), i1.finish.Format(time.StampMilli),
		i2.started.Format(time.StampMilli), i2.finish.Format(time.StampMilli), ap.started.Format(time.StampMilli))
	if !i1.finish.Before(i2.started) {
		t.Errorf("init2 started at %s, before init1 finished at %s", i2.started.Format(time.StampMilli), i1.finish.Format(time.StampMilli))
	}
	if !i2.finish.Before(ap.started) {
		t.Errorf("app started at %s, before init2 finished at %s", ap.started.Format(time.StampMilli), i2.finish.Format(time.StampMilli))
	}
	// The agent's reaction ends with its create call; how long Docker then
	// takes to start the container is Docker's (seconds on a loaded machine).
	if gap := i2.created.Sub(i1.finish); gap > lcPromptly {
		t.Errorf("%s", lcBugSlowReaction("init2 created", gap))
	}
	if gap := ap.created.Sub(i2.finish); gap > lcPromptly {
		t.Errorf("%s", lcBugSlowReaction("app created", gap))
	}

	eventually(t, lcAPITimeout, "/pods showing the init containers Completed and the pod Initialized and Running", func() (bool, string) {
		p, err := api.pod("init")
		if err != nil {
			return false, err.Error()
		}
		ok := len(p.Status.InitContainerStatuses) == 2 && p.Status.Phase == v1.PodRunning &&
			lcCondition(p, v1.PodInitialized) == v1.ConditionTrue
		for i, st := range p.Status.InitContainerStatuses {
			term := st.State.Terminated
			ok = ok && st.Name == fmt.Sprintf("init%d", i+1) && term != nil && term.Reason == "Completed" && term.ExitCode == 0 && st.RestartCount == 0
		}
		return ok, "pod: " + lcDescribePod(p)
	})
	// At least five relists with the app running: no init container runs
	// again, the app is not restarted.
	consistently(t, 6*relistPeriod, "one run of each init container, the same app", func() (bool, string) {
		a.requireRunning()
		cs := e.list().ofPod("init")
		ins := cs.lcOfType(runtimeadapter.TypeInit)
		if ins.lcCountByName() != "init1=1 init2=1" || len(ins.running("init1"))+len(ins.running("init2")) > 0 {
			return false, "init containers: " + ins.String()
		}
		r := cs.running("app")
		return len(r) == 1 && r[0].ID == app.ID && len(cs.lcNamed("app")) == 1, cs.String()
	})
}

// Two pods asking for one host port: the first by name is admitted and
// its port answers on 127.0.0.1; the second is rejected, Failed with
// reason NodePorts, and gets no container at all.
func TestHostPortClashRejected(t *testing.T) {
	e := newEnv(t, "e2e-hostport")
	port := lcFreePort(t)
	manifest := func(name string) string {
		return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: web
    image: %s
    args: ["--http", ":8080"]
    ports:
    - {containerPort: 8080, hostPort: %d, hostIP: 127.0.0.1, protocol: TCP}
`, name, testimages.TestWorkloadTag, port)
	}
	e.writeManifest("a-first.yaml", manifest("a-first"))
	e.writeManifest("b-second.yaml", manifest("b-second"))
	a := e.startAgent("agent")
	api := lcAPIOf(t, a)
	first := e.waitPodRunning(a, "a-first", "web")
	url := fmt.Sprintf("http://127.0.0.1:%d/healthz", port)
	eventually(t, 10*time.Second, "a-first's host port answering "+url, func() (bool, string) {
		code, body, err := lcHTTPGet(url)
		if err != nil {
			return false, err.Error()
		}
		return code == 200 && body == "ok", fmt.Sprintf("%d %q", code, body)
	})
	eventually(t, lcAPITimeout, "/pods showing b-second Failed with reason NodePorts", func() (bool, string) {
		a.requireRunning()
		p, err := api.pod("b-second")
		if err != nil {
			return false, err.Error()
		}
		return p.Status.Phase == v1.PodFailed && p.Status.Reason == "NodePorts" &&
			strings.Contains(p.Status.Message, fmt.Sprint(port)), "pod: " + lcDescribePod(p)
	})
	// Several relists: b-second never gets a container, a-first is left
	// alone.
	want := first.ids()
	consistently(t, 4*relistPeriod, "b-second without containers, a-first unchanged", func() (bool, string) {
		a.requireRunning()
		cs := e.list()
		if b := cs.ofPod("b-second"); len(b) > 0 {
			return false, "b-second has containers: " + b.String()
		}
		return sameContainers(cs.ofPod("a-first"), want)
	})
	if p, err := api.pod("a-first"); err != nil || p.Status.Phase != v1.PodRunning {
		t.Errorf("a-first in /pods: %s (%v), want Running", lcDescribePod(p), err)
	}
	evs, err := api.podEvents("b-second", "NodePorts")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Type != v1.EventTypeWarning {
		t.Errorf("want one NodePorts warning event for b-second, got %s", lcEventsString(evs))
	}
	if ev, _ := api.podEvents("a-first", "NodePorts"); len(ev) > 0 {
		t.Errorf("NodePorts event for the admitted a-first: %s", lcEventsString(ev))
	}
}

// A sandbox killed from outside is replaced by exactly one new sandbox
// (never two running at once); both app containers are replaced, join the
// new sandbox's network namespace and have restart count 1.
func TestSandboxKilledIsReplaced(t *testing.T) {
	e := newEnv(t, "e2e-sandbox")
	e.writeManifest("web.yaml", podManifest("web", 2, "app", "sidecar"))
	a := e.startAgent("agent")
	api := lcAPIOf(t, a)
	pod := e.waitPodRunning(a, "web", "app", "sidecar")
	oldSB := pod.running(runtimeadapter.SandboxName)[0].ID
	oldApps := map[string]string{"app": pod.running("app")[0].ID, "sidecar": pod.running("sidecar")[0].ID}

	sandboxes := map[string]bool{oldSB: true} // every sandbox ever seen
	// check asserts what must hold at every poll: at most one running
	// sandbox and one running instance per app container, and no sandbox
	// besides the old one and a single new one.
	check := func(cs containers) {
		t.Helper()
		if n := len(cs.running(runtimeadapter.SandboxName)); n > 1 {
			t.Fatalf("%d sandboxes running at once: %s", n, cs)
		}
		for _, c := range cs.lcNamed(runtimeadapter.SandboxName) {
			sandboxes[c.ID] = true
		}
		if len(sandboxes) > 2 {
			t.Fatalf("%d sandboxes made for the pod, want the old one and one new: %s", len(sandboxes), cs)
		}
		lcRequireOneApp(t, cs, "app")
		lcRequireOneApp(t, cs, "sidecar")
	}

	dockerCLI(t, "kill", oldSB)
	killed := time.Now()
	var newSB string
	var repl map[string]runtimeadapter.Container
	eventually(t, 20*time.Second, "a new sandbox with both containers replaced in it", func() (bool, string) {
		a.requireRunning()
		cs := e.list().ofPod("web")
		check(cs)
		sb := cs.running(runtimeadapter.SandboxName)
		if len(sb) != 1 || sb[0].ID == oldSB {
			return false, cs.String()
		}
		repl = map[string]runtimeadapter.Container{}
		for name, old := range oldApps {
			r := cs.running(name)
			if len(r) != 1 || r[0].ID == old {
				return false, cs.String()
			}
			repl[name] = r[0]
		}
		newSB = sb[0].ID
		return true, ""
	})
	t.Logf("sandbox %s killed; sandbox %s with %s and %s running %v later", short(oldSB), short(newSB),
		short(repl["app"].ID), short(repl["sidecar"].ID), time.Since(killed).Round(time.Millisecond))
	for name, c := range repl {
		if got := c.Labels[runtimeadapter.LabelRestartCount]; got != "1" {
			t.Errorf("new %s %s: restart count label %q, want \"1\"", name, c.Name, got)
		}
		st, found := e.lcInspect(c.ID)
		if !found {
			t.Fatalf("new %s %s vanished", name, short(c.ID))
		}
		if want := "container:" + newSB; st.networkMode != want {
			t.Errorf("new %s %s: network mode %q, want %q (the new sandbox's)", name, short(c.ID), st.networkMode, want)
		}
	}
	if oldSt, found := e.lcInspect(oldSB); !found {
		t.Errorf("old sandbox %s removed; want it kept (exited) as the newest dead instance", short(oldSB))
	} else {
		// The agent's reaction: it stops the old apps (they exit on
		// SIGTERM) before it makes the new sandbox, whose create and start
		// are then Docker's to be quick about.
		for name, id := range oldApps {
			if st, found := e.lcInspect(id); found && st.finish.Sub(oldSt.finish) > lcPromptly {
				t.Errorf("%s", lcBugSlowReaction("old "+name+" stopped", st.finish.Sub(oldSt.finish)))
			}
		}
	}
	for name, id := range oldApps {
		if st, found := e.lcInspect(id); found && st.running {
			t.Errorf("old %s %s still running", name, short(id))
		}
	}
	want := map[string]string{newSB: "sandbox", repl["app"].ID: "app", repl["sidecar"].ID: "sidecar"}
	// Some relists more: the same new sandbox and containers, nothing else
	// made.
	consistently(t, 3*relistPeriod, "the new sandbox and its containers left running", func() (bool, string) {
		a.requireRunning()
		cs := e.list().ofPod("web")
		check(cs)
		var live containers
		for _, c := range cs {
			if c.State != runtimeadapter.StateExited {
				live = append(live, c)
			}
		}
		return sameContainers(live, want)
	})
	eventually(t, lcAPITimeout, "/pods showing both containers restarted once in the new sandbox", func() (bool, string) {
		p, err := api.pod("web")
		if err != nil {
			return false, err.Error()
		}
		ok := p.Status.Phase == v1.PodRunning && lcCondition(p, v1.PodReadyToStartContainers) == v1.ConditionTrue
		for name, c := range repl {
			st := lcContainerStatus(p, name)
			ok = ok && st != nil && st.RestartCount == 1 && st.State.Running != nil && st.ContainerID == "docker://"+c.ID
		}
		return ok, "pod: " + lcDescribePod(p)
	})
	if evs, err := api.podEvents("web", "SandboxChanged"); err != nil || len(evs) != 1 {
		t.Errorf("want one SandboxChanged event: %s %v", lcEventsString(evs), err)
	}
}
