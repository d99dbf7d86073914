package images_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/images"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/docker"
	"github.com/actorlet/actorlet/test/support/testimages"
	"github.com/actorlet/actorlet/test/support/testregistry"
)

// These tests pull from a registry served in-process on 127.0.0.1 through
// the local Docker daemon.

// counting is an ImageService that counts the calls it passes on.
type counting struct {
	svc             runtimeadapter.ImageService
	presents, pulls atomic.Int64
}

func (c *counting) ImagePresent(ctx context.Context, ref string) (bool, error) {
	c.presents.Add(1)
	return c.svc.ImagePresent(ctx, ref)
}

func (c *counting) PullImage(ctx context.Context, ref string, progress func(runtimeadapter.PullProgress)) error {
	c.pulls.Add(1)
	return c.svc.PullImage(ctx, ref, progress)
}

// registryFixture starts a registry holding the test workload as
// actorlet/tw:1 and a Manager over the Docker daemon; the pulled image is
// removed at the end.
func registryFixture(t *testing.T) (*testregistry.Registry, string, *counting, *images.Manager, context.Context) {
	t.Helper()
	t.Parallel()
	rt := testimages.EnsureTestImages(t)
	reg := testregistry.Start(t)
	ref := reg.PushTestWorkload(t, "actorlet/tw", "1")
	removeImageAtEnd(t, rt, ref)
	svc := &counting{svc: rt}
	m := newManagerFor(t, svc)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return reg, ref, svc, m, ctx
}

func newManagerFor(t *testing.T, svc runtimeadapter.ImageService) *images.Manager {
	m := images.New(svc)
	t.Cleanup(m.Close)
	return m
}

func removeImageAtEnd(t *testing.T, rt *docker.Runtime, ref string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := rt.RemoveImage(ctx, ref); err != nil && !errors.Is(err, runtimeadapter.ErrNotFound) {
			t.Errorf("cleanup: %v", err)
		}
	})
}

func TestRegistryIfNotPresentPullsOnce(t *testing.T) {
	reg, ref, svc, m, ctx := registryFixture(t)
	if err := m.Ensure(ctx, ref, v1.PullIfNotPresent); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	first := reg.ManifestRequests("actorlet/tw")
	if first == 0 {
		t.Fatalf("the first Ensure did not reach the registry: %v", reg.Requests())
	}
	for range 2 {
		if err := m.Ensure(ctx, ref, v1.PullIfNotPresent); err != nil {
			t.Fatalf("Ensure: %v", err)
		}
	}
	if n := reg.ManifestRequests("actorlet/tw"); n != first {
		t.Errorf("manifest requests = %d after 3 Ensure; want %d (one pull)", n, first)
	}
	if n := svc.pulls.Load(); n != 1 {
		t.Errorf("PullImage calls = %d; want 1", n)
	}
}

func TestRegistryAlwaysPullsEachTime(t *testing.T) {
	reg, ref, svc, m, ctx := registryFixture(t)
	last := 0
	for i := range 3 {
		if err := m.Ensure(ctx, ref, v1.PullAlways); err != nil {
			t.Fatalf("Ensure %d: %v", i, err)
		}
		n := reg.ManifestRequests("actorlet/tw")
		if n <= last {
			t.Fatalf("Ensure %d did not reach the registry (%d manifest requests, %d before)", i, n, last)
		}
		last = n
	}
	if n := svc.pulls.Load(); n != 3 {
		t.Errorf("PullImage calls = %d; want 3", n)
	}
	if n := svc.presents.Load(); n != 0 {
		t.Errorf("ImagePresent calls = %d; want 0 (Always does not look)", n)
	}
}

func TestRegistryMissingTag(t *testing.T) {
	reg, _, svc, m, ctx := registryFixture(t)
	ref := reg.Ref("actorlet/tw", "missing")
	err := m.Ensure(ctx, ref, v1.PullIfNotPresent)
	if images.Reason(err) != images.ReasonErrImagePull || !errors.Is(err, runtimeadapter.ErrNotFound) {
		t.Fatalf("Ensure(%s) = %v; want ErrImagePull wrapping ErrNotFound", ref, err)
	}
	if !strings.Contains(err.Error(), ref) || !strings.Contains(err.Error(), "not found") {
		t.Errorf("error %q does not say that %s was not found", err, ref)
	}
	if n := svc.pulls.Load(); n != 1 {
		t.Errorf("PullImage calls = %d; want 1", n)
	}
}

// TestRegistryUnreachable: nothing listens on 127.0.0.1:1. The pull fails
// with ErrImagePull, and the next Ensure within 10 s is ImagePullBackOff
// without a pull (and, with Always, without any call).
func TestRegistryUnreachable(t *testing.T) {
	t.Parallel()
	rt := testimages.EnsureTestImages(t)
	svc := &counting{svc: rt}
	m := newManagerFor(t, svc)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const ref = "127.0.0.1:1/actorlet/tw:1"

	start := time.Now()
	err := m.Ensure(ctx, ref, v1.PullAlways)
	if images.Reason(err) != images.ReasonErrImagePull || !strings.Contains(err.Error(), ref) {
		t.Fatalf("Ensure = %v; want ErrImagePull naming %s", err, ref)
	}
	end := time.Now()

	err = m.Ensure(ctx, ref, v1.PullAlways)
	var be *images.BackOffError
	if !errors.As(err, &be) || images.Reason(err) != images.ReasonImagePullBackOff {
		t.Fatalf("second Ensure = %v; want ImagePullBackOff", err)
	}
	if be.Until.Before(start.Add(10*time.Second)) || be.Until.After(end.Add(10*time.Second)) {
		t.Errorf("Until = %v; want 10 s after the failure (%v … %v)", be.Until, start, end)
	}
	if p, q := svc.pulls.Load(), svc.presents.Load(); p != 1 || q != 0 {
		t.Errorf("calls: %d pulls, %d presence checks; want 1, 0", p, q)
	}
	// IfNotPresent looks locally (the image is absent) and backs off too.
	if err := m.Ensure(ctx, ref, v1.PullIfNotPresent); !errors.Is(err, images.ErrImagePullBackOff) {
		t.Errorf("IfNotPresent: Ensure = %v; want ImagePullBackOff", err)
	}
	if p := svc.pulls.Load(); p != 1 {
		t.Errorf("pulls = %d; want 1", p)
	}
}
