package node_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/node"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

func quietSystem() *actor.ActorSystem {
	return actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}))
}

// A host service runs a node on the in-memory fake runtime, feeds it one
// pod and waits, through a subscription, until the pod runs.
func Example() {
	sys := quietSystem()
	rt := fake.New(fake.AutoImages(true))
	defer rt.Close()

	pid, err := node.Spawn(sys.Root, node.Options{NodeName: "example", Runtime: rt, HostSource: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer node.Stop(sys.Root, pid, 10*time.Second)

	running := make(chan *v1.Pod, 1)
	watcher := sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*messages.PodStatusChanged); ok && m.Pod.Status.Phase == v1.PodRunning {
			select {
			case running <- m.Pod:
			default:
			}
		}
	}))
	sys.Root.Send(pid, &messages.Subscribe{PID: watcher})

	pod := &v1.Pod{}
	pod.Name = "web"
	pod.Spec.Containers = []v1.Container{{Name: "server", Image: "nginx:1.27"}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	results, err := node.SetHostPods(ctx, sys.Root, pid, []*v1.Pod{pod})
	if err != nil || results[0].Err != nil {
		fmt.Println("apply failed:", err, results)
		return
	}

	select {
	case p := <-running:
		fmt.Println(p.Namespace+"/"+p.Name, p.Status.Phase, p.Status.ContainerStatuses[0].Ready)
	case <-time.After(10 * time.Second):
		fmt.Println("timed out")
	}
	// Output: default/web Running true
}

// ApplyPod validates like a manifest: an error names the field.
func Example_applyInvalid() {
	sys := quietSystem()
	rt := fake.New(fake.AutoImages(true))
	defer rt.Close()
	pid, _ := node.Spawn(sys.Root, node.Options{NodeName: "example2", Runtime: rt})
	defer node.Stop(sys.Root, pid, 10*time.Second)

	pod := &v1.Pod{}
	pod.Name = "broken"
	pod.Spec.Containers = []v1.Container{{Name: "app"}} // no image
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _, err := node.ApplyPod(ctx, sys.Root, pid, pod)
	fmt.Println(err)
	// Output: host pod default/broken: spec.containers[0].image: Required value
}

// Options are checked before anything is spawned.
func ExampleSpawn_missingRuntime() {
	_, err := node.Spawn(quietSystem().Root, node.Options{NodeName: "n"})
	fmt.Println(err)
	// Output: invalid node options: Runtime is required
}

// A service that serves its own metrics builds the node with New: the
// node's metrics go on the service's registry, and Runtime is the
// instrumented runtime for the service's own runtime calls.
func ExampleNew() {
	sys := quietSystem()
	rt := fake.New(fake.AutoImages(true))
	defer rt.Close()
	reg := prometheus.NewRegistry()
	n, err := node.New(node.Options{
		NodeName: "example3", Runtime: rt, HostSource: true,
		Metrics: reg, InstrumentRuntime: true,
		RuntimeTimeout: time.Minute, ListTimeout: 5 * time.Second, MaxEvents: 100,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	pid, err := n.Spawn(sys.Root)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer node.Stop(sys.Root, pid, 10*time.Second)
	_, instrumented := n.Runtime().(interface{ Unwrap() runtimeadapter.Runtime })
	fmt.Println(pid.Id, instrumented)
	// Output: node-example3 true
}
