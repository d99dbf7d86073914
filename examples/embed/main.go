// Command embed is a small service that embeds actorlet. Beside the node it
// runs its own actor, a watchdog, which subscribes to pod status changes
// and raises an alert when a container enters CrashLoopBackOff.
//
//	go run ./examples/embed          # on Docker (run `make images` first)
//	go run ./examples/embed -fake    # on the in-memory fake runtime
//
// It feeds one pod whose container exits with status 1 after 2 s, prints
// the alerts, and stops after -for (default 40 s), leaving no containers.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/node"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/docker"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
	"github.com/actorlet/actorlet/supervision"
)

// Watchdog is the service's own actor: it turns pod status changes into
// alerts, once per container and restart count.
type Watchdog struct {
	Alerts chan<- string
	seen   map[string]bool
}

// Receive handles *messages.PodStatusChanged.
func (w *Watchdog) Receive(c actor.Context) {
	m, ok := c.Message().(*messages.PodStatusChanged)
	if !ok {
		return
	}
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	for _, cs := range m.Pod.Status.ContainerStatuses {
		if cs.State.Waiting == nil || cs.State.Waiting.Reason != "CrashLoopBackOff" {
			continue
		}
		key := fmt.Sprintf("%s/%s/%s#%d", m.Pod.Namespace, m.Pod.Name, cs.Name, cs.RestartCount)
		if w.seen[key] {
			continue
		}
		w.seen[key] = true
		w.Alerts <- fmt.Sprintf("ALERT pod %s/%s container %s is crash-looping (restarts: %d)",
			m.Pod.Namespace, m.Pod.Name, cs.Name, cs.RestartCount)
	}
}

// CrasherPod is the pod the example feeds: it exits with status 1 after
// 2 s, so it goes into CrashLoopBackOff.
func CrasherPod() *v1.Pod {
	p := &v1.Pod{}
	p.Name = "flaky"
	grace := int64(2)
	p.Spec.TerminationGracePeriodSeconds = &grace
	p.Spec.Containers = []v1.Container{{
		Name:  "worker",
		Image: "actorlet/testworkload:0.1.0",
		Env:   []v1.EnvVar{{Name: "TW_EXIT_AFTER", Value: "2s"}, {Name: "TW_EXIT_CODE", Value: "1"}},
	}}
	return p
}

// Service is the host: an actor system with an actorlet node and a
// watchdog subscribed to it.
type Service struct {
	System *actor.ActorSystem
	Node   *actor.PID
}

// Start spawns the node on rt and the watchdog, and feeds pods.
func Start(rt runtimeadapter.Runtime, nodeName string, backoff supervision.BackoffPolicy, alerts chan<- string, pods ...*v1.Pod) (*Service, error) {
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}))
	pid, err := node.Spawn(sys.Root, node.Options{NodeName: nodeName, Runtime: rt, HostSource: true, Backoff: &backoff})
	if err != nil {
		return nil, err
	}
	watchdog := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return &Watchdog{Alerts: alerts} }))
	sys.Root.Send(pid, &messages.Subscribe{PID: watchdog})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	results, err := node.SetHostPods(ctx, sys.Root, pid, pods)
	if err != nil {
		return nil, fmt.Errorf("feed pods: %w", err)
	}
	for i, r := range results {
		if r.Err != nil {
			return nil, fmt.Errorf("pod %d: %w", i, r.Err)
		}
	}
	return &Service{System: sys, Node: pid}, nil
}

// Shutdown removes the service's pods, waits (at most timeout) until their
// containers are gone, and stops the node.
func (s *Service) Shutdown(rt runtimeadapter.Runtime, nodeName string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = node.SetHostPods(ctx, s.System.Root, s.Node, nil)
	deadline := time.Now().Add(timeout)
	for {
		res, err := rt.List(context.Background(), runtimeadapter.ListOptions{Node: nodeName, All: true})
		if err == nil && len(res.Containers) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("containers of node %s still there after %s", nodeName, timeout)
		}
		time.Sleep(200 * time.Millisecond) // poll interval
	}
	return node.Stop(s.System.Root, s.Node, 10*time.Second)
}

func main() {
	useFake := flag.Bool("fake", false, "use the in-memory fake runtime instead of Docker")
	runFor := flag.Duration("for", 40*time.Second, "how long to run")
	flag.Parse()

	var rt runtimeadapter.Runtime
	if *useFake {
		f := fake.New(fake.AutoImages(true))
		f.ScriptContainer("worker", fake.Behavior{ExitCode: 1, ExitAfter: 2 * time.Second})
		defer f.Close()
		rt = f
	} else {
		d, err := docker.New(node.LocalPauseImage()) // builds the pause image when first needed
		if err != nil {
			log.Fatal(err)
		}
		defer d.Close()
		rt = d
	}
	nodeName := "embed-example"
	alerts := make(chan string, 16)
	svc, err := Start(rt, nodeName, supervision.BackoffPolicy{Initial: 2 * time.Second, Max: 8 * time.Second}, alerts, CrasherPod())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("running pod default/flaky on node", nodeName, "for", *runFor)
	stop, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	timeout := time.After(*runFor)
loop:
	for {
		select {
		case a := <-alerts:
			fmt.Println(a)
		case <-timeout:
			break loop
		case <-stop.Done():
			break loop
		}
	}
	if err := svc.Shutdown(rt, nodeName, time.Minute); err != nil {
		log.Fatal(err)
	}
	fmt.Println("stopped; no containers left")
}
