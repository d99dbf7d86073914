package podsync

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/supervision"
)

func TestStatusPhase(t *testing.T) {
	R, X := runtimeadapter.StateRunning, runtimeadapter.StateExited
	always := testPod(v1.RestartPolicyAlways, "a", "b")
	never := testPod(v1.RestartPolicyNever, "a", "b")
	onFail := testPod(v1.RestartPolicyOnFailure, "a", "b")
	sb := func(p *v1.Pod) runtimeadapter.Container { return inst(p, "POD", 0, R, 0) }
	tests := []struct {
		name      string
		pod       *v1.Pod
		cs        []runtimeadapter.Container
		wantPhase v1.PodPhase
		wantReady bool
	}{
		{"nothing yet", always, nil, v1.PodPending, false},
		{"one never started", always, []runtimeadapter.Container{sb(always), inst(always, "a", 0, R, 0)}, v1.PodPending, false},
		{"all running", always, []runtimeadapter.Container{sb(always), inst(always, "a", 0, R, 0), inst(always, "b", 0, R, 0)}, v1.PodRunning, true},
		{"Always, all exited: Running (restarting)", always, []runtimeadapter.Container{sb(always), inst(always, "a", 0, X, 0), inst(always, "b", 0, X, 1)}, v1.PodRunning, false},
		{"Never, all exited 0: Succeeded", never, []runtimeadapter.Container{inst(never, "a", 0, X, 0), inst(never, "b", 0, X, 0)}, v1.PodSucceeded, false},
		{"Never, one failed: Failed", never, []runtimeadapter.Container{inst(never, "a", 0, X, 0), inst(never, "b", 0, X, 2)}, v1.PodFailed, false},
		{"OnFailure, one failed: Running", onFail, []runtimeadapter.Container{sb(onFail), inst(onFail, "a", 0, X, 0), inst(onFail, "b", 0, X, 2)}, v1.PodRunning, false},
		{"OnFailure, all 0: Succeeded", onFail, []runtimeadapter.Container{inst(onFail, "a", 0, X, 0), inst(onFail, "b", 0, X, 0)}, v1.PodSucceeded, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := Compute(Input{Node: node, Pod: tt.pod, Containers: tt.cs, Now: t0.Add(5 * 60e9), Backoff: policy, History: armed(tt.cs, 1e12)})
			st := Status(tt.pod, tt.cs, plan)
			if st.Phase != tt.wantPhase {
				t.Errorf("phase %s, want %s", st.Phase, tt.wantPhase)
			}
			var ready bool
			for _, c := range st.Conditions {
				if c.Type == v1.PodReady {
					ready = c.Status == v1.ConditionTrue
				}
			}
			if ready != tt.wantReady {
				t.Errorf("ready %v, want %v", ready, tt.wantReady)
			}
		})
	}
}

func TestContainerStatusCrashLoop(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	cs := []runtimeadapter.Container{inst(pod, "POD", 0, runtimeadapter.StateRunning, 0),
		inst(pod, "app", 1, runtimeadapter.StateExited, 3), inst(pod, "app", 0, runtimeadapter.StateExited, 3)}
	plan := Compute(Input{Node: node, Pod: pod, Containers: cs, Now: t0.Add(61e9), Backoff: policy, History: armed(cs, 300e9)})
	st := Status(pod, cs, plan)
	c := st.ContainerStatuses[0]
	if c.State.Waiting == nil || c.State.Waiting.Reason != "CrashLoopBackOff" {
		t.Fatalf("state %+v, want waiting CrashLoopBackOff", c.State)
	}
	if c.RestartCount != 1 {
		t.Errorf("restartCount %d, want 1", c.RestartCount)
	}
	if lt := c.LastTerminationState.Terminated; lt == nil || lt.ExitCode != 3 || lt.ContainerID != "docker://app-1" || lt.Reason != "Error" {
		t.Errorf("lastState %+v", c.LastTerminationState)
	}
	if st.Phase != v1.PodRunning {
		t.Errorf("phase %s, want Running", st.Phase)
	}
}

