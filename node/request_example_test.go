package node_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/node"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// examplePod is a one-container pod named name.
func examplePod(name string) *v1.Pod {
	pod := &v1.Pod{}
	pod.Name = name
	pod.Spec.Containers = []v1.Container{{Name: "server", Image: "nginx:1.27"}}
	return pod
}

func ExamplePodStatuses() {
	sys := quietSystem()
	rt := fake.New(fake.AutoImages(true))
	defer rt.Close()
	pid, _ := node.Spawn(sys.Root, node.Options{NodeName: "ex-statuses", Runtime: rt, HostSource: true})
	defer node.Stop(sys.Root, pid, 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	if _, _, err := node.ApplyPod(ctx, sys.Root, pid, examplePod("web")); err != nil {
		fmt.Println(err)
		return
	}
	pods, err := node.PodStatuses(ctx, sys.Root, pid)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range pods {
		fmt.Println(p.Namespace + "/" + p.Name)
	}
	// Output: default/web
}

func ExampleApplyPod() {
	sys := quietSystem()
	rt := fake.New(fake.AutoImages(true))
	defer rt.Close()
	pid, _ := node.Spawn(sys.Root, node.Options{NodeName: "ex-apply", Runtime: rt, HostSource: true})
	defer node.Stop(sys.Root, pid, 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	pod := examplePod("web")
	pod.UID = "uid-web"
	uid, warnings, err := node.ApplyPod(ctx, sys.Root, pid, pod)
	fmt.Println(uid, len(warnings), err)

	broken := examplePod("broken")
	broken.Spec.Containers[0].Image = ""
	_, _, err = node.ApplyPod(ctx, sys.Root, pid, broken)
	fmt.Println(err)
	// Output:
	// uid-web 0 <nil>
	// host pod default/broken: spec.containers[0].image: Required value
}

func ExampleSetHostPods() {
	sys := quietSystem()
	rt := fake.New(fake.AutoImages(true))
	defer rt.Close()
	pid, _ := node.Spawn(sys.Root, node.Options{NodeName: "ex-set", Runtime: rt, HostSource: true})
	defer node.Stop(sys.Root, pid, 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	broken := examplePod("broken")
	broken.Spec.Containers[0].Image = ""
	results, err := node.SetHostPods(ctx, sys.Root, pid, []*v1.Pod{examplePod("web"), broken})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range results {
		fmt.Println(r.Err)
	}
	// Output:
	// <nil>
	// host pod default/broken: spec.containers[0].image: Required value
}

func ExampleDeletePod() {
	sys := quietSystem()
	rt := fake.New(fake.AutoImages(true))
	defer rt.Close()
	pid, _ := node.Spawn(sys.Root, node.Options{NodeName: "ex-delete", Runtime: rt, HostSource: true})
	defer node.Stop(sys.Root, pid, 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	if _, _, err := node.ApplyPod(ctx, sys.Root, pid, examplePod("web")); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(node.DeletePod(ctx, sys.Root, pid, "default", "web"))
	err := node.DeletePod(ctx, sys.Root, pid, "default", "web")
	fmt.Println(errors.Is(err, messages.ErrPodNotFound))
	// Output:
	// <nil>
	// true
}

func ExampleEvents() {
	sys := quietSystem()
	rt := fake.New(fake.AutoImages(true))
	defer rt.Close()
	pid, _ := node.Spawn(sys.Root, node.Options{NodeName: "ex-events", Runtime: rt, HostSource: true})
	defer node.Stop(sys.Root, pid, 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	if _, _, err := node.ApplyPod(ctx, sys.Root, pid, examplePod("web")); err != nil {
		fmt.Println(err)
		return
	}
	// Wait for the container's Started event.
	for ctx.Err() == nil {
		events, err := node.Events(ctx, sys.Root, pid)
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, e := range events {
			if e.Reason == "Started" && e.Container == "server" {
				fmt.Println(e.Type, e.Reason, e.Pod, e.Container)
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("no Started event")
	// Output: Normal Started web server
}

func ExampleHealth() {
	sys := quietSystem()
	rt := fake.New(fake.AutoImages(true))
	defer rt.Close()
	pid, _ := node.Spawn(sys.Root, node.Options{NodeName: "ex-health", Runtime: rt, HostSource: true, EventRelistPeriod: -1})
	defer node.Stop(sys.Root, pid, 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	// The relist actor reports which path container exits take (here the
	// relist: the fake runtime has no events) once it has started: ask
	// until the answer has every check, or the deadline passes.
	var checks []messages.HealthCheck
	for {
		var err error
		if checks, err = node.Health(ctx, sys.Root, pid); err != nil {
			fmt.Println(err)
			return
		}
		if len(checks) == 4 || ctx.Err() != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, c := range checks {
		fmt.Println(c.Name)
	}
	// Output:
	// runtime
	// pleg
	// container exits
	// source host
}

func ExampleStopAllPods() {
	sys := quietSystem()
	rt := fake.New(fake.AutoImages(true))
	defer rt.Close()
	pid, _ := node.Spawn(sys.Root, node.Options{NodeName: "ex-stop", Runtime: rt, HostSource: true})
	defer node.Stop(sys.Root, pid, 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	if _, _, err := node.ApplyPod(ctx, sys.Root, pid, examplePod("web")); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(node.StopAllPods(ctx, sys.Root, pid))
	pods, _ := node.PodStatuses(ctx, sys.Root, pid)
	fmt.Println(len(pods))
	// Output:
	// <nil>
	// 0
}
