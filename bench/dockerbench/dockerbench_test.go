package dockerbench

import (
	"os"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestProcCPU(t *testing.T) {
	d, err := procCPU(os.Getpid())
	if err != nil || d < 0 {
		t.Fatalf("procCPU = %v, %v", d, err)
	}
}

func TestExitedIDs(t *testing.T) {
	fin := time.Unix(100, 5)
	p := &v1.Pod{Status: v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{
		{State: v1.ContainerState{Running: &v1.ContainerStateRunning{}},
			LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ContainerID: "docker://old", FinishedAt: metav1.NewTime(fin)}}},
		{State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ContainerID: "docker://dead", FinishedAt: metav1.NewTime(fin)}}},
	}}}
	got := map[string]time.Time{}
	exitedIDs(p, func(id string, f time.Time) { got[id] = f })
	if len(got) != 2 || !got["old"].Equal(fin) || !got["dead"].Equal(fin) {
		t.Fatalf("got %v", got)
	}
}

func TestWorkloadPod(t *testing.T) {
	p := WorkloadPod("x", map[string]string{"TW_EXIT_AFTER": "1s"})
	if p.Name != "x" || len(p.Spec.Containers) != 1 || p.Spec.Containers[0].Env[0].Value != "1s" {
		t.Fatalf("%+v", p)
	}
	for _, q := range []bool{false, true} {
		if o := DefaultOptions(q); o.DetectExits < 20 || o.Restarts < 8 || o.Idle.Window <= 0 {
			t.Errorf("DefaultOptions(%v) = %+v", q, o)
		}
	}
	if o := DefaultOptions(false); o.DetectExits < 50 || o.Restarts < 30 || o.CreatedCost < 50 || o.StartPods != 50 || o.Idle.Pods != 100 || o.Idle.Window != time.Minute {
		t.Errorf("full options below the issue's sizes: %+v", o)
	}
}