func TestStatusInitContainers(t *testing.T) {
	R, X := runtimeadapter.StateRunning, runtimeadapter.StateExited
	always, never := initPod(v1.RestartPolicyAlways), initPod(v1.RestartPolicyNever)
	sb := inst(always, "POD", 0, R, 0)
	tests := []struct {
		name            string
		pod             *v1.Pod
		cs              []runtimeadapter.Container
		wantPhase       v1.PodPhase
		wantInitialized bool
	}{
		{"first init running", always, []runtimeadapter.Container{sb, inst(always, "init1", 0, R, 0)}, v1.PodPending, false},
		{"inits done, app running", always, []runtimeadapter.Container{sb, inst(always, "init1", 0, X, 0), inst(always, "init2", 0, X, 0), inst(always, "app", 0, R, 0)}, v1.PodRunning, true},
		{"Never: failed init fails the pod", never, []runtimeadapter.Container{inst(never, "POD", 0, X, 0), inst(never, "init1", 0, X, 1)}, v1.PodFailed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := Compute(Input{Node: node, Pod: tt.pod, Containers: tt.cs, Now: t0.Add(time.Hour)})
			st := Status(tt.pod, tt.cs, plan)
			if st.Phase != tt.wantPhase {
				t.Errorf("phase %s, want %s", st.Phase, tt.wantPhase)
			}
			for _, c := range st.Conditions {
				if c.Type == v1.PodInitialized && (c.Status == v1.ConditionTrue) != tt.wantInitialized {
					t.Errorf("Initialized %s, want %v", c.Status, tt.wantInitialized)
				}
			}
			if len(st.InitContainerStatuses) != 2 {
				t.Errorf("%d init container statuses, want 2", len(st.InitContainerStatuses))
			}
		})
	}
}

func TestProbesInPlanAndStatus(t *testing.T) {
	R := runtimeadapter.StateRunning
	pod := testPod(v1.RestartPolicyAlways, "app")
	pod.Spec.Containers[0].ReadinessProbe = &v1.Probe{}
	cs := []runtimeadapter.Container{inst(pod, "POD", 0, R, 0), inst(pod, "app", 0, R, 0)}

	plan := Compute(Input{Node: node, Pod: pod, Containers: cs, Now: t0, Unhealthy: map[string]time.Duration{"app-0": 7 * time.Second}})
	if len(plan.Kill) != 1 || plan.Kill[0].Reason != ReasonUnhealthy || plan.Kill[0].Grace != 7*time.Second {
		t.Fatalf("unhealthy container: kills %+v, want one Unhealthy kill with 7s grace", plan.Kill)
	}

	plan = Compute(Input{Node: node, Pod: pod, Containers: cs, Now: t0})
	ready := func(st v1.PodStatus) (bool, bool) {
		podReady := false
		for _, c := range st.Conditions {
			if c.Type == v1.PodReady {
				podReady = c.Status == v1.ConditionTrue
			}
		}
		return st.ContainerStatuses[0].Ready, podReady
	}
	if c, p := ready(StatusWith(pod, cs, plan, Probes{})); c || p {
		t.Errorf("readiness not passed yet: container ready %v, pod ready %v; want false, false", c, p)
	}
	if c, p := ready(StatusWith(pod, cs, plan, Probes{Ready: map[string]bool{"app-0": true}})); !c || !p {
		t.Errorf("readiness passed: container ready %v, pod ready %v; want true, true", c, p)
	}

	pod.Spec.Containers[0].ReadinessProbe = nil
	pod.Spec.Containers[0].StartupProbe = &v1.Probe{}
	st := StatusWith(pod, cs, plan, Probes{})
	if c := st.ContainerStatuses[0]; c.Started == nil || *c.Started || c.Ready {
		t.Errorf("startup not passed: started %v ready %v, want false, false", c.Started, c.Ready)
	}
	st = StatusWith(pod, cs, plan, Probes{Started: map[string]bool{"app-0": true}})
	if c := st.ContainerStatuses[0]; c.Started == nil || !*c.Started || !c.Ready {
		t.Errorf("startup passed: started %v ready %v, want true, true", c.Started, c.Ready)
	}
}

