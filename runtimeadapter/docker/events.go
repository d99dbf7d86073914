package docker

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// Events streams start, die, oom and destroy events of the containers
// labelled as actorlet's for node (runtimeadapter.IsManaged, as List
// reports them), from now on. Both channels close when ctx ends or the
// stream breaks; the error channel (buffered, one value) then carries why:
// ctx.Err() on cancellation, a wrapped error otherwise (ErrUnavailable when
// the daemon cannot be reached). Callers reconnect by calling Events again;
// events missed in between are the relist's job.
func (r *Runtime) Events(ctx context.Context, node string) (<-chan runtimeadapter.Event, <-chan error) {
	out := make(chan runtimeadapter.Event)
	errs := make(chan error, 1)
	args := filters.NewArgs(
		filters.Arg("type", string(events.ContainerEventType)),
		filters.Arg("label", runtimeadapter.LabelNode+"="+node),
	)
	for _, k := range []runtimeadapter.EventKind{
		runtimeadapter.EventStart, runtimeadapter.EventDie,
		runtimeadapter.EventOOM, runtimeadapter.EventDestroy,
	} {
		args.Add("event", string(k))
	}
	cli, err := r.api(ctx)
	if err != nil {
		errs <- wrap(err, "event stream of node %s", node)
		close(errs)
		close(out)
		return out, errs
	}
	msgs, derrs := cli.Events(ctx, events.ListOptions{Filters: args})

	go func() {
		defer close(errs)
		defer close(out)
		for {
			select {
			case m := <-msgs:
				ev := runtimeadapter.Event{
					Kind:        runtimeadapter.EventKind(m.Action),
					ContainerID: m.Actor.ID,
					Labels:      actorletLabels(m.Actor.Attributes),
					Time:        eventTime(m),
					ExitCode:    exitCode(m),
				}
				if !runtimeadapter.IsManaged(ev.Labels, node) {
					// The filter matched the node label alone; a
					// container missing another identifying label is
					// not actorlet's (List does not report it either).
					continue
				}
				select {
				case out <- ev:
				case <-ctx.Done():
					errs <- ctx.Err()
					return
				}
			case err := <-derrs:
				if ctx.Err() != nil {
					errs <- ctx.Err()
				} else {
					errs <- wrap(err, "event stream of node %s", node)
				}
				return
			case <-ctx.Done():
				errs <- ctx.Err()
				return
			}
		}
	}()
	return out, errs
}

// actorletLabels keeps the io.actorlet.* labels of an event's attributes
// (which also carry the image, name and exit code).
func actorletLabels(attrs map[string]string) map[string]string {
	out := make(map[string]string, len(attrs))
	for k, v := range attrs {
		if strings.HasPrefix(k, runtimeadapter.LabelPrefix) {
			out[k] = v
		}
	}
	return out
}

// exitCode is a die event's exitCode attribute, -1 if it has none.
func exitCode(m events.Message) int {
	if m.Action != "die" {
		return -1
	}
	n, err := strconv.Atoi(m.Actor.Attributes["exitCode"])
	if err != nil {
		return -1
	}
	return n
}

// eventTime prefers the nanosecond timestamp.
func eventTime(m events.Message) time.Time {
	if m.TimeNano != 0 {
		return time.Unix(0, m.TimeNano)
	}
	return time.Unix(m.Time, 0)
}
