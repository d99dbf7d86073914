package docker_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/docker"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// A container's death comes through Docker's containerd, with Docker's own
// exit code and FinishedAt, and no sooner than any exec's exit, which is
// not reported.
func TestExitsFromContainerd(t *testing.T) {
	f := newFixture(t)
	addr := testimages.RequireContainerd(t)
	rt, err := docker.New(docker.WithContainerd(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if rt.ExitPath() == "" {
		t.Fatal("ExitPath is empty with WithContainerd")
	}
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	exits, errs := rt.Exits(ctx, f.node)
	events, _ := rt.Events(ctx, f.node)

	spec := f.spec("app", "--exit-after", "1h")
	id, err := rt.Create(f.ctx, spec) // this Runtime learns whose it is
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := rt.Start(f.ctx, id); err != nil {
		t.Fatalf("start: %v", err)
	}
	res, err := rt.Exec(f.ctx, id, []string{"/testworkload", "check", "--file", "/"}, 10*time.Second)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec: %+v, %v", res, err)
	}
	deadline := time.After(20 * time.Second)
	for rt.ExecExits() == 0 {
		select {
		case x := <-exits:
			t.Fatalf("an exit while only an exec ended: %+v", x)
		case <-deadline:
			t.Fatal("containerd never reported the exec's exit")
		case <-time.After(20 * time.Millisecond):
		}
	}
	type stamped struct {
		x  runtimeadapter.Exit
		at time.Time
	}
	first := make(chan stamped, 1)
	go func() {
		if x, ok := <-exits; ok {
			first <- stamped{x, time.Now()}
		}
	}()
	if err := f.rt.Stop(f.ctx, id, 0); err != nil {
		t.Fatalf("stop: %v", err)
	}
	var got runtimeadapter.Exit
	var exitAt time.Time
	select {
	case s := <-first:
		got, exitAt = s.x, s.at
	case err := <-errs:
		t.Fatalf("exit stream ended: %v", err)
	case <-deadline:
		t.Fatal("no exit through containerd")
	}
	if got.ContainerID != id || got.PodUID != f.uid {
		t.Fatalf("exit = %+v, want container %s of pod %s", got, id, f.uid)
	}
	c, err := rt.Inspect(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != runtimeadapter.StateExited || !c.FinishedAt.Equal(got.ExitedAt) || c.ExitCode != got.ExitCode {
		t.Fatalf("inspected %s %s exit %d, containerd said %s exit %d", c.State, c.FinishedAt, c.ExitCode, got.ExitedAt, got.ExitCode)
	}
	for {
		select {
		case ev := <-events:
			if ev.Kind == runtimeadapter.EventDie && ev.ContainerID == id {
				t.Logf("containerd's exit came %v after exited_at; Docker's die event %v after", exitAt.Sub(got.ExitedAt), time.Since(got.ExitedAt))
				return
			}
		case <-deadline:
			t.Fatal("no die event from Docker")
		}
	}
}

// Without a containerd (none configured, or its socket absent), Exits
// fails at once with ErrUnavailable: Docker's die events stay the path.
func TestExitsWithoutContainerd(t *testing.T) {
	testimages.RequireDocker(t)
	for _, tc := range []struct {
		name string
		opts []docker.Option
		path bool
	}{
		{"none configured", nil, false},
		{"absent socket", []docker.Option{docker.WithContainerd(filepath.Join(t.TempDir(), "absent.sock"))}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, err := docker.New(tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			if (rt.ExitPath() != "") != tc.path {
				t.Fatalf("ExitPath = %q", rt.ExitPath())
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			exits, errs := rt.Exits(ctx, "t-noexits")
			for range exits {
				t.Fatal("an exit without containerd")
			}
			if err := <-errs; !errors.Is(err, runtimeadapter.ErrUnavailable) || ctx.Err() != nil {
				t.Fatalf("Exits: %v, want ErrUnavailable at once", err)
			}
		})
	}
}
