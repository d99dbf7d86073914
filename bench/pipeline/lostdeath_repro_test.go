//go:build repro

// A reproduction, not a benchmark (hence the build tag; it fails while the
// bug stands): found while benchmarking restarts on a loaded machine.
//
//	go test -tags repro -run TestReproLostDeath -v ./bench/pipeline/
//
// With a runtime whose listings carry no state version (Docker's adapter),
// a pod actor orders listings by ObservedAt, the time before the List call.
// A relist whose List started before the pod actor's own list, but which
// returns a death that happened after it (a slow List, as on a loaded
// Docker), is dropped by the pod actor as stale; the PLEG has recorded the
// transition, so it never reports it again and the container is never
// restarted.
package pipeline

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/node"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
	"github.com/actorlet/actorlet/supervision"
)

// noVersion is the fake without state versions, as Docker's adapter.
type noVersion struct{ *fake.Runtime }

func (n noVersion) List(ctx context.Context, o runtimeadapter.ListOptions) (runtimeadapter.ListResult, error) {
	r, err := n.Runtime.List(ctx, o)
	r.Version = 0
	return r, err
}

func TestReproLostDeath(t *testing.T) {
	sys := QuietSystem()
	rt := fake.New(fake.AutoImages(true))
	defer rt.Close()
	pid, err := node.Spawn(sys.Root, node.Options{NodeName: "repro", Runtime: noVersion{rt}, HostSource: true, RootDir: t.TempDir(),
		Backoff: &supervision.BackoffPolicy{}}) // CrashLoopBackOff 0: restart at once
	if err != nil {
		t.Fatal(err)
	}
	defer node.Stop(sys.Root, pid, 10*time.Second)
	set := func(ps ...*v1.Pod) {
		if _, err := sys.Root.RequestFuture(pid, &messages.SetHostPods{Pods: ps}, 5*time.Second).Result(); err != nil {
			t.Fatal(err)
		}
	}
	running := func(name string) []runtimeadapter.Container {
		var out []runtimeadapter.Container
		for _, c := range rt.Containers() {
			if c.Labels[runtimeadapter.LabelPodName] == name && c.Labels[runtimeadapter.LabelContainerName] == "app" && c.State == runtimeadapter.StateRunning {
				out = append(out, c)
			}
		}
		return out
	}
	waitFor := func(d time.Duration, f func() bool) bool {
		for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if f() {
				return true
			}
		}
		return false
	}
	b := Pod(1)
	b.Name = "b"
	set(b)
	if !waitFor(2*time.Second, func() bool { return len(running("b")) == 1 }) {
		t.Fatal("b did not start")
	}
	// 1. The relist's next List hangs (its argument has an empty pod; a pod
	//    actor's own List names its pod); b's container dying triggers it.
	rt.Hang(fake.MethodList, "pod= ")
	_ = rt.Kill(running("b")[0].ID, 137)
	time.Sleep(100 * time.Millisecond)
	// 2. Pod a starts meanwhile: its actor lists its own pod after the hung
	//    relist began.
	a := Pod(0)
	a.Name = "a"
	set(b, a)
	if !waitFor(2*time.Second, func() bool { return len(running("a")) == 1 }) {
		t.Fatal("a did not start")
	}
	time.Sleep(100 * time.Millisecond)
	// 3. a's container dies, then the hung relist proceeds and sees it.
	_ = rt.Kill(running("a")[0].ID, 137)
	time.Sleep(50 * time.Millisecond)
	rt.ClearFaults()
	// a's container should be restarted at once; give it 10 s (two
	// safety-net relists).
	if !waitFor(10*time.Second, func() bool { return len(running("a")) == 1 }) {
		t.Errorf("a's death was lost: not restarted within 10 s (b, whose actor had no newer list, restarted: %v)", len(running("b")) == 1)
	}
}
