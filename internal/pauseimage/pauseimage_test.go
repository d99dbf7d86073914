package pauseimage_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/internal/pauseimage"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/docker"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// uniqueTag returns a pause image tag of this test only, removed at test end.
func uniqueTag(t *testing.T, rt *docker.Runtime) string {
	tag := "actorlet/pause-test:" + testimages.NodeName("t")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := rt.RemoveImage(ctx, tag); err != nil && !errors.Is(err, runtimeadapter.ErrNotFound) {
			t.Errorf("cleanup: %v", err)
		}
	})
	return tag
}

func TestDefaultTag(t *testing.T) {
	if pauseimage.DefaultTag != "actorlet/pause:0.1.0" {
		t.Errorf("DefaultTag = %q", pauseimage.DefaultTag)
	}
}

func TestEnsureMissingImage(t *testing.T) {
	rt := testimages.RequireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tag := uniqueTag(t, rt)

	err := pauseimage.Ensure(ctx, rt, tag)
	if pauseimage.Binary() == nil {
		if !errors.Is(err, pauseimage.ErrNoBinary) || !strings.Contains(err.Error(), tag) ||
			!strings.Contains(err.Error(), "make") || !strings.Contains(err.Error(), "--pod-infra-image") {
			t.Fatalf("without an embedded binary: %v, want ErrNoBinary naming the tag, make and --pod-infra-image", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("with an embedded binary: %v", err)
	}
	if ok, err := rt.ImageExists(ctx, tag); !ok || err != nil {
		t.Errorf("image %s after Ensure: exists %v, %v", tag, ok, err)
	}
}

func TestEnsureKeepsExistingImage(t *testing.T) {
	rt := testimages.RequireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tag := uniqueTag(t, rt)
	if err := testimages.BuildPause(ctx, rt, tag); err != nil {
		t.Fatal(err)
	}
	// Existing: no build needed, so this works even without an embedded binary.
	if err := pauseimage.Ensure(ctx, rt, tag); err != nil {
		t.Errorf("Ensure of an existing image: %v", err)
	}
}

func TestPauseRunsUntilSIGTERMAndExitsZero(t *testing.T) {
	rt := testimages.RequireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tag := uniqueTag(t, rt)
	if err := testimages.BuildPause(ctx, rt, tag); err != nil {
		t.Fatal(err)
	}
	node := testimages.NodeName("t-pause")
	testimages.CleanupNode(t, rt, node)
	uid := strings.TrimPrefix(node, "t-pause-") + "-uid"
	meta := runtimeadapter.Meta{Node: node, PodUID: uid, PodName: "p", PodNamespace: "default",
		ContainerName: runtimeadapter.SandboxName, Type: runtimeadapter.TypeSandbox}
	id, err := rt.Create(ctx, runtimeadapter.ContainerSpec{
		Name:   runtimeadapter.ContainerName(runtimeadapter.SandboxName, "p", "default", uid, 0),
		Image:  tag,
		Labels: meta.Labels(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	// Wait until pause has been running a while so its handler is set.
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := rt.Inspect(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if c.State == runtimeadapter.StateRunning && time.Since(c.StartedAt) > 500*time.Millisecond {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pause not running: %+v", c)
		}
		time.Sleep(50 * time.Millisecond)
	}

	start := time.Now()
	if err := rt.Stop(ctx, id, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("stop took %v: pause ignored SIGTERM", took)
	}
	c, err := rt.Inspect(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != runtimeadapter.StateExited || c.ExitCode != 0 {
		t.Errorf("after SIGTERM: state %s exit code %d, want exited 0", c.State, c.ExitCode)
	}
}

// Local builds the pause image only when it is first needed (EnsureImage,
// as a sandbox's creation calls it), not when the runtime is made; with
// no embedded binary that fails naming the image and the fix.
func TestLocalBuildsWhenFirstNeeded(t *testing.T) {
	direct := testimages.RequireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tag := uniqueTag(t, direct)
	rt, err := docker.New(pauseimage.Local(tag))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if ok, err := rt.ImageExists(ctx, tag); ok || err != nil {
		t.Fatalf("image %s before it was needed: exists %v, %v; want built only when needed", tag, ok, err)
	}
	err = rt.EnsureImage(ctx, tag)
	if pauseimage.Binary() == nil {
		if !errors.Is(err, pauseimage.ErrNoBinary) || !strings.Contains(err.Error(), tag) {
			t.Fatalf("without an embedded binary: %v, want ErrNoBinary naming %s", err, tag)
		}
		return
	}
	if err != nil {
		t.Fatalf("EnsureImage of the local pause image: %v", err)
	}
	if ok, err := rt.ImageExists(ctx, tag); !ok || err != nil {
		t.Errorf("image %s after EnsureImage: exists %v, %v", tag, ok, err)
	}
}
