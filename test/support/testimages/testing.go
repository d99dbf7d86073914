package testimages

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/actorlet/actorlet/internal/taskevents"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/docker"
)

// Timeouts of the helpers.
const (
	pingTimeout    = 10 * time.Second
	buildTimeout   = 5 * time.Minute
	cleanupTimeout = 2 * time.Minute
	// cleanupSettle: how long CleanupNode lets in-flight creates land
	// before it lists a second time.
	cleanupSettle = 100 * time.Millisecond
)

// RequireDocker returns a Runtime connected to the local Docker daemon,
// closed at test end. If the daemon does not answer within 10 s the test
// is skipped, or fails when the environment has CI=true (CI must not skip
// integration tests silently).
func RequireDocker(t testing.TB) *docker.Runtime {
	t.Helper()
	rt, err := docker.New()
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
		err = rt.Ping(ctx)
		cancel()
		if err != nil {
			rt.Close()
		}
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Docker is required (CI=true): %v", err)
		}
		t.Skipf("Docker not available, skipping: %v", err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

var (
	imagesOnce sync.Once
	imagesErr  error
)

// EnsureTestImages builds PauseTag and TestWorkloadTag from this
// repository's source (./images/pause, ./images/testworkload) on its first
// call in a test process, and returns a connected Runtime (see
// RequireDocker, whose skip rules apply). Rebuilding once per process means
// tests never run a stale binary; Docker's build cache makes an unchanged
// rebuild cost about a second.
func EnsureTestImages(t testing.TB) *docker.Runtime {
	t.Helper()
	rt := RequireDocker(t)
	buildOnce(t, &imagesOnce, &imagesErr, "test images", func(ctx context.Context) error {
		if err := BuildPause(ctx, rt, PauseTag); err != nil {
			return err
		}
		return Build(ctx, rt, TestWorkloadTag, TestWorkloadPkg)
	})
	return rt
}

// buildOnce runs build once per test process (once, its error kept in
// *errp) within buildTimeout, and fails t, naming what, if it failed.
func buildOnce(t testing.TB, once *sync.Once, errp *error, what string, build func(context.Context) error) {
	t.Helper()
	once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		defer cancel()
		*errp = build(ctx)
	})
	if *errp != nil {
		t.Fatalf("build %s: %v", what, *errp)
	}
}

var (
	grpcHealthOnce sync.Once
	grpcHealthErr  error
)

// EnsureGRPCHealthImage does what EnsureTestImages does and also builds
// GRPCHealthTag (./images/grpchealth), once per test process, for the tests
// of gRPC probes.
func EnsureGRPCHealthImage(t testing.TB) *docker.Runtime {
	t.Helper()
	rt := EnsureTestImages(t)
	buildOnce(t, &grpcHealthOnce, &grpcHealthErr, "test image "+GRPCHealthTag, func(ctx context.Context) error {
		return Build(ctx, rt, GRPCHealthTag, GRPCHealthPkg)
	})
	return rt
}

// NodeName returns a node name unique to this test run: prefix, a dash and
// 8 random hex digits (e.g. "t-docker-1f2e3d4c").
func NodeName(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// CleanupNode registers a t.Cleanup that force-removes every container
// List(All) returns for node, i.e. every container labelled as actorlet's
// for node. Failures are reported with t.Errorf. Containers with only some
// of actorlet's labels are not listed, hence not removed: tests creating
// such containers remove them themselves.
func CleanupNode(t testing.TB, rt *docker.Runtime, node string) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		// Two rounds: a create the stopped agent had in flight can land in
		// dockerd after the first list (seen: a "created" container of
		// t-faults-noalarm left behind).
		for round := range 2 {
			if round > 0 {
				select {
				case <-time.After(cleanupSettle):
				case <-ctx.Done():
				}
			}
			res, err := rt.List(ctx, runtimeadapter.ListOptions{Node: node, All: true})
			if err != nil {
				t.Errorf("cleanup node %s: %v", node, err)
				return
			}
			for _, c := range res.Containers {
				if err := rt.Remove(ctx, c.ID); err != nil && !errors.Is(err, runtimeadapter.ErrNotFound) {
					t.Errorf("cleanup node %s: %v", node, err)
				}
			}
		}
	})
}

// RequireContainerd returns the socket of Docker's containerd
// (taskevents.FindDocker). Without one the test is skipped, or fails when
// the environment has CI=true: CI's Docker has one, and the containerd
// path must run there.
func RequireContainerd(t testing.TB) string {
	t.Helper()
	addr, err := taskevents.FindDocker("")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Docker's containerd is required (CI=true): %v", err)
		}
		t.Skipf("Docker's containerd not found, skipping: %v", err)
	}
	return addr
}

// ProbedExitPod is the manifest of pod probed (restartPolicy Never),
// whose app exits 3 after 4 s while an exec liveness probe runs in it
// every second, hostNetwork when asked (a runtime without CNI): the
// workload of the tests that a death comes through containerd's task
// events and a probe's exec exit never does.
func ProbedExitPod(hostNetwork bool) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: probed
spec:
  hostNetwork: %t
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: %s
    env:
    - {name: TW_EXIT_AFTER, value: 4s}
    - {name: TW_EXIT_CODE, value: "3"}
    livenessProbe:
      exec: {command: [/testworkload, check, --file, /]}
      periodSeconds: 1
      failureThreshold: 100
`, hostNetwork, TestWorkloadTag)
}
