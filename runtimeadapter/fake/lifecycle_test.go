package fake

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

func TestImages(t *testing.T) {
	ctx := context.Background()
	rt := New(WithImages("alpine"))

	err := rt.EnsureImage(ctx, "nginx:1.27")
	wantErrIs(t, err, runtimeadapter.ErrNotFound)
	if !strings.Contains(err.Error(), "nginx:1.27") {
		t.Errorf("error %q does not name the image", err)
	}
	if err := rt.EnsureImage(ctx, "alpine:latest"); err != nil {
		t.Errorf("alpine (added as %q): %v", "alpine", err)
	}
	rt.AddImage("nginx:1.27")
	if err := rt.EnsureImage(ctx, "nginx:1.27"); err != nil {
		t.Errorf("after AddImage: %v", err)
	}
	if got, want := rt.Images(), []string{"alpine:latest", "nginx:1.27"}; !slices.Equal(got, want) {
		t.Errorf("Images() = %v, want %v", got, want)
	}

	s := spec("u1", "web")
	s.Image = "redis"
	_, err = rt.Create(ctx, s)
	wantErrIs(t, err, runtimeadapter.ErrNotFound)
	if !strings.Contains(err.Error(), "redis") {
		t.Errorf("error %q does not name the image", err)
	}
	if len(rt.Containers()) != 0 {
		t.Errorf("failed Create left a container")
	}
}

func TestAutoImages(t *testing.T) {
	ctx := context.Background()
	rt := New(AutoImages(true))
	s := spec("u1", "web")
	s.Image = "example.com:5000/team/app" // port in the registry is not a tag
	if _, err := rt.Create(ctx, s); !errors.Is(err, runtimeadapter.ErrNotFound) {
		t.Fatalf("Create before EnsureImage: %v, want ErrNotFound", err)
	}
	if err := rt.EnsureImage(ctx, s.Image); err != nil {
		t.Fatalf("EnsureImage with AutoImages: %v", err)
	}
	if _, err := rt.Create(ctx, s); err != nil {
		t.Fatalf("Create after EnsureImage: %v", err)
	}
	if got := rt.Images(); !slices.Equal(got, []string{"example.com:5000/team/app:latest"}) {
		t.Errorf("Images() = %v", got)
	}
}