// Containers whose instance is gone show from the node's record of their
// last exit: terminated as they were (with their container ID), as the
// last termination of a newer instance, and a start that failed as
// StartError with exit code 128 and the runtime's message.
func TestStatusFromRecordedExits(t *testing.T) {
	R, X, U := runtimeadapter.StateRunning, runtimeadapter.StateExited, runtimeadapter.StateUnknown
	onFail := testPod(v1.RestartPolicyOnFailure, "a", "b")
	never := testPod(v1.RestartPolicyNever, "app")
	always := testPod(v1.RestartPolicyAlways, "app")
	withInit := initPod(v1.RestartPolicyAlways)
	sb := func(p *v1.Pod) runtimeadapter.Container { return inst(p, "POD", 0, R, 0) }
	now := t0.Add(time.Hour)
	tests := []struct {
		name  string
		pod   *v1.Pod
		cs    []runtimeadapter.Container
		hist  supervision.Records
		phase v1.PodPhase
		check func(v1.PodStatus) string // "" when right
	}{
		{"OnFailure: completed and removed, the other running", onFail, []runtimeadapter.Container{sb(onFail), inst(onFail, "b", 0, R, 0)},
			recorded(inst(onFail, "a", 0, X, 0), 0), v1.PodRunning, func(st v1.PodStatus) string {
				if c := st.ContainerStatuses[0]; c.State.Terminated == nil || c.State.Terminated.Reason != "Completed" ||
					c.State.Terminated.ContainerID != "docker://a-0" || c.ContainerID != "docker://a-0" {
					return fmt.Sprintf("a: %+v", c)
				}
				return ""
			}},
		{"Never: failed and removed: Failed", never, nil, recorded(inst(never, "app", 0, X, 2), 0), v1.PodFailed, func(st v1.PodStatus) string {
			if c := st.ContainerStatuses[0]; c.State.Terminated == nil || c.State.Terminated.ExitCode != 2 || !c.State.Terminated.FinishedAt.Equal(&metav1.Time{Time: t0.Add(time.Second)}) {
				return fmt.Sprintf("app: %+v", c)
			}
			return ""
		}},
		{"Always: the removed exit is the running one's last state", always, []runtimeadapter.Container{sb(always), inst(always, "app", 4, R, 0)},
			recorded(inst(always, "app", 3, X, 5), 0), v1.PodRunning, func(st v1.PodStatus) string {
				c := st.ContainerStatuses[0]
				if lt := c.LastTerminationState.Terminated; c.RestartCount != 4 || lt == nil || lt.ExitCode != 5 || lt.ContainerID != "docker://app-3" {
					return fmt.Sprintf("app: %+v", c)
				}
				return ""
			}},
		{"a completed init container removed in the current sandbox", withInit, []runtimeadapter.Container{sb(withInit), inst(withInit, "init2", 0, X, 0), inst(withInit, "app", 0, R, 0)},
			recorded(inst(withInit, "init1", 0, X, 0), 0), v1.PodRunning, func(st v1.PodStatus) string {
				if c := st.InitContainerStatuses[0]; c.State.Terminated == nil || c.State.Terminated.Reason != "Completed" || !c.Ready {
					return fmt.Sprintf("init1: %+v", c)
				}
				for _, c := range st.Conditions {
					if c.Type == v1.PodInitialized && c.Status != v1.ConditionTrue {
						return "not Initialized"
					}
				}
				return ""
			}},
		{"Never: a start that failed is StartError 128, the pod Failed", never, []runtimeadapter.Container{sb(never), startFailedInst(inst(never, "app", 0, U, 0))},
			nil, v1.PodFailed, func(st v1.PodStatus) string {
				c := st.ContainerStatuses[0]
				term := c.State.Terminated
				if term == nil || term.Reason != "StartError" || term.ExitCode != 128 || !strings.Contains(term.Message, "/does-not-exist") ||
					!term.StartedAt.IsZero() || !term.FinishedAt.Equal(&metav1.Time{Time: now}) {
					return fmt.Sprintf("app: %+v", c)
				}
				return ""
			}},
		{"Always: a start that failed is the last termination while backing off", always, []runtimeadapter.Container{sb(always), startFailedInst(inst(always, "app", 1, U, 0))},
			armedAt([]runtimeadapter.Container{inst(always, "app", 1, U, 0)}, 10*time.Second, now.Add(-5*time.Second)), v1.PodRunning, func(st v1.PodStatus) string {
				c := st.ContainerStatuses[0]
				if lt := c.LastTerminationState.Terminated; c.RestartCount != 1 || c.State.Waiting == nil || c.State.Waiting.Reason != "CrashLoopBackOff" ||
					lt == nil || lt.Reason != "StartError" || lt.ExitCode != 128 {
					return fmt.Sprintf("app: %+v", c)
				}
				return ""
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := Compute(Input{Node: node, Pod: tt.pod, Containers: tt.cs, Now: now, Backoff: policy, History: tt.hist})
			st := Status(tt.pod, tt.cs, plan)
			if st.Phase != tt.phase {
				t.Errorf("phase %s, want %s", st.Phase, tt.phase)
			}
			if msg := tt.check(st); msg != "" {
				t.Error(msg)
			}
		})
	}
}

