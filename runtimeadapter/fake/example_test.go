package fake_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

func Example() {
	ctx := context.Background()
	rt := fake.New(fake.WithImages("busybox"))
	defer rt.Close()

	// A container named "job" in any pod exits with code 1 right after it
	// starts; the first Start call fails.
	rt.ScriptContainer("job", fake.Behavior{ExitCode: 1})
	rt.InjectError(fake.MethodStart, runtimeadapter.ErrUnavailable, 1)

	meta := runtimeadapter.Meta{
		Node: "node-1", PodUID: "8a6c0f3e", PodName: "batch", PodNamespace: "default",
		ContainerName: "job", Type: runtimeadapter.TypeApp,
	}
	id, err := rt.Create(ctx, runtimeadapter.ContainerSpec{
		Name:   runtimeadapter.ContainerName("job", "batch", "default", "8a6c0f3e", 0),
		Image:  "busybox",
		Labels: meta.Labels(),
	})
	if err != nil {
		panic(err)
	}
	err = rt.Start(ctx, id)
	fmt.Println("first start unavailable:", errors.Is(err, runtimeadapter.ErrUnavailable))
	if err := rt.Start(ctx, id); err != nil {
		panic(err)
	}

	// Exit is asynchronous, as with Docker; in tests prefer testing/synctest.
	for {
		c, _ := rt.Inspect(ctx, id)
		if c.State == runtimeadapter.StateExited {
			fmt.Println("exited with", c.ExitCode, c.Reason)
			break
		}
		time.Sleep(time.Millisecond)
	}

	res, _ := rt.List(ctx, runtimeadapter.ListOptions{Node: "node-1", All: true})
	fmt.Println("listed:", len(res.Containers), "Start calls:", rt.CallCount(fake.MethodStart))
	// Output:
	// first start unavailable: true
	// exited with 1 Error
	// listed: 1 Start calls: 2
}
