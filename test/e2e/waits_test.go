package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// waitingIn waits until /pods shows container name of podName waiting with
// reason, the pod in phase, and returns that status.
func waitingIn(t *testing.T, api *lcAPI, podName, name, reason string, phase v1.PodPhase) *v1.ContainerStatus {
	t.Helper()
	var got *v1.ContainerStatus
	eventually(t, podUpTimeout, fmt.Sprintf("/pods showing %s waiting with %s, pod %s", name, reason, phase), func() (bool, string) {
		p, err := api.pod(podName)
		if err != nil {
			return false, err.Error()
		}
		cs := lcContainerStatus(p, name)
		if cs == nil || cs.State.Waiting == nil || cs.State.Waiting.Reason != reason || p.Status.Phase != phase {
			return false, lcDescribePod(p)
		}
		got = cs
		return true, ""
	})
	return got
}

// noApp fails the test if pod podName has a container named name.
func (e *env) noApp(podName, name string) {
	e.t.Helper()
	for _, c := range e.list().ofPod(podName) {
		if c.Labels[runtimeadapter.LabelContainerName] == name {
			e.t.Errorf("pod %s has a %s container (%s, %s); want none", podName, name, c.Name, c.RawState)
		}
	}
}

// imagePullPolicy Never and an image Docker does not have: the container
// waits with ErrImageNeverPull and the kubelet's message, a Warning
// ErrImageNeverPull event says so, the pod stays Pending under
// restartPolicy Never, and no container is made. (No image is tagged here:
// a tag of the shared test image could not always be removed again.)
func TestErrImageNeverPullOnDocker(t *testing.T) {
	e := newEnv(t, "e2e-neverpull")
	image := "actorlet-e2e/" + e.node + ":1" // no such image: its tag is this test's own
	e.writeManifest("local.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: local
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: %s
    imagePullPolicy: Never
`, image))
	a := e.startAgent("agent")
	api := lcAPIOf(t, a)
	want := fmt.Sprintf("Container image %q is not present with pull policy of Never", image)
	cs := waitingIn(t, api, "local", "app", "ErrImageNeverPull", v1.PodPending)
	if cs.State.Waiting.Message != want || cs.RestartCount != 0 {
		t.Errorf("waiting %q restartCount %d, want %q, 0", cs.State.Waiting.Message, cs.RestartCount, want)
	}
	evs, err := api.podEvents("local", "ErrImageNeverPull")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) == 0 || evs[0].Type != v1.EventTypeWarning || evs[0].Message != want {
		t.Errorf("ErrImageNeverPull events %s, want a Warning %q", lcEventsString(evs), want)
	}
	// It is tried again on the failed-sync curve (10–15 s; the actor
	// tests time it): still Pending, still no container.
	consistently(t, 16*time.Second, "local Pending, waiting with ErrImageNeverPull, no app container", func() (bool, string) {
		a.requireRunning()
		p, err := api.pod("local")
		if err != nil {
			return false, err.Error()
		}
		cs := lcContainerStatus(p, "app")
		return p.Status.Phase == v1.PodPending && cs != nil && cs.State.Waiting != nil &&
			cs.State.Waiting.Reason == "ErrImageNeverPull", lcDescribePod(p)
	})
	e.noApp("local", "app")
}

// A create Docker refuses (a relative workingDir, which passes manifest
// validation as it passes Kubernetes'): the container waits with
// CreateContainerError and Docker's message (Warning Failed "Error: …"),
// no container is made, restartCount stays 0 and the pod stays Pending
// under restartPolicy Never, as the kubelet's does. (On containerd the
// same spec fails at start instead: runc checks the working directory.)
func TestCreateContainerErrorOnDocker(t *testing.T) {
	e := newEnv(t, "e2e-createerr")
	e.writeManifest("relwd.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: relwd
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: %s
    workingDir: srv
`, testimages.TestWorkloadTag))
	a := e.startAgent("agent")
	api := lcAPIOf(t, a)
	const docker = "the working directory 'srv' is invalid, it needs to be an absolute path"
	cs := waitingIn(t, api, "relwd", "app", "CreateContainerError", v1.PodPending)
	if !strings.Contains(cs.State.Waiting.Message, docker) || cs.RestartCount != 0 {
		t.Errorf("waiting %q restartCount %d, want Docker's %q, 0", cs.State.Waiting.Message, cs.RestartCount, docker)
	}
	evs, err := api.podEvents("relwd", "Failed")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ev := range evs {
		found = found || (ev.Type == v1.EventTypeWarning && strings.HasPrefix(ev.Message, "Error: ") && strings.Contains(ev.Message, docker))
	}
	if !found {
		t.Errorf("Failed events %s, want a Warning \"Error: …%s\"", lcEventsString(evs), docker)
	}
	// Retried on the failed-sync curve, the pod stays Pending with no app
	// container.
	consistently(t, 12*time.Second, "relwd Pending, waiting with CreateContainerError, no app container", func() (bool, string) {
		a.requireRunning()
		p, err := api.pod("relwd")
		if err != nil {
			return false, err.Error()
		}
		cs := lcContainerStatus(p, "app")
		pod := e.list().ofPod("relwd")
		for _, c := range pod {
			if c.Labels[runtimeadapter.LabelContainerName] == "app" {
				return false, "containers: " + pod.String()
			}
		}
		return p.Status.Phase == v1.PodPending && cs != nil && cs.State.Waiting != nil &&
			cs.State.Waiting.Reason == "CreateContainerError" && cs.RestartCount == 0, lcDescribePod(p)
	})
}
