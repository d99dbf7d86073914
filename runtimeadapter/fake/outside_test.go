package fake

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

func TestKill(t *testing.T) {
	rt := New(WithImages(image))
	id := run(t, rt, spec("u1", "web"))
	if err := rt.Kill(id, 137); err != nil {
		t.Fatal(err)
	}
	c := inspect(t, rt, id)
	if c.State != runtimeadapter.StateExited || c.ExitCode != 137 || c.Reason != "Error" || c.FinishedAt.IsZero() {
		t.Errorf("after Kill: %+v", c)
	}
	if err := rt.Kill(id, 137); err == nil || errors.Is(err, runtimeadapter.ErrNotFound) {
		t.Errorf("Kill of an exited container: %v, want a not-running error", err)
	}
	if n := rt.CallCount(MethodStop); n != 0 {
		t.Errorf("Kill logged %d Stop calls", n)
	}
}

func TestOOMKill(t *testing.T) {
	rt := New(WithImages(image))
	id := run(t, rt, spec("u1", "web"))
	if err := rt.OOMKill(id); err != nil {
		t.Fatal(err)
	}
	if c := inspect(t, rt, id); c.ExitCode != 137 || c.Reason != "OOMKilled" {
		t.Errorf("after OOMKill: exit %d reason %q", c.ExitCode, c.Reason)
	}
}

func TestRemoveExternally(t *testing.T) {
	rt := New(WithImages(image))
	id := run(t, rt, spec("u1", "web"))
	if err := rt.RemoveExternally(id); err != nil {
		t.Fatal(err)
	}
	if len(rt.Containers()) != 0 {
		t.Fatal("container still there")
	}
	if err := rt.Remove(context.Background(), id); !errors.Is(err, runtimeadapter.ErrNotFound) {
		t.Errorf("Remove after RemoveExternally: %v", err)
	}
}

func TestAddContainer(t *testing.T) {
	ctx := context.Background()
	rt := New()
	before := time.Now()
	unlabelled := rt.AddContainer(runtimeadapter.Container{Name: "postgres", Image: "postgres:16"})
	orphanLabels := spec("gone", "web").Labels
	orphan := rt.AddContainer(runtimeadapter.Container{Labels: orphanLabels, State: runtimeadapter.StateExited, ExitCode: 2})
	orphanLabels[runtimeadapter.LabelNode] = "mutated" // copied on AddContainer
	paused := rt.AddContainer(runtimeadapter.Container{ID: "abc123", Name: "paused", Labels: spec("p", "web").Labels,
		State: runtimeadapter.StateUnknown, RawState: "paused"})
	if paused != "abc123" {
		t.Errorf("given ID not kept: %s", paused)
	}

	c := inspect(t, rt, unlabelled)
	wantState(t, c, runtimeadapter.StateRunning, "running")
	if c.CreatedAt.Before(before) || c.StartedAt.IsZero() || len(c.ID) != 64 {
		t.Errorf("defaults not filled: %+v", c)
	}
	c = inspect(t, rt, orphan)
	wantState(t, c, runtimeadapter.StateExited, "exited")
	if c.Name == "" || c.ExitCode != 2 || c.FinishedAt.IsZero() {
		t.Errorf("defaults not filled: %+v", c)
	}
	wantState(t, inspect(t, rt, paused), runtimeadapter.StateUnknown, "paused")

	res, err := rt.List(ctx, runtimeadapter.ListOptions{Node: node, All: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Containers) != 2 || res.Containers[0].ID != paused || res.Containers[1].ID != orphan {
		t.Errorf("List = %+v, want the paused one and the orphan (newest first)", res.Containers)
	}
	if n := len(rt.Containers()); n != 3 {
		t.Errorf("Containers() has %d, want 3", n)
	}

	// A planted running container can be stopped (SIGTERM) and removed.
	if err := rt.Stop(ctx, unlabelled, time.Second); err != nil {
		t.Fatal(err)
	}
	if c := inspect(t, rt, unlabelled); c.ExitCode != 143 {
		t.Errorf("stopped planted container exit %d", c.ExitCode)
	}
	// But a planted paused one cannot be started.
	if err := rt.Start(ctx, paused); err == nil {
		t.Error("Start of a paused planted container succeeded")
	}

	for name, f := range map[string]func(){
		"duplicate ID":   func() { rt.AddContainer(runtimeadapter.Container{ID: "abc123"}) },
		"duplicate name": func() { rt.AddContainer(runtimeadapter.Container{Name: "postgres"}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		}()
	}
}

func TestRunning(t *testing.T) {
	rt := New(WithImages(image))
	a := run(t, rt, spec("u1", "web"))
	s := spec("u1", "web")
	s.Name += "_1"
	b := run(t, rt, s) // a second attempt, violating invariant 1
	run(t, rt, spec("u1", "side"))
	run(t, rt, spec("u2", "web"))

	got := rt.Running("u1", "web")
	if len(got) != 2 || got[0].ID != a || got[1].ID != b {
		t.Fatalf("Running = %+v, want %s and %s", got, a, b)
	}
	_ = rt.Kill(a, 1)
	if got := rt.Running("u1", "web"); len(got) != 1 || got[0].ID != b {
		t.Fatalf("after kill: %+v", got)
	}
	if got := rt.Running("u9", "web"); got != nil {
		t.Fatalf("unknown pod: %+v", got)
	}
}
