package cri_test

import (
	"context"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/cri"
	"github.com/actorlet/actorlet/test/support/containerdtest"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// TestExitsFromContainerd: with Options.Containerd the adapter follows
// containerd's task events in namespace k8s.io: a container's death comes
// with its CRI ID, its pod and the exit status and time the CRI status
// then shows, while ExecSync's processes, whose exits containerd
// publishes on the same topic, are counted and never reported.
func TestExitsFromContainerd(t *testing.T) {
	t.Parallel()
	cd := containerdtest.Require(t)
	rt, err := cri.New(cri.Options{Endpoint: cd.Endpoint, LogRoot: t.TempDir(), Containerd: cd.Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if want := "containerd task events at " + cd.Socket + ", namespace k8s.io"; rt.ExitPath() != want {
		t.Fatalf("ExitPath = %q, want %q", rt.ExitPath(), want)
	}
	node := testimages.NodeName("t-cri-exits")
	cd.CleanupNode(t, node)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	exits, errs := rt.Exits(ctx, node)

	sb, app := pod(node, "exits", "--exit-after", "1h", "--exit-code", "3")
	if _, err := rt.Create(ctx, sb); err != nil {
		t.Fatal(err)
	}
	id, err := rt.Create(ctx, app) // the adapter learns whose it is
	if err == nil {
		err = rt.Start(ctx, id)
	}
	if err != nil {
		t.Fatal(err)
	}
	res, err := rt.Exec(ctx, id, []string{"/testworkload", "check", "--file", "/"}, 10*time.Second)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec: %+v, %v", res, err)
	}
	for deadline := time.Now().Add(20 * time.Second); rt.ExecExits() == 0; {
		select {
		case x := <-exits:
			t.Fatalf("an exit while only an exec ended: %+v", x)
		case err := <-errs:
			t.Fatalf("exit stream ended: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("containerd never reported the exec's exit")
		}
	}
	if err := rt.Stop(ctx, id, 0); err != nil {
		t.Fatalf("stop: %v", err)
	}
	var got runtimeadapter.Exit
	select {
	case got = <-exits:
	case err := <-errs:
		t.Fatalf("exit stream ended: %v", err)
	case <-ctx.Done():
		t.Fatal("no exit through containerd")
	}
	if got.ContainerID != id || got.PodUID != node+"-exits" || got.ExitCode != 137 || got.ExitedAt.IsZero() {
		t.Fatalf("exit = %+v, want container %s of pod %s, exit 137 (SIGKILL) with a time", got, id, node+"-exits")
	}
	c, err := rt.Inspect(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != runtimeadapter.StateExited || c.ExitCode != 137 || !c.FinishedAt.Equal(got.ExitedAt) {
		t.Fatalf("inspected after the exit: %s exit %d finished %v; want exited 137 at %v (the task exit's time)",
			c.RawState, c.ExitCode, c.FinishedAt, got.ExitedAt)
	}
}

// TestNoContainerdNoExits: without Options.Containerd the adapter follows
// nothing, and says so.
func TestNoContainerdNoExits(t *testing.T) {
	rt, err := cri.New(cri.Options{Endpoint: "unix:///nonexistent.sock", LogRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if rt.ExitPath() != "" {
		t.Fatalf("ExitPath = %q without Options.Containerd", rt.ExitPath())
	}
	if _, err := cri.New(cri.Options{Endpoint: "unix:///nonexistent.sock", LogRoot: t.TempDir(), Containerd: "relative.sock"}); err == nil {
		t.Fatal("a relative containerd socket was accepted")
	}
}
