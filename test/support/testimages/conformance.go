package testimages

import (
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/runtimetest"
)

// workloadStarted is what the test workload prints once it traps SIGTERM.
const workloadStarted = "testworkload: started"

// LoggingRuntime is a runtime whose containers' logs can be read.
type LoggingRuntime interface {
	runtimeadapter.Runtime
	runtimeadapter.LogSource
}

// Conformance is the runtime conformance suite's instance of rt on node,
// its containers running the test workload (TestWorkloadTag): how each
// workload and exec of the suite is made of it, and when a container is
// ready (it printed that it traps SIGTERM). Adapters set what differs
// (NoPodNetwork, SandboxesRunUntilStopped).
func Conformance(rt LoggingRuntime, node string) runtimetest.Instance {
	return runtimetest.Instance{
		Runtime:     rt,
		Node:        node,
		Image:       TestWorkloadTag,
		AbsentImage: "127.0.0.1:1/actorlet/conformance-absent:1",
		Workload: func(spec *runtimeadapter.ContainerSpec, w runtimetest.Workload) {
			spec.Image = TestWorkloadTag
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
		LogLine: workloadStarted,
	}
}

// logsContain reports whether the logs of container id contain s so far.
func logsContain(ctx context.Context, rt runtimeadapter.LogSource, id, s string) bool {
	rc, err := rt.Logs(ctx, id, runtimeadapter.LogOptions{})
	if err != nil {
		return false
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return err == nil && strings.Contains(string(b), s)
}
