// Command waitprobe compares two ways of learning a container's exit from
// Docker's containerd: its "/tasks/exit" event and the Tasks.Wait call
// (issue 16's detection split). It prints, per exit, exited_at → each
// path's receipt. A measurement tool, not part of actorlet.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	apievents "github.com/containerd/containerd/api/events"
	eventsapi "github.com/containerd/containerd/api/services/events/v1"
	tasksapi "github.com/containerd/containerd/api/services/tasks/v1"
	"github.com/containerd/typeurl/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

func main() {
	addr := flag.String("addr", "/run/containerd/containerd.sock", "containerd socket")
	ns := flag.String("ns", "moby", "namespace")
	n := flag.Int("n", 50, "exits to wait for")
	flag.Parse()
	conn, err := grpc.NewClient("unix://"+*addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx := metadata.AppendToOutgoingContext(context.Background(), "containerd-namespace", *ns)
	ev := eventsapi.NewEventsClient(conn)
	tasks := tasksapi.NewTasksClient(conn)
	stream, err := ev.Subscribe(ctx, &eventsapi.SubscribeRequest{Filters: []string{
		fmt.Sprintf("topic==\"/tasks/exit\",namespace==%q", *ns), fmt.Sprintf("topic==\"/tasks/start\",namespace==%q", *ns)}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	type rec struct{ exited, event, wait time.Time }
	var mu sync.Mutex
	recs := map[string]*rec{}
	get := func(id string) *rec {
		r := recs[id]
		if r == nil {
			r = &rec{}
			recs[id] = r
		}
		return r
	}
	waitFor := func(id string) {
		resp, err := tasks.Wait(ctx, &tasksapi.WaitRequest{ContainerID: id})
		at := time.Now()
		if err != nil {
			return
		}
		mu.Lock()
		r := get(id)
		r.wait = at
		if r.exited.IsZero() {
			r.exited = resp.ExitedAt.AsTime()
		}
		mu.Unlock()
	}
	// running tasks now
	if l, err := tasks.List(ctx, &tasksapi.ListTasksRequest{}); err == nil {
		for _, t := range l.Tasks {
			go waitFor(t.ContainerID)
		}
	}
	done := 0
	for done < *n {
		env, err := stream.Recv()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			break
		}
		at := time.Now()
		v, err := typeurl.UnmarshalAny(env.Event)
		if err != nil {
			continue
		}
		switch e := v.(type) {
		case *apievents.TaskStart:
			go waitFor(e.ContainerID)
		case *apievents.TaskExit:
			if e.ID != e.ContainerID {
				continue
			}
			mu.Lock()
			r := get(e.ContainerID)
			r.event, r.exited = at, e.ExitedAt.AsTime()
			mu.Unlock()
			done++
		}
	}
	time.Sleep(time.Second)
	mu.Lock()
	defer mu.Unlock()
	var evs, ws, diff []time.Duration
	for _, r := range recs {
		if r.event.IsZero() || r.wait.IsZero() {
			continue
		}
		evs = append(evs, r.event.Sub(r.exited))
		ws = append(ws, r.wait.Sub(r.exited))
		diff = append(diff, r.event.Sub(r.wait))
	}
	p := func(xs []time.Duration) string {
		sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
		if len(xs) == 0 {
			return "n/a"
		}
		q := func(f float64) time.Duration { return xs[min(len(xs)-1, int(f*float64(len(xs))))] }
		return fmt.Sprintf("p50 %v p90 %v p99 %v max %v", q(.5), q(.9), q(.99), xs[len(xs)-1])
	}
	fmt.Printf("exits with both: %d\nevent: %s\nwait:  %s\nevent - wait: %s\n", len(evs), p(evs), p(ws), p(diff))
}
