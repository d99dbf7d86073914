package cri_test

import (
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/cri"
	"github.com/actorlet/actorlet/runtimeadapter/runtimetest"
	"github.com/actorlet/actorlet/test/support/containerdtest"
	"github.com/actorlet/actorlet/test/support/testimages"
)

func TestMain(m *testing.M) { os.Exit(containerdtest.Main(m)) }

// newRuntime connects an adapter to the package's private containerd,
// closed at the end of t, its logs under t's temporary directory.
func newRuntime(t *testing.T) (*cri.Runtime, *containerdtest.Containerd) {
	t.Helper()
	cd := containerdtest.Require(t)
	rt, err := cri.New(cri.Options{Endpoint: cd.Endpoint, LogRoot: t.TempDir(), PauseImage: testimages.PauseTag})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt, cd
}

// TestConformance holds the CRI adapter to the runtime conformance suite,
// on a private containerd 1.6 without CNI (so sandboxes use the host's
// network) and without CRI events.
func TestConformance(t *testing.T) {
	t.Parallel()
	containerdtest.Require(t) // starts containerd once, before the subtests
	runtimetest.Run(t, runtimetest.Harness{New: newConformanceInstance})
}

const workloadStarted = "testworkload: started"

func newConformanceInstance(t *testing.T) runtimetest.Instance {
	rt, cd := newRuntime(t)
	node := testimages.NodeName("t-cri")
	cd.CleanupNode(t, node)
	cd.CleanupNode(t, node+"-other")
	return runtimetest.Instance{
		Runtime:     rt,
		Node:        node,
		Image:       testimages.TestWorkloadTag,
		AbsentImage: "127.0.0.1:1/actorlet/conformance-absent:1",
		Workload: func(spec *runtimeadapter.ContainerSpec, w runtimetest.Workload) {
			spec.Image = testimages.TestWorkloadTag
			switch {
			case w.CannotStart:
				spec.Entrypoint = []string{"/does-not-exist"}
			case w.Exits:
				spec.Cmd = []string{"--exit-code", strconv.Itoa(w.ExitCode), "--exit-after", w.ExitAfter.String()}
			case w.IgnoreSIGTERM:
				spec.Cmd = []string{"--ignore-sigterm"}
			}
		},
		Exec: func(c runtimetest.Command) ([]string, string) {
			if c.Hang {
				return []string{"/testworkload", "--log-every", "1h"}, ""
			}
			code := strconv.Itoa(c.ExitCode)
			return []string{"/testworkload", "--exit-code", code, "--exit-after", "1ms"}, "testworkload: exiting " + code
		},
		Ready: func(ctx context.Context, t *testing.T, id string) {
			t.Helper()
			deadline := time.Now().Add(30 * time.Second)
			for delay := 10 * time.Millisecond; !logsContain(ctx, rt, id, workloadStarted); delay = min(2*delay, 100*time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("container %s did not print %q", id, workloadStarted)
				}
				time.Sleep(delay)
			}
		},
		LogLine:                  workloadStarted,
		NoPodNetwork:             true,
		SandboxesRunUntilStopped: true,
	}
}

func logsContain(ctx context.Context, rt *cri.Runtime, id, s string) bool {
	rc, err := rt.Logs(ctx, id, runtimeadapter.LogOptions{})
	if err != nil {
		return false
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return err == nil && strings.Contains(string(b), s)
}
