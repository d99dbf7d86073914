package docker_test

import (
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/docker"
	"github.com/actorlet/actorlet/runtimeadapter/runtimetest"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// Docker implements every optional interface the suite checks.
var (
	_ runtimeadapter.Execer       = (*docker.Runtime)(nil)
	_ runtimeadapter.LogSource    = (*docker.Runtime)(nil)
	_ runtimeadapter.ImageService = (*docker.Runtime)(nil)
	_ runtimeadapter.EventSource  = (*docker.Runtime)(nil)
)

// TestConformance holds the Docker adapter to the runtime conformance
// suite, as runtimeadapter/fake's TestConformance holds the fake. Its
// containers run the test workload built from ./images/testworkload; it
// fails, not skips, without Docker when CI=true.
func TestConformance(t *testing.T) {
	t.Parallel()
	testimages.EnsureTestImages(t) // builds the images once, before the subtests
	runtimetest.Run(t, runtimetest.Harness{New: newConformanceInstance})
}

// workloadStarted is what the test workload prints once it traps SIGTERM.
const workloadStarted = "testworkload: started"

func newConformanceInstance(t *testing.T) runtimetest.Instance {
	rt := testimages.EnsureTestImages(t)
	node := testimages.NodeName("t-conf")
	testimages.CleanupNode(t, rt, node)
	testimages.CleanupNode(t, rt, node+"-other")
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
			for !logsContain(ctx, rt, id, workloadStarted) {
				if time.Now().After(deadline) {
					t.Fatalf("container %s did not print %q", id, workloadStarted)
				}
				time.Sleep(20 * time.Millisecond)
			}
		},
		LogLine: workloadStarted,
	}
}

// logsContain reports whether the logs of container id contain s so far.
func logsContain(ctx context.Context, rt *docker.Runtime, id, s string) bool {
	rc, err := rt.Logs(ctx, id, runtimeadapter.LogOptions{})
	if err != nil {
		return false
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return err == nil && strings.Contains(string(b), s)
}