// TestStatusContainerIDs: container IDs in a status carry the runtime's
// type as the kubelet writes them, Docker's when the runtime says none;
// in the running, terminated and last-terminated states alike.
func TestStatusContainerIDs(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	cs := []runtimeadapter.Container{inst(pod, "POD", 0, runtimeadapter.StateRunning, 0),
		inst(pod, "app", 1, runtimeadapter.StateRunning, 0), inst(pod, "app", 0, runtimeadapter.StateExited, 3)}
	plan := Compute(Input{Node: node, Pod: pod, Containers: cs, Now: t0.Add(61e9), Backoff: policy, History: armed(cs, 300e9)})
	for _, tc := range []struct{ runtimeType, want string }{
		{"", "docker://"},
		{"docker", "docker://"},
		{"containerd", "containerd://"},
		{"cri-o", "cri-o://"},
	} {
		st := StatusOn(tc.runtimeType, pod, cs, plan, Probes{})
		c := st.ContainerStatuses[0]
		lt := c.LastTerminationState.Terminated
		if c.ContainerID != tc.want+"app-1" || lt == nil || lt.ContainerID != tc.want+"app-0" {
			t.Errorf("runtime %q: containerID %q, last terminated %+v; want %sapp-1 and %sapp-0", tc.runtimeType, c.ContainerID, lt, tc.want, tc.want)
		}
	}
	cs[1].State, cs[1].ExitCode = runtimeadapter.StateExited, 1
	if st := StatusOn("containerd", pod, cs, plan, Probes{}); st.ContainerStatuses[0].State.Terminated == nil && st.ContainerStatuses[0].LastTerminationState.Terminated == nil ||
		!strings.HasPrefix(terminatedID(st.ContainerStatuses[0]), "containerd://") {
		t.Errorf("terminated state on containerd: %+v", st.ContainerStatuses[0])
	}
}

func terminatedID(c v1.ContainerStatus) string {
	if c.State.Terminated != nil {
		return c.State.Terminated.ContainerID
	}
	return c.LastTerminationState.Terminated.ContainerID
}