func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	rt := New(WithImages(image))
	s := spec("u1", "web")
	s.Env = []string{"A=1"}
	before := time.Now()
	id, err := rt.Create(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	s.Env[0] = "mutated" // the fake keeps its own copy
	s.Labels[runtimeadapter.LabelPodUID] = "mutated"

	c := inspect(t, rt, id)
	wantState(t, c, runtimeadapter.StateUnknown, "created")
	if c.ID != id || c.Name != spec("u1", "web").Name || c.Image != image || c.Labels[runtimeadapter.LabelPodUID] != "u1" {
		t.Fatalf("created container %+v", c)
	}
	if c.CreatedAt.Before(before) || !c.StartedAt.IsZero() {
		t.Errorf("timestamps after create: %+v", c)
	}

	if err := rt.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	c = inspect(t, rt, id)
	wantState(t, c, runtimeadapter.StateRunning, "running")
	if c.StartedAt.IsZero() {
		t.Error("StartedAt not set")
	}
	if err := rt.Start(ctx, id); err != nil {
		t.Errorf("Start of a running container: %v, want nil", err)
	}

	if err := rt.Stop(ctx, id, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	c = inspect(t, rt, id)
	wantState(t, c, runtimeadapter.StateExited, "exited")
	if c.ExitCode != 143 || c.Reason != "Error" || c.FinishedAt.IsZero() {
		t.Errorf("after Stop: exit %d reason %q finished %v", c.ExitCode, c.Reason, c.FinishedAt)
	}
	if err := rt.Stop(ctx, id, time.Second); err != nil {
		t.Errorf("Stop of a stopped container: %v, want nil", err)
	}
	if err := rt.Start(ctx, id); err == nil || errors.Is(err, runtimeadapter.ErrNotFound) {
		t.Errorf("Start of an exited container: %v, want a non-NotFound error", err)
	}

	if err := rt.Remove(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Inspect(ctx, id); !errors.Is(err, runtimeadapter.ErrNotFound) {
		t.Errorf("Inspect after Remove: %v", err)
	}
	// The name is free again.
	if _, err := rt.Create(ctx, spec("u1", "web")); err != nil {
		t.Errorf("Create after Remove: %v", err)
	}
}

func TestMissingContainer(t *testing.T) {
	ctx := context.Background()
	rt := New()
	for name, err := range map[string]error{
		"Inspect": func() error { _, err := rt.Inspect(ctx, "nope"); return err }(),
		"Start":   rt.Start(ctx, "nope"),
		"Stop":    rt.Stop(ctx, "nope", time.Second),
		"Remove":  rt.Remove(ctx, "nope"),
		"Kill":    rt.Kill("nope", 137),
		"OOMKill": rt.OOMKill("nope"),
		"RemoveX": rt.RemoveExternally("nope"),
	} {
		if !errors.Is(err, runtimeadapter.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", name, err)
		} else if !strings.Contains(err.Error(), "nope") {
			t.Errorf("%s: error %q does not name the container", name, err)
		}
	}
}

func TestStopCreatedContainer(t *testing.T) {
	ctx := context.Background()
	rt := New(WithImages(image))
	id, _ := rt.Create(ctx, spec("u1", "web"))
	if err := rt.Stop(ctx, id, time.Second); err != nil {
		t.Fatalf("Stop of a created container: %v", err)
	}
	wantState(t, inspect(t, rt, id), runtimeadapter.StateUnknown, "created")
}

func TestRemoveRunningForces(t *testing.T) {
	ctx := context.Background()
	rt := New(WithImages(image))
	id := run(t, rt, spec("u1", "web"))
	if err := rt.Remove(ctx, id); err != nil {
		t.Fatalf("Remove of a running container: %v", err)
	}
	if n := len(rt.Containers()); n != 0 {
		t.Fatalf("%d containers left", n)
	}
}

func TestNameConflict(t *testing.T) {
	ctx := context.Background()
	rt := New(WithImages(image))
	s := spec("u1", "web")
	id, err := rt.Create(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	_, err = rt.Create(ctx, s)
	wantErrIs(t, err, runtimeadapter.ErrNameConflict)
	var nc *runtimeadapter.NameConflictError
	if !errors.As(err, &nc) || nc.ID != id || nc.Name != s.Name {
		t.Fatalf("error %v does not carry the existing container (%s)", err, id)
	}
	if n := len(rt.Containers()); n != 1 {
		t.Errorf("%d containers, want 1", n)
	}
}

func TestGeneratedName(t *testing.T) {
	rt := New(WithImages(image))
	s := spec("u1", "web")
	s.Name = ""
	id, err := rt.Create(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if c := inspect(t, rt, id); c.Name == "" {
		t.Fatal("no name generated")
	}
}

func TestIDs(t *testing.T) {
	hex64 := regexp.MustCompile(`^[0-9a-f]{64}$`)
	create := func() []string {
		rt := New(WithImages(image))
		var ids []string
		for _, n := range []string{"a", "b", "c"} {
			id, err := rt.Create(context.Background(), spec("u1", n))
			if err != nil {
				t.Fatal(err)
			}
			if !hex64.MatchString(id) {
				t.Fatalf("ID %q is not 64 hex digits", id)
			}
			ids = append(ids, id)
		}
		return ids
	}
	a, b := create(), create()
	if !slices.Equal(a, b) {
		t.Errorf("IDs differ between runtimes: %v vs %v", a, b)
	}
	if a[0] == a[1] || a[1] == a[2] || a[0] == a[2] {
		t.Errorf("IDs not unique: %v", a)
	}
}

func TestInspectLookup(t *testing.T) {
	rt := New(WithImages(image))
	s := spec("u1", "web")
	id := run(t, rt, s)
	for _, ref := range []string{id, id[:12], s.Name, "/" + s.Name} {
		if c := inspect(t, rt, ref); c.ID != id {
			t.Errorf("Inspect(%q) = %s, want %s", ref, c.ID, id)
		}
	}
	// Unmanaged containers can be inspected too.
	other := rt.AddContainer(runtimeadapter.Container{Name: "postgres"})
	if c := inspect(t, rt, "postgres"); c.ID != other {
		t.Errorf("Inspect(postgres) = %s", c.ID)
	}
}

func TestList(t *testing.T) {
	ctx := context.Background()
	rt := New(WithImages(image))
	running := run(t, rt, spec("u1", "web"))
	exited := run(t, rt, spec("u1", "init"))
	if err := rt.Kill(exited, 0); err != nil {
		t.Fatal(err)
	}
	created, _ := rt.Create(ctx, spec("u2", "web"))
	run(t, rt, specOn("node-2", "u3", "web"))
	rt.AddContainer(runtimeadapter.Container{Name: "unlabelled"})
	partial := spec("u4", "web").Labels
	delete(partial, runtimeadapter.LabelContainerType)
	rt.AddContainer(runtimeadapter.Container{Name: "partial", Labels: partial})

	ids := func(res runtimeadapter.ListResult) []string {
		var out []string
		for _, c := range res.Containers {
			out = append(out, c.ID)
		}
		return out
	}
	list := func(opts runtimeadapter.ListOptions) runtimeadapter.ListResult {
		t.Helper()
		res, err := rt.List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	before := time.Now()
	all := list(runtimeadapter.ListOptions{Node: node, All: true})
	if got, want := ids(all), []string{created, exited, running}; !slices.Equal(got, want) {
		t.Errorf("All: %v, want %v (newest first, as Docker)", got, want)
	}
	if all.ObservedAt.Before(before) || all.ObservedAt.After(time.Now()) {
		t.Errorf("ObservedAt %v not at the call", all.ObservedAt)
	}
	if got, want := ids(list(runtimeadapter.ListOptions{Node: node})), []string{running}; !slices.Equal(got, want) {
		t.Errorf("running only: %v, want %v", got, want)
	}
	if got, want := ids(list(runtimeadapter.ListOptions{Node: node, PodUID: "u2", All: true})), []string{created}; !slices.Equal(got, want) {
		t.Errorf("pod u2: %v, want %v", got, want)
	}
	if got := list(runtimeadapter.ListOptions{Node: "node-9", All: true}); len(got.Containers) != 0 {
		t.Errorf("other node: %v", ids(got))
	}

	// Copies: mutating the result changes nothing.
	all.Containers[0].Labels[runtimeadapter.LabelNode] = "elsewhere"
	all.Containers[0].State = runtimeadapter.StateExited
	if c := inspect(t, rt, running); c.Labels[runtimeadapter.LabelNode] != node || c.State != runtimeadapter.StateRunning {
		t.Errorf("List returned shared state: %+v", c)
	}

	if _, err := rt.List(ctx, runtimeadapter.ListOptions{All: true}); err == nil {
		t.Error("List without a node succeeded")
	}
	if n := len(rt.Containers()); n != 6 {
		t.Errorf("Containers() has %d, want 6", n)
	}
}
