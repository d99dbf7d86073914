package e2ecri

import (
	"encoding/json"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/test/support/testimages"
)

// TestExecProbes: exec probes run through CRI's ExecSync: a passing
// readiness probe makes its container ready, a failing liveness probe
// restarts its container.
func TestExecProbes(t *testing.T) {
	e := newEnv(t, "t-cri-probes")
	img := testimages.TestWorkloadTag
	e.writeManifest("probes.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: probes
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
  - name: ready
    image: %[1]s
    readinessProbe:
      exec: {command: ["/testworkload", "check", "--file", "/testworkload"]}
      periodSeconds: 1
  - name: sick
    image: %[1]s
    livenessProbe:
      exec: {command: ["/testworkload", "check", "--file", "/nonexistent"]}
      periodSeconds: 1
      failureThreshold: 1
`, img))
	a := e.startAgent("agent")
	api := a.api()
	e.waitFor(waitTimeout, "container ready ready and container sick restarted by its liveness probe", func() bool {
		body, ok := get(t, api+"/pods/default/probes")
		if !ok {
			return false
		}
		var pod v1.Pod
		if json.Unmarshal([]byte(body), &pod) != nil {
			return false
		}
		ready, restarted := false, false
		for _, cs := range pod.Status.ContainerStatuses {
			switch cs.Name {
			case "ready":
				ready = cs.Ready
			case "sick":
				restarted = cs.RestartCount >= 1 && !cs.Ready
			}
		}
		return ready && restarted
	})
}
