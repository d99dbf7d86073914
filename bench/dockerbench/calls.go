package dockerbench

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/docker"
)

// runtimeCall is one Create, Start or Remove call a benchmark node made
// (or, Node "docker", the Docker restarter), with its begin and end.
type runtimeCall struct {
	Op, Node, ID string
	Standby      bool // a create of a standby
	Begin, End   time.Time
}

// callLog keeps the runtime calls of every node of a run (see
// recordingRuntime), so that a standby's start call can be set against
// the creates and starts under way meanwhile.
type callLog struct {
	mu    sync.Mutex
	calls []runtimeCall
}

func (l *callLog) add(c runtimeCall) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.calls = append(l.calls, c)
	l.mu.Unlock()
}

func (l *callLog) all() []runtimeCall {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]runtimeCall(nil), l.calls...)
}

// recordingRuntime is a node's Docker runtime that logs its Create,
// Start and Remove calls (every other method, and the optional
// interfaces, are the embedded runtime's).
type recordingRuntime struct {
	*docker.Runtime
	node string
	log  *callLog
}

func (r recordingRuntime) Create(ctx context.Context, spec runtimeadapter.ContainerSpec) (string, error) {
	t0 := time.Now()
	id, err := r.Runtime.Create(ctx, spec)
	r.log.add(runtimeCall{Op: "create", Node: r.node, ID: id, Standby: spec.Labels["io.actorlet.standby"] == "true", Begin: t0, End: time.Now()})
	return id, err
}

func (r recordingRuntime) Start(ctx context.Context, id string) error {
	t0 := time.Now()
	err := r.Runtime.Start(ctx, id)
	r.log.add(runtimeCall{Op: "start", Node: r.node, ID: id, Begin: t0, End: time.Now()})
	return err
}

func (r recordingRuntime) Remove(ctx context.Context, id string) error {
	t0 := time.Now()
	err := r.Runtime.Remove(ctx, id)
	r.log.add(runtimeCall{Op: "remove", Node: r.node, ID: id, Begin: t0, End: time.Now()})
	return err
}

// startOverlap is what ran beside one start call: the creates (standby
// creates of the same node apart) and the other start calls, of any
// node or the Docker restarter, whose interval met it.
type startOverlap struct {
	Took                                                time.Duration
	SameNodeStandby, OtherCreates, OtherStarts, Removes int
}

// overlaps sets each start call of node whose container ID is in ids
// against every other call of calls.
func overlaps(calls []runtimeCall, node string, ids map[string]bool) []startOverlap {
	sort.Slice(calls, func(i, j int) bool { return calls[i].Begin.Before(calls[j].Begin) })
	var out []startOverlap
	for _, s := range calls {
		if s.Op != "start" || s.Node != node || !ids[s.ID] {
			continue
		}
		o := startOverlap{Took: s.End.Sub(s.Begin)}
		for _, c := range calls {
			if c == s || !c.Begin.Before(s.End) || !s.Begin.Before(c.End) {
				continue
			}
			switch {
			case c.Op == "create" && c.Node == node && c.Standby:
				o.SameNodeStandby++
			case c.Op == "create":
				o.OtherCreates++
			case c.Op == "start":
				o.OtherStarts++
			case c.Op == "remove":
				o.Removes++
			}
		}
		out = append(out, o)
	}
	return out
}
