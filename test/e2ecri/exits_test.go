package e2ecri

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/test/support/testimages"
)

// TestExitThroughTaskEvents: on containerd the agent follows containerd's
// task events (namespace k8s.io), so a container's death reaches its pod
// without waiting for a relist: with a 1 min relist period the pod shows
// the exit within seconds of its FinishedAt. /healthz and
// actorlet_pleg_exit_path name the containerd path, and the exec
// liveness probe's processes, whose exits containerd publishes on the
// same topic, are never taken for deaths.
func TestExitThroughTaskEvents(t *testing.T) {
	e := newEnv(t, "t-cri-exits")
	e.writeManifest("probed.yaml", testimages.ProbedExitPod(true))
	const relist = time.Minute
	a := e.startAgent("agent", "--relist-period", relist.String(), "--log-level", "debug")
	api := a.api()

	var pod v1.Pod
	e.waitFor(waitTimeout, "pod probed Failed with exit 3", func() bool {
		body, ok := get(t, api+"/pods/default/probed")
		return ok && json.Unmarshal([]byte(body), &pod) == nil && pod.Status.Phase == v1.PodFailed
	})
	seen := time.Now()
	if len(pod.Status.ContainerStatuses) != 1 || pod.Status.ContainerStatuses[0].State.Terminated == nil ||
		pod.Status.ContainerStatuses[0].State.Terminated.ExitCode != 3 {
		t.Fatalf("pod probed Failed with %+v; want its app terminated with exit 3", pod.Status.ContainerStatuses)
	}
	term := pod.Status.ContainerStatuses[0].State.Terminated
	// The API's times are whole seconds: the death was seen within 10 s
	// of the exit, a relist period being 60 s.
	if lag := seen.Sub(term.FinishedAt.Time); lag > 10*time.Second {
		t.Fatalf("the exit at %v reached the pod's status %v later: not through the task events", term.FinishedAt, lag)
	}
	app, ok := strings.CutPrefix(term.ContainerID, "containerd://")
	if !ok {
		t.Errorf("the app's containerID %q: want containerd://<id>, as the kubelet's", term.ContainerID)
	}

	metrics, _ := get(t, api+"/metrics")
	if !strings.Contains(metrics, `actorlet_pleg_exit_path{path="containerd"} 1`) {
		t.Errorf("actorlet_pleg_exit_path does not name containerd:\n%s", grep(metrics, "actorlet_pleg_exit_path"))
	}
	runs := 0.0 // exec probe runs before the death, whatever their result
	for line := range strings.Lines(metrics) {
		var result string
		var n float64
		if _, err := fmt.Sscanf(line, `actorlet_probe_results_total{probe_type="liveness",result=%q} %g`, &result, &n); err == nil {
			runs += n
		}
	}
	if runs < 2 {
		t.Errorf("%v liveness probe runs counted; want at least 2 (their exec exits are what this test checks)", runs)
	}
	health, _ := get(t, api+"/healthz")
	if !strings.Contains(health, `"name":"container exits","ok":true,"message":"containerd since`) {
		t.Errorf("/healthz does not show the containerd path: %s", health)
	}
	appExits := 0
	for _, l := range a.logs("runtime exit") {
		if id, _ := l["id"].(string); id != "" && strings.HasPrefix(app, id) {
			appExits++
		}
	}
	if appExits != 1 {
		t.Errorf("%d task exits logged for the app container %s, want 1 (the exec probes' exits are not deaths)", appExits, app)
	}
	if n := len(a.logs("container exits: following containerd task events at " + e.cd.Socket + ", namespace k8s.io; a death reaches its pod at once, ahead of the runtime's own events and the relist")); n != 1 {
		t.Errorf("%d log lines say the containerd path is followed, want 1", n)
	}
}

// grep returns the lines of s containing sub.
func grep(s, sub string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			b.WriteString(line)
		}
	}
	return b.String()
}
