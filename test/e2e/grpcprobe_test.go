package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// gRPC probes against the grpchealth image on the pod network (so to the
// pod's IP), its statuses flipped by files on an emptyDir volume: a
// readiness probe of service "ready" makes the container and the pod not
// Ready while that service is NOT_SERVING and Ready again when it serves;
// a liveness probe of the server ("") kills the container after
// failureThreshold failures once it is NOT_SERVING, a new instance
// replaces it (restartCount 1, an Unhealthy event with the kubelet's
// message) and, serving again, is Ready and stays.
func TestGRPCProbesReadinessAndLiveness(t *testing.T) {
	testimages.EnsureGRPCHealthImage(t)
	e := newEnv(t, "e2e-grpc")
	e.writeManifest("grpc.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: grpc
spec:
  terminationGracePeriodSeconds: 2
  volumes:
  - name: state
    emptyDir: {}
  containers:
  - name: app
    image: %s
    args: ["--addr", ":9000", "--state-dir", "/state"]
    volumeMounts: [{name: state, mountPath: /state}]
    readinessProbe:
      grpc: {port: 9000, service: ready}
      periodSeconds: 1
      failureThreshold: 1
    livenessProbe:
      grpc: {port: 9000}
      periodSeconds: 1
      failureThreshold: %d
`, testimages.GRPCHealthTag, lcFailureThreshold))
	a := e.startAgent("agent")
	api := lcAPIOf(t, a)
	old := e.waitPodRunning(a, "grpc", "app").running("app")[0]
	state := e.lcMountSource(old.ID, "/state")
	waitReady := func(want bool, id string) {
		t.Helper()
		eventually(t, lcAPITimeout, fmt.Sprintf("/pods showing app (%s) ready=%v", short(id), want), func() (bool, string) {
			a.requireRunning()
			p, err := api.pod("grpc")
			if err != nil {
				return false, err.Error()
			}
			cs := lcContainerStatus(p, "app")
			cond := v1.ConditionFalse
			if want {
				cond = v1.ConditionTrue
			}
			ok := cs != nil && cs.ContainerID == "docker://"+id && cs.Ready == want && lcCondition(p, v1.PodReady) == cond
			return ok, lcDescribePod(p)
		})
	}
	waitReady(true, old.ID)

	// Readiness follows the "ready" service; the container is not killed.
	notReady := filepath.Join(state, "ready.notserving")
	if err := os.WriteFile(notReady, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitReady(false, old.ID)
	if err := os.Remove(notReady); err != nil {
		t.Fatal(err)
	}
	waitReady(true, old.ID)
	e.lcStaysRunning(a, 3*lcProbePeriod, "the serving container left running", "grpc", "app", old.ID)

	// Liveness: the server NOT_SERVING kills the container.
	notServing := filepath.Join(state, "server.notserving")
	failedAt := time.Now()
	if err := os.WriteFile(notServing, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e.lcWaitProbeKill(a, "grpc", "app", old.ID, failedAt)
	if err := os.Remove(notServing); err != nil {
		t.Fatal(err)
	}
	repl := e.lcWaitReplacement(a, "grpc", "app", old.ID)
	if got := repl.Labels[runtimeadapter.LabelRestartCount]; got != "1" {
		t.Errorf("replacement %s: restart count label %q, want \"1\"", repl.Name, got)
	}
	e.lcWaitRestartedInAPI(api, "grpc", "app", repl.ID, `Liveness probe failed: service unhealthy (responded with "NOT_SERVING")`)
	waitReady(true, repl.ID)
	e.lcStaysRunning(a, 3*lcProbePeriod, "the serving replacement left running", "grpc", "app", repl.ID)
}
