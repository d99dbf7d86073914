package dockerbench

import (
	"context"
	"fmt"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"

	"github.com/actorlet/actorlet/test/support/testimages"
)

// DieView is what Docker's API says about a container right after its die
// event.
type DieView struct {
	ListState    string        // ContainerList's state, asked at once
	InspectState string        // ContainerInspect's, asked after the list
	InspectTook  time.Duration // how long that inspect blocked
}

// DieViews runs n containers (no actorlet) that exit 300 ms after they
// start, one at a time, and on each die event asks Docker, at once, for
// the container's state by ContainerList (what actorlet's relist reads),
// then by ContainerInspect.
func (e *Env) DieViews(n int) ([]DieView, error) {
	defer e.CleanupRun()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	msgs, errs := e.Cli.Events(ctx, events.ListOptions{Filters: filters.NewArgs(
		filters.Arg("type", string(events.ContainerEventType)), filters.Arg("event", "die"),
		filters.Arg("label", BenchLabel+"="+e.RunID))})
	var out []DieView
	for i := range n {
		resp, err := e.Cli.ContainerCreate(ctx, &container.Config{Image: testimages.TestWorkloadTag, Env: []string{"TW_EXIT_AFTER=300ms"},
			Labels: map[string]string{BenchLabel: e.RunID}}, nil, nil, nil, fmt.Sprintf("bench-dieview-%s-%d", e.RunID, i))
		if err != nil {
			return nil, err
		}
		if err := e.Cli.ContainerStart(ctx, resp.ID, container.StartOptions{}); err != nil {
			return nil, err
		}
		var id string
		select {
		case m := <-msgs:
			id = m.Actor.ID
		case err := <-errs:
			return nil, err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		l, err := e.Cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("id", id))})
		if err != nil || len(l) != 1 {
			return nil, fmt.Errorf("list %s: %v (%d results)", id, err, len(l))
		}
		t0 := time.Now()
		in, err := e.Cli.ContainerInspect(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, DieView{ListState: l[0].State, InspectState: in.State.Status, InspectTook: time.Since(t0)})
	}
	return out, nil
}
