package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// A container whose command does not exist cannot start: Docker creates it
// and its start fails, leaving it "created" with State.Error. Under
// restartPolicy Never the pod is Failed and the container terminated with
// reason StartError, exit code 128 (as the kubelet shows it on containerd)
// and Docker's message; it is not started again.
func TestStartErrorUnderNeverFailsThePod(t *testing.T) {
	e := newEnv(t, "e2e-starterr")
	e.writeManifest("broken.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: broken
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: %s
    command: ["/does-not-exist"]
`, testimages.TestWorkloadTag))
	a := e.startAgent("agent")
	api := lcAPIOf(t, a)
	var term *v1.ContainerStateTerminated
	eventually(t, podUpTimeout, "/pods showing the pod Failed with app terminated StartError", func() (bool, string) {
		a.requireRunning()
		p, err := api.pod("broken")
		if err != nil {
			return false, err.Error()
		}
		cs := lcContainerStatus(p, "app")
		if p.Status.Phase != v1.PodFailed || cs == nil || cs.State.Terminated == nil {
			return false, "pod: " + lcDescribePod(p)
		}
		term = cs.State.Terminated
		return true, ""
	})
	if term.Reason != "StartError" || term.ExitCode != 128 || !strings.Contains(term.Message, `"/does-not-exist"`) || term.FinishedAt.IsZero() {
		t.Errorf("app terminated %+v; want reason StartError, exit code 128, Docker's message naming /does-not-exist, a finish time", term)
	}
	apps := e.list().ofPod("broken").lcNamed("app")
	if len(apps) != 1 {
		t.Fatalf("app containers: %s, want one", apps)
	}
	in, _ := e.inspect(apps[0].ID)
	if in.State.Status != container.StateCreated || in.State.Error == "" || term.Message != in.State.Error {
		t.Errorf("docker shows the app %s, error %q; the status says %q", in.State.Status, in.State.Error, term.Message)
	}
	// The failed pod's sandbox stops; several relists later, the same one
	// container, never started again, and one Failed event with Docker's
	// message.
	eventually(t, 15*time.Second, "the sandbox stopped", func() (bool, string) {
		cs := e.list().ofPod("broken")
		return len(cs.running(runtimeadapter.SandboxName)) == 0, cs.String()
	})
	consistently(t, 5*relistPeriod, "one app container, never started again", func() (bool, string) {
		a.requireRunning()
		cs := e.list().ofPod("broken")
		apps := cs.lcNamed("app")
		if len(apps) != 1 || apps[0].RawState != "created" || len(cs.running(runtimeadapter.SandboxName)) != 0 {
			return false, cs.String()
		}
		return true, ""
	})
	evs, err := api.podEvents("broken", "Failed")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Type != v1.EventTypeWarning || evs[0].Message != "Error: "+in.State.Error {
		t.Errorf("Failed events %s; want one Warning \"Error: <Docker's message>\"", lcEventsString(evs))
	}
}

// An OnFailure container that completed (exit 0) is not run again when its
// exited container is removed (`docker rm`), nor after a restart of the
// agent; /pods still shows it terminated Completed, with its container ID.
func TestRemovedCompletedContainerNotRunAgain(t *testing.T) {
	e := newEnv(t, "e2e-removed")
	e.writeManifest("job.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: job
spec:
  restartPolicy: OnFailure
  terminationGracePeriodSeconds: 1
  containers:
  - name: job
    image: %[1]s
    env: [{name: TW_EXIT_AFTER, value: 500ms}, {name: TW_EXIT_CODE, value: "0"}]
  - name: server
    image: %[1]s
`, testimages.TestWorkloadTag))
	a := e.startAgent("agent")
	api := lcAPIOf(t, a)
	var jobID string
	eventually(t, podUpTimeout, "/pods showing job terminated Completed beside the server", func() (bool, string) {
		a.requireRunning()
		p, err := api.pod("job")
		if err != nil {
			return false, err.Error()
		}
		cs := lcContainerStatus(p, "job")
		if cs == nil || cs.State.Terminated == nil || cs.State.Terminated.Reason != "Completed" || p.Status.Phase != v1.PodRunning {
			return false, "pod: " + lcDescribePod(p)
		}
		jobID = strings.TrimPrefix(cs.ContainerID, "docker://")
		return true, ""
	})
	server := e.list().ofPod("job").running("server")
	if len(server) != 1 {
		t.Fatalf("servers: %s", e.list().ofPod("job"))
	}
	dockerCLI(t, "rm", jobID)
	check := func(a *agent) {
		t.Helper()
		consistently(t, 5*relistPeriod, "no new job container, the same server", func() (bool, string) {
			a.requireRunning()
			cs := e.list().ofPod("job")
			if len(cs.lcNamed("job")) != 0 || len(cs.running("server")) != 1 || cs.running("server")[0].ID != server[0].ID {
				return false, cs.String()
			}
			return true, ""
		})
		p, err := lcAPIOf(t, a).pod("job")
		if err != nil {
			t.Fatal(err)
		}
		if cs := lcContainerStatus(p, "job"); cs == nil || cs.State.Terminated == nil || cs.State.Terminated.Reason != "Completed" ||
			cs.ContainerID != "docker://"+jobID || p.Status.Phase != v1.PodRunning {
			t.Errorf("after the removal: pod %s; want job terminated Completed as %s", lcDescribePod(p), short(jobID))
		}
	}
	check(a)

	// The agent restarted: it remembers.
	a.signal(syscall.SIGTERM)
	if !a.waitExit(exitTimeout) {
		t.Fatal("agent did not exit after SIGTERM")
	}
	b := e.startAgent("agent2")
	check(b)
}
