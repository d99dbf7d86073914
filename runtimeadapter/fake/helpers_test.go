package fake

import (
	"context"
	"errors"
	"testing"

	"github.com/actorlet/actorlet/runtimeadapter"
)

const (
	node  = "node-1"
	image = "busybox:latest"
)

// spec returns a managed container spec for container name of pod uid on
// node-1.
func spec(uid, name string) runtimeadapter.ContainerSpec {
	return specOn(node, uid, name)
}

func specOn(nodeName, uid, name string) runtimeadapter.ContainerSpec {
	m := runtimeadapter.Meta{
		Node:          nodeName,
		PodUID:        uid,
		PodName:       "pod-" + uid,
		PodNamespace:  "default",
		ContainerName: name,
		Type:          runtimeadapter.TypeApp,
	}
	return runtimeadapter.ContainerSpec{
		Name:   runtimeadapter.ContainerName(name, m.PodName, m.PodNamespace, uid, 0) + "_" + nodeName,
		Image:  image,
		Labels: m.Labels(),
	}
}

// run creates and starts a container, failing the test on error.
func run(t *testing.T, rt *Runtime, s runtimeadapter.ContainerSpec) string {
	t.Helper()
	id, err := rt.Create(context.Background(), s)
	if err != nil {
		t.Fatalf("Create(%s): %v", s.Name, err)
	}
	if err := rt.Start(context.Background(), id); err != nil {
		t.Fatalf("Start(%s): %v", s.Name, err)
	}
	return id
}

func inspect(t *testing.T, rt *Runtime, id string) runtimeadapter.Container {
	t.Helper()
	c, err := rt.Inspect(context.Background(), id)
	if err != nil {
		t.Fatalf("Inspect(%s): %v", id, err)
	}
	return c
}

func wantErrIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want one wrapping %v", err, target)
	}
}

func wantState(t *testing.T, c runtimeadapter.Container, state runtimeadapter.State, raw string) {
	t.Helper()
	if c.State != state || c.RawState != raw {
		t.Fatalf("container %s is %s/%s, want %s/%s", c.Name, c.State, c.RawState, state, raw)
	}
}
