package dockerbench

import (
	"os"
	"testing"
	"time"

	"go.uber.org/zap"
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

// The tracer keeps the first log of each message, kind and container,
// and that log's time fields, found by the full or short container ID.
func TestTracerKeepsTimeFields(t *testing.T) {
	tr := newTracer()
	log := tr.Logger()
	id := "0123456789abcdef0123"
	pub := time.Date(2026, 12, 2, 4, 0, 0, 1000, time.UTC)
	log.Debug("runtime exit", zap.String("id", id[:12]), zap.Time("publishedAt", pub), zap.Time("receivedAt", time.Time{}))
	log.Debug("runtime exit", zap.String("id", id[:12]), zap.Time("publishedAt", pub.Add(time.Second))) // not the first
	log.Debug("something else", zap.String("id", id[:12]))
	if tr.at("runtime exit", "", id).IsZero() {
		t.Fatal("the runtime exit's log time was not kept")
	}
	if got := tr.field("runtime exit", "", id, "publishedAt"); !got.Equal(pub) {
		t.Fatalf("publishedAt = %v, want %v (the first log's)", got, pub)
	}
	if got := tr.field("runtime exit", "", id, "receivedAt"); !got.IsZero() {
		t.Fatalf("a zero receivedAt was kept as %v", got)
	}
	if !tr.at("something else", "", id).IsZero() {
		t.Fatal("a message the tracer does not follow was kept")
	}
}

// A standby's start call is set against the calls whose intervals meet
// it, by kind; calls that end before it or begin after it do not count.
func TestOverlaps(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	calls := []runtimeCall{
		{Op: "start", Node: "n", ID: "s1", Begin: at(100), End: at(200)},
		{Op: "create", Node: "n", ID: "sb", Standby: true, Begin: at(150), End: at(260)}, // the node's next standby
		{Op: "create", Node: "other", ID: "c", Begin: at(0), End: at(120)},
		{Op: "start", Node: "docker", ID: "d", Begin: at(190), End: at(300)},
		{Op: "remove", Node: "n", ID: "r", Begin: at(0), End: at(100)}, // ended as it began: not beside
		{Op: "start", Node: "n", ID: "s2", Begin: at(400), End: at(450)},
		{Op: "start", Node: "n", ID: "app", Begin: at(100), End: at(130)}, // not a replacement
	}
	got := overlaps(calls, "n", map[string]bool{"s1": true, "s2": true})
	want := []startOverlap{
		{Took: 100 * time.Millisecond, SameNodeStandby: 1, OtherCreates: 1, OtherStarts: 2},
		{Took: 50 * time.Millisecond},
	}
	if len(got) != len(want) {
		t.Fatalf("overlaps = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("start %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
