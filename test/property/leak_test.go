package property_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/node"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
	"github.com/actorlet/actorlet/sources"
	"github.com/actorlet/actorlet/sources/dir"
)

// verifyNoLeaks fails t if goroutines other than those allowed by opts
// remain. It waits up to 10 s for them to end first (goleak's own retries
// last about half a second): none is actorlet's, but protoactor-go starts
// a goroutine per dead-letter burst — its throttle (actor.NewThrottle,
// used by the dead-letter process) runs a one-shot ticker goroutine that
// ends after DeadLetterThrottleInterval (1 s) — and messages to actors
// that already stopped (a late answer from a runtime call) are dead
// letters, so such a goroutine may run for up to a second after
// node.Stop. It is not ignored: one that outlives the wait is a leak.
func verifyNoLeaks(t *testing.T, opts ...goleak.Option) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for goleak.Find(opts...) != nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	goleak.VerifyNone(t, opts...)
}

// TestNodeLeavesNoGoroutines runs a node in real time (outside a synctest
// bubble, where leftover goroutines would be the bubble's problem) with
// every goroutine-owning part in use — host-fed pods, a static-pod
// directory source (fsnotify watch, rescans), the runtime's event stream,
// pods that crash and are restarted, an orphan killed in the background,
// a status subscriber — then stops it with node.Stop, closes the runtime
// and checks that no goroutine started since the test began remains.
func TestNodeLeavesNoGoroutines(t *testing.T) {
	defer verifyNoLeaks(t, goleak.IgnoreCurrent())

	sys := quietSystem()
	rt := fake.New(fake.AutoImages(true))
	rt.ScriptContainer("crash", fake.Behavior{ExitCode: 1, ExitAfter: 50 * time.Millisecond})
	orphan := runtimeadapter.Meta{Node: "leak", PodUID: "orphan", PodName: "ghost", PodNamespace: "default",
		ContainerName: "app", Type: runtimeadapter.TypeApp, GracePeriod: time.Second}.Labels()
	rt.AddContainer(runtimeadapter.Container{Name: "orphan", Image: "img:1", Labels: orphan})

	manifests := t.TempDir()
	if err := os.WriteFile(filepath.Join(manifests, "static.yaml"), []byte(
		"apiVersion: v1\nkind: Pod\nmetadata:\n  name: static\nspec:\n  containers:\n  - name: app\n    image: img:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := dir.New(manifests, "leak", dir.WithDebounce(10*time.Millisecond), dir.WithRescanPeriod(100*time.Millisecond))

	pid, err := node.Spawn(sys.Root, node.Options{
		NodeName: "leak", Runtime: rt, HostSource: true, RootDir: t.TempDir(),
		Sources: []sources.Source{src}, RelistPeriod: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	statuses := make(chan *messages.PodStatusChanged, 1024)
	sub := sys.Root.Spawn(actorProps(func(m *messages.PodStatusChanged) {
		select {
		case statuses <- m:
		default:
		}
	}))
	sys.Root.Send(pid, &messages.Subscribe{PID: sub})

	host := alwaysPod("host", "web", "crash")
	res, err := sys.Root.RequestFuture(pid, &messages.SetHostPods{Pods: []*v1.Pod{host}}, 5*time.Second).Result()
	if err != nil || res.(*messages.SetHostPodsResult).Results[0].Err != nil {
		t.Fatalf("SetHostPods: %v %+v", err, res)
	}

	// Wait until both pods run and the orphan is gone.
	deadline := time.Now().Add(10 * time.Second)
	for {
		running := map[string]bool{}
		orphanLeft := false
		for _, c := range rt.Containers() {
			if c.Name == "orphan" {
				orphanLeft = true
			}
			if c.State == runtimeadapter.StateRunning && c.Labels[runtimeadapter.LabelContainerName] != runtimeadapter.SandboxName {
				running[c.Labels[runtimeadapter.LabelPodName]+"/"+c.Labels[runtimeadapter.LabelContainerName]] = true
			}
		}
		if running["host/web"] && running["static/app"] && !orphanLeft {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pods not running after 10 s: %v (orphan left: %v)", running, orphanLeft)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // let "crash" exit and get restarted meanwhile

	if err := node.Stop(sys.Root, pid, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	sys.Root.Stop(sub)
	rt.Close()
	// Runtime calls under way at Stop finish in the background; on the
	// fake (no delays here) they end at once, and Close makes later ones
	// fail fast. verifyNoLeaks waits up to 10 s.
}

// actorProps is an actor that hands every *T it receives to f.
func actorProps[T any](f func(T)) *actor.Props {
	return actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(T); ok {
			f(m)
		}
	})
}
