package docker_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/docker"
	"github.com/actorlet/actorlet/test/support/testregistry"
)

// removeImageAtEnd removes ref from the daemon when t ends, if present.
func removeImageAtEnd(t *testing.T, rt *docker.Runtime, ref string) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := rt.RemoveImage(ctx, ref); err != nil && !errors.Is(err, runtimeadapter.ErrNotFound) {
			t.Errorf("cleanup: %v", err)
		}
	})
}

// TestPullImageFromRegistry pulls the test workload from a registry served
// by the test on 127.0.0.1 and runs it.
func TestPullImageFromRegistry(t *testing.T) {
	f := newFixture(t)
	reg := testregistry.Start(t)
	ref := reg.PushTestWorkload(t, "actorlet/tw", "1")
	removeImageAtEnd(t, f.rt, ref)

	if ok, err := f.rt.ImagePresent(f.ctx, ref); err != nil || ok {
		t.Fatalf("ImagePresent before the pull = %v, %v; want false, nil", ok, err)
	}
	var msgs []runtimeadapter.PullProgress
	if err := f.rt.PullImage(f.ctx, ref, func(p runtimeadapter.PullProgress) { msgs = append(msgs, p) }); err != nil {
		t.Fatalf("PullImage: %v", err)
	}
	if ok, err := f.rt.ImagePresent(f.ctx, ref); err != nil || !ok {
		t.Fatalf("ImagePresent after the pull = %v, %v; want true, nil", ok, err)
	}
	if n := reg.ManifestRequests("actorlet/tw"); n == 0 {
		t.Errorf("the registry served no manifest: %v", reg.Requests())
	}
	var sawDigest, sawLayer bool
	for _, m := range msgs {
		sawDigest = sawDigest || strings.HasPrefix(m.Status, "Digest: sha256:")
		sawLayer = sawLayer || (m.Layer != "" && !strings.Contains(m.Layer, ":"))
	}
	if !sawDigest || !sawLayer {
		t.Errorf("progress lacks a digest or a layer message: %+v", msgs)
	}

	// The image runs: the workload exits with the code it is told.
	spec := f.spec("pulled", "--exit-after", "100ms", "--exit-code", "7")
	spec.Image = ref
	id := f.run(spec)
	eventually(t, 20*time.Second, "the pulled workload to exit", func() bool {
		c, err := f.rt.Inspect(f.ctx, id)
		return err == nil && c.State == runtimeadapter.StateExited
	})
	if c, err := f.rt.Inspect(f.ctx, id); err != nil || c.ExitCode != 7 {
		t.Errorf("exit = %+v, %v; want code 7", c.ExitCode, err)
	}

	// Pulling a present image again asks the registry again.
	reg.ResetRequests()
	if err := f.rt.PullImage(f.ctx, ref, nil); err != nil {
		t.Fatalf("second PullImage: %v", err)
	}
	if n := reg.ManifestRequests("actorlet/tw"); n == 0 {
		t.Errorf("the second pull did not reach the registry")
	}
}

// TestPullImageMissing: an unknown tag or repository at a live registry is
// ErrNotFound, named in the error.
func TestPullImageMissing(t *testing.T) {
	f := newFixture(t)
	reg := testregistry.Start(t)
	reg.PushTestWorkload(t, "actorlet/tw", "1")
	for _, ref := range []string{reg.Ref("actorlet/tw", "missing"), reg.Ref("actorlet/nothing", "1")} {
		removeImageAtEnd(t, f.rt, ref)
		err := f.rt.PullImage(f.ctx, ref, nil)
		if !errors.Is(err, runtimeadapter.ErrNotFound) || !strings.Contains(err.Error(), ref) {
			t.Errorf("PullImage(%s) = %v; want ErrNotFound naming the image", ref, err)
		}
		if errors.Is(err, runtimeadapter.ErrUnavailable) {
			t.Errorf("PullImage(%s) = %v; must not be ErrUnavailable (the daemon answered)", ref, err)
		}
		t.Logf("error: %v", err)
		if ok, err := f.rt.ImagePresent(f.ctx, ref); err != nil || ok {
			t.Errorf("ImagePresent(%s) = %v, %v; want false, nil", ref, ok, err)
		}
	}
}

// TestPullImageUnreachableRegistry: nothing listens on 127.0.0.1:1; the
// pull fails naming the image, and it is neither ErrNotFound nor
// ErrUnavailable (the daemon answered).
func TestPullImageUnreachableRegistry(t *testing.T) {
	f := newFixture(t)
	const ref = "127.0.0.1:1/actorlet/tw:1"
	err := f.rt.PullImage(f.ctx, ref, nil)
	if err == nil || !strings.Contains(err.Error(), ref) {
		t.Fatalf("PullImage(%s) = %v; want an error naming the image", ref, err)
	}
	if errors.Is(err, runtimeadapter.ErrNotFound) || errors.Is(err, runtimeadapter.ErrUnavailable) {
		t.Errorf("PullImage(%s) = %v; want neither ErrNotFound nor ErrUnavailable", ref, err)
	}
	t.Logf("error: %v", err)
}

// TestPullImageContextEnds: a pull whose context ends fails with
// ErrUnavailable and the context's error.
func TestPullImageContextEnds(t *testing.T) {
	f := newFixture(t)
	reg := testregistry.Start(t)
	ref := reg.PushTestWorkload(t, "actorlet/tw", "1")
	removeImageAtEnd(t, f.rt, ref)
	ctx, cancel := context.WithCancel(f.ctx)
	cancel()
	err := f.rt.PullImage(ctx, ref, nil)
	if !errors.Is(err, runtimeadapter.ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Errorf("PullImage with a cancelled context = %v; want ErrUnavailable and Canceled", err)
	}
}
