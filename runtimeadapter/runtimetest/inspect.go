package runtimetest

import (
	"errors"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// inspectCases: a container is found by ID and by name, with its name,
// image and labels as created (adoption after an agent restart reads
// them back).
var inspectCases = []testCase{
	{"NameImageAndLabelsRoundTrip", func(e *env) {
		spec := e.app("app", Workload{})
		id := e.create(spec)
		for _, ref := range []string{id, spec.Name} {
			c := e.inspect(ref)
			if c.ID != id || c.Name != spec.Name || c.Image != spec.Image {
				e.t.Errorf("Inspect(%s) = ID %s name %q image %q; want %s, %q, %q", ref, c.ID, c.Name, c.Image, id, spec.Name, spec.Image)
			}
			checkLabels(e.t, "Inspect("+ref+")", c.Labels, spec.Labels)
			meta, err := runtimeadapter.ParseMeta(c.Labels)
			if err != nil {
				e.t.Fatalf("labels of %s: %v", ref, err)
			}
			if meta.RestartCount != 2 || meta.GracePeriod != grace || meta.ContainerName != "app" || meta.Type != runtimeadapter.TypeApp {
				e.t.Errorf("labels of %s read back as %+v", ref, meta)
			}
		}
		c, ok := find(e.list(runtimeadapter.ListOptions{All: true}).Containers, id)
		if !ok || c.Name != spec.Name || c.Image != spec.Image {
			e.t.Errorf("List: %v, %+v; want name %q image %q", ok, c, spec.Name, spec.Image)
		}
		checkLabels(e.t, "List", c.Labels, spec.Labels)
	}},
	{"NameConflictCarriesTheExistingID", func(e *env) {
		spec := e.app("app", Workload{})
		id := e.create(spec)
		second, err := e.Runtime.Create(e.ctx, spec)
		if second != "" {
			e.track(second)
		}
		if !errors.Is(err, runtimeadapter.ErrNameConflict) {
			e.t.Fatalf("second create of %s: %q, %v; want ErrNameConflict", spec.Name, second, err)
		}
		var conflict *runtimeadapter.NameConflictError
		if !errors.As(err, &conflict) {
			e.t.Fatalf("second create: %T is not a *NameConflictError: %v", err, err)
		}
		if conflict.ID != id || conflict.Name != spec.Name {
			e.t.Errorf("conflict = %+v, want name %s, ID %s (to adopt it)", conflict, spec.Name, id)
		}
		// The same holds for a container that runs or has exited.
		if err := e.Runtime.Start(e.ctx, id); err != nil {
			e.t.Fatal(err)
		}
		if _, err := e.Runtime.Create(e.ctx, spec); !errors.As(err, &conflict) || conflict.ID != id {
			e.t.Errorf("create over a running container: %v, want a conflict naming %s", err, id)
		}
	}},
	{"IDIsTheOneCreateReturned", func(e *env) {
		id := e.create(e.app("app", Workload{}))
		if got := e.inspect(id).ID; got != id {
			e.t.Errorf("Inspect(%s).ID = %s", id, got)
		}
		if _, ok := find(e.list(runtimeadapter.ListOptions{All: true}).Containers, id); !ok {
			e.t.Errorf("List does not report the ID Create returned (%s)", id)
		}
	}},
}
