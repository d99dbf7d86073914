package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// A sidecar (an init container with restartPolicy Always) killed with
// `docker kill` is restarted, even under the pod's restartPolicy Never,
// while the app container runs on: same ID, restart count unchanged.
func TestKilledSidecarIsRestarted(t *testing.T) {
	e := newEnv(t, "e2e-sidecar")
	e.writeManifest("web.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  initContainers:
  - name: side
    image: %[1]s
    restartPolicy: Always
  containers:
  - name: app
    image: %[1]s
`, testimages.TestWorkloadTag))
	a := e.startAgent("agent")
	pod := e.waitPodRunning(a, "web", "app", "side")
	app := pod.running("app")[0]
	sandboxID := pod.running(runtimeadapter.SandboxName)[0].ID
	old := pod.running("side")[0]
	untouched := map[string]string{app.ID: "app", sandboxID: "sandbox"}
	started := e.startTimes(untouched)

	dockerCLI(t, "kill", old.ID)
	var repl runtimeadapter.Container
	// No back-off for a first exit; a few 1 s relists (and 1 s of slack).
	eventually(t, 1*time.Second+6*relistPeriod, "a new sidecar running", func() (bool, string) {
		a.requireRunning()
		cs := e.list().ofPod("web")
		if r := cs.running("app"); len(r) != 1 || r[0].ID != app.ID {
			t.Fatalf("app %s no longer the one running: %s", short(app.ID), cs)
		}
		if r := cs.running("side"); len(r) == 1 && r[0].ID != old.ID {
			repl = r[0]
			return true, ""
		}
		return false, cs.String()
	})
	if got := repl.Labels[runtimeadapter.LabelRestartCount]; got != "1" {
		t.Errorf("new sidecar %s: restart count label %q, want \"1\"", repl.Name, got)
	}
	consistently(t, 3*relistPeriod, "the app and the new sidecar run on", func() (bool, string) {
		a.requireRunning()
		cs := e.list().ofPod("web")
		r, s := cs.running("app"), cs.running("side")
		return len(r) == 1 && r[0].ID == app.ID && r[0].Labels[runtimeadapter.LabelRestartCount] == "0" &&
			len(s) == 1 && s[0].ID == repl.ID, cs.String()
	})
	e.requireNotRestarted(untouched, started)
}
