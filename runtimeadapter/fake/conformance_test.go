package fake_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
	"github.com/actorlet/actorlet/runtimeadapter/runtimetest"
)

// conformanceImage is the image the fake's conformance containers run.
const conformanceImage = "actorlet/conformance:1"

// TestConformance holds the fake to the runtime conformance suite, as
// runtimeadapter/docker's TestConformance holds Docker: what the actor
// tests learn on the fake holds on Docker.
func TestConformance(t *testing.T) {
	runtimetest.Run(t, runtimetest.Harness{New: newConformanceInstance})
}

// newConformanceInstance is a fresh fake whose containers behave as the
// suite's Workloads: Workload scripts each container by name, and every
// exec command is read from its argv ("exit N", "hang").
func newConformanceInstance(t *testing.T) runtimetest.Instance {
	rt := fake.New(fake.WithImages(conformanceImage))
	t.Cleanup(rt.Close)
	rt.ScriptExec("", func(cmd []string) fake.ExecOutcome {
		if len(cmd) == 1 && cmd[0] == "hang" {
			return fake.ExecOutcome{Hang: true}
		}
		if len(cmd) == 2 && cmd[0] == "exit" {
			code, err := strconv.Atoi(cmd[1])
			if err == nil {
				return fake.ExecOutcome{Result: runtimeadapter.ExecResult{ExitCode: code, Output: []byte("exiting " + cmd[1])}}
			}
		}
		return fake.ExecOutcome{Result: runtimeadapter.ExecResult{ExitCode: 127, Output: []byte("not found")}}
	})
	return runtimetest.Instance{
		Runtime:     rt,
		Node:        "conformance",
		Image:       conformanceImage,
		AbsentImage: "actorlet/absent:1",
		Workload: func(spec *runtimeadapter.ContainerSpec, w runtimetest.Workload) {
			spec.Image = conformanceImage
			b := fake.Behavior{RunForever: true, TermDelay: time.Nanosecond} // exits 0 on SIGTERM
			switch {
			case w.CannotStart:
				b = fake.Behavior{StartExitCode: 127, StartError: errors.New(
					`failed to create task for container: OCI runtime create failed: exec: "/does-not-exist": stat /does-not-exist: no such file or directory: unknown`)}
			case w.Exits:
				b = fake.Behavior{ExitCode: w.ExitCode, ExitAfter: w.ExitAfter, TermDelay: time.Nanosecond}
			case w.IgnoreSIGTERM:
				b = fake.Behavior{RunForever: true, IgnoreSIGTERM: true}
			}
			name := spec.Name
			rt.SetBehavior(func(s runtimeadapter.ContainerSpec) bool { return s.Name == name }, b)
		},
		Exec: func(c runtimetest.Command) ([]string, string) {
			if c.Hang {
				return []string{"hang"}, ""
			}
			return []string{"exit", strconv.Itoa(c.ExitCode)}, "exiting " + strconv.Itoa(c.ExitCode)
		},
	}
}
