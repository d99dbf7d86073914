package podsync

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// A container whose start attempt failed before it ran (the pod actor
// holds its start and sets Plan.Waiting): it shows the kubelet's reason
// and message, keeps the restart count and last termination of the
// instance that ran, and a container that never ran keeps the pod Pending,
// also under restartPolicy Never (as the oracle kubelet v1.34 shows for
// CreateContainerError, InvalidImageName and ErrImageNeverPull).
func TestStatusFailedStartWaits(t *testing.T) {
	R, X := runtimeadapter.StateRunning, runtimeadapter.StateExited
	never := testPod(v1.RestartPolicyNever, "a")
	always := testPod(v1.RestartPolicyAlways, "a")
	sb := func(p *v1.Pod) runtimeadapter.Container { return inst(p, "POD", 0, R, 0) }
	tests := []struct {
		name         string
		pod          *v1.Pod
		cs           []runtimeadapter.Container
		reason       string
		wantPhase    v1.PodPhase
		wantRestarts int32
		wantLastExit int32 // -1: no last termination
	}{
		{"Never, refused create", never, []runtimeadapter.Container{sb(never)}, "CreateContainerError", v1.PodPending, 0, -1},
		{"Never, invalid image name", never, []runtimeadapter.Container{sb(never)}, "InvalidImageName", v1.PodPending, 0, -1},
		{"Never, image absent", never, []runtimeadapter.Container{sb(never)}, "ErrImageNeverPull", v1.PodPending, 0, -1},
		{"Always, config error", always, []runtimeadapter.Container{sb(always)}, "CreateContainerConfigError", v1.PodPending, 0, -1},
		{"Always, refused restart", always, []runtimeadapter.Container{sb(always), inst(always, "a", 2, X, 1)}, "CreateContainerError", v1.PodRunning, 2, 1},
		{"Always, pull failed on restart", always, []runtimeadapter.Container{sb(always), inst(always, "a", 0, X, 0)}, "ErrImagePull", v1.PodRunning, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := Compute(Input{Node: node, Pod: tt.pod, Containers: tt.cs, Now: t0.Add(5 * 60e9)})
			if len(plan.Start) != 1 || plan.Start[0].Name != "a" {
				t.Fatalf("plan starts %+v, want container a", plan.Start)
			}
			// What the pod actor does with a held start.
			plan.Start = nil
			plan.Waiting["a"] = Waiting{Reason: tt.reason, Message: "why"}
			st := Status(tt.pod, tt.cs, plan)
			c := st.ContainerStatuses[0]
			if w := c.State.Waiting; w == nil || w.Reason != tt.reason || w.Message != "why" {
				t.Errorf("state %+v, want waiting %s", c.State, tt.reason)
			}
			if st.Phase != tt.wantPhase || c.RestartCount != tt.wantRestarts {
				t.Errorf("phase %s restartCount %d, want %s, %d", st.Phase, c.RestartCount, tt.wantPhase, tt.wantRestarts)
			}
			last := c.LastTerminationState.Terminated
			if (tt.wantLastExit < 0) != (last == nil) || (last != nil && last.ExitCode != tt.wantLastExit) {
				t.Errorf("last termination %+v, want exit %d", last, tt.wantLastExit)
			}
		})
	}
}
