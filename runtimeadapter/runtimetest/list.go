package runtimetest

import (
	"maps"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// listCases: List shows a node's managed containers and nothing else, as
// the relist (internal/pleg) and the orphan sweep rely on.
var listCases = []testCase{
	{"FiltersByNodeAndLabels", func(e *env) {
		mine := e.run(e.app("app", Workload{}))
		other := e.spec(pod{node: e.otherNode(), name: "p", uid: e.otherNode() + "-p"}, "app", runtimeadapter.TypeApp, Workload{})
		otherID := e.run(other)
		// A container with actorlet's node label but without its type
		// label is not actorlet's (runtimeadapter.ParseMeta).
		partial := e.app("partial", Workload{})
		delete(partial.Labels, runtimeadapter.LabelContainerType)
		partialID := e.run(partial)

		got := ids(e.list(runtimeadapter.ListOptions{All: true}).Containers)
		if !got[mine] || got[otherID] || got[partialID] || len(got) != 1 {
			e.t.Errorf("List(node %s) = %v, want only %s (not %s of another node, not %s without a type label)",
				e.Node, got, mine, otherID, partialID)
		}
		got = ids(e.list(runtimeadapter.ListOptions{Node: e.otherNode(), All: true}).Containers)
		if !got[otherID] || len(got) != 1 {
			e.t.Errorf("List(node %s) = %v, want only %s", e.otherNode(), got, otherID)
		}
		// Inspect still sees a container that is not actorlet's.
		if c := e.inspect(partialID); c.ID != partialID {
			e.t.Errorf("Inspect(%s).ID = %s", partialID, c.ID)
		}
	}},
	{"FiltersByPod", func(e *env) {
		a := e.run(e.spec(e.pod("a"), "app", runtimeadapter.TypeApp, Workload{}))
		b := e.run(e.spec(e.pod("b"), "app", runtimeadapter.TypeApp, Workload{}))
		got := ids(e.list(runtimeadapter.ListOptions{PodUID: e.pod("a").uid}).Containers)
		if !got[a] || len(got) != 1 {
			e.t.Errorf("List(pod a) = %v, want only %s", got, a)
		}
		got = ids(e.list(runtimeadapter.ListOptions{}).Containers)
		if !got[a] || !got[b] || len(got) != 2 {
			e.t.Errorf("List(node) = %v, want %s and %s", got, a, b)
		}
		if got := e.list(runtimeadapter.ListOptions{PodUID: e.pod("none").uid}).Containers; len(got) != 0 {
			e.t.Errorf("List(pod without containers) = %+v, want none", got)
		}
	}},
	{"AllIncludesExitedAndCreated", func(e *env) {
		running := e.run(e.app("running", Workload{}))
		exited := e.run(e.app("exited", Workload{Exits: true, ExitAfter: shortExit}))
		created := e.create(e.app("created", Workload{}))
		e.waitExited(exited)

		got := ids(e.list(runtimeadapter.ListOptions{}).Containers)
		if !got[running] || len(got) != 1 {
			e.t.Errorf("List(running only) = %v, want only %s", got, running)
		}
		got = ids(e.list(runtimeadapter.ListOptions{All: true}).Containers)
		if !got[running] || !got[exited] || !got[created] || len(got) != 3 {
			e.t.Errorf("List(All) = %v, want %s, %s and %s", got, running, exited, created)
		}
	}},
	{"EmptyNodeIsAnError", func(e *env) {
		if res, err := e.Runtime.List(e.ctx, runtimeadapter.ListOptions{All: true}); err == nil {
			e.t.Errorf("List with no node = %d containers, nil; want an error", len(res.Containers))
		}
	}},
	{"EmptyNodeListsNothing", func(e *env) {
		res := e.list(runtimeadapter.ListOptions{All: true})
		if len(res.Containers) != 0 {
			e.t.Errorf("List of a fresh node = %+v, want none", res.Containers)
		}
	}},
	{"ObservedAtIsWhenTheListingWasAsked", func(e *env) {
		id := e.run(e.app("app", Workload{}))
		before := time.Now()
		res := e.list(runtimeadapter.ListOptions{})
		after := time.Now()
		// Runtimes read their own clock; allow a little skew.
		const skew = 100 * time.Millisecond
		if res.ObservedAt.Before(before.Add(-skew)) || res.ObservedAt.After(after.Add(skew)) {
			e.t.Errorf("ObservedAt = %v, want within [%v, %v]", res.ObservedAt, before, after)
		}
		if _, ok := find(res.Containers, id); !ok {
			e.t.Errorf("container %s started before the listing is not in it", id)
		}
	}},
	{"AgreesWithInspect", func(e *env) {
		spec := e.app("app", Workload{})
		id := e.run(spec)
		c, ok := find(e.list(runtimeadapter.ListOptions{}).Containers, id)
		if !ok {
			e.t.Fatalf("container %s not listed", id)
		}
		in := e.inspect(id)
		if c.ID != in.ID || c.Name != in.Name || c.Image != in.Image || c.State != in.State ||
			c.RawState != in.RawState || !c.CreatedAt.Equal(in.CreatedAt) || !c.StartedAt.Equal(in.StartedAt) ||
			c.IP != in.IP || !maps.Equal(c.Labels, in.Labels) {
			e.t.Errorf("List and Inspect disagree:\nlist    %+v\ninspect %+v", c, in)
		}
	}},
	{"ResultsAreCopies", func(e *env) {
		id := e.run(e.app("app", Workload{}))
		res := e.list(runtimeadapter.ListOptions{})
		c, ok := find(res.Containers, id)
		if !ok {
			e.t.Fatalf("container %s not listed", id)
		}
		c.Labels[runtimeadapter.LabelPodName] = "changed"
		again, ok := find(e.list(runtimeadapter.ListOptions{}).Containers, id)
		if !ok || again.Labels[runtimeadapter.LabelPodName] != "p" {
			e.t.Errorf("changing a listed container's labels changed the next listing: %v, %+v", ok, again.Labels)
		}
		if c := e.inspect(id); c.Labels[runtimeadapter.LabelPodName] != "p" {
			e.t.Errorf("changing a listed container's labels changed Inspect's: %+v", c.Labels)
		}
	}},
}
