package runtimetest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
	"github.com/actorlet/actorlet/runtimeadapter/runtimetest"
)

// brokenEnv, when set, makes TestSuiteFailsABrokenRuntime run the suite
// against the runtime it names (see brokenRuntimes) instead of checking
// how that run fails.
const brokenEnv = "RUNTIMETEST_BROKEN"

// brokenRuntimes are fakes with one defect each, and the subtest that
// must catch it.
var brokenRuntimes = map[string]struct {
	wrap    func(*fake.Runtime) runtimeadapter.Runtime
	catches string
}{
	"list-drops-exited": {
		func(rt *fake.Runtime) runtimeadapter.Runtime { return dropsExited{rt} },
		"TestSuiteFailsABrokenRuntime/List/AllIncludesExitedAndCreated",
	},
	"remove-of-missing-is-nil": {
		func(rt *fake.Runtime) runtimeadapter.Runtime { return removeIgnoresMissing{rt} },
		"TestSuiteFailsABrokenRuntime/NotFound/MissingContainer",
	},
}

// TestSuiteFailsABrokenRuntime: the suite is no test that cannot fail.
// Each broken runtime is run through it in a child process, whose run
// must fail in the subtest that names the defect.
func TestSuiteFailsABrokenRuntime(t *testing.T) {
	if name := os.Getenv(brokenEnv); name != "" {
		b := brokenRuntimes[name]
		runtimetest.Run(t, runtimetest.Harness{New: func(t *testing.T) runtimetest.Instance {
			in := fakeInstance(t)
			in.Runtime = b.wrap(in.Runtime.(*fake.Runtime))
			return in
		}})
		return
	}
	for name, b := range brokenRuntimes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSuiteFailsABrokenRuntime$", "-test.v")
			cmd.Env = append(os.Environ(), brokenEnv+"="+name)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("the suite passed (or did not run: %v) against %s:\n%s", err, name, out)
			}
			if !strings.Contains(string(out), "--- FAIL: "+b.catches+" ") {
				t.Errorf("the suite did not fail %s against %s:\n%s", b.catches, name, out)
			}
		})
	}
}

// dropsExited lists only running containers, whatever ListOptions.All.
type dropsExited struct{ *fake.Runtime }

func (r dropsExited) List(ctx context.Context, opts runtimeadapter.ListOptions) (runtimeadapter.ListResult, error) {
	opts.All = false
	return r.Runtime.List(ctx, opts)
}

// removeIgnoresMissing says nothing when asked to remove a missing
// container.
type removeIgnoresMissing struct{ *fake.Runtime }

func (r removeIgnoresMissing) Remove(ctx context.Context, id string) error {
	if err := r.Runtime.Remove(ctx, id); !errors.Is(err, runtimeadapter.ErrNotFound) {
		return err
	}
	return nil
}

// fakeInstance is a fresh fake whose containers behave as the suite's
// Workloads (as runtimeadapter/fake's TestConformance sets it up).
func fakeInstance(t *testing.T) runtimetest.Instance {
	const image = "actorlet/conformance:1"
	rt := fake.New(fake.WithImages(image))
	t.Cleanup(rt.Close)
	rt.ScriptExec("", func(cmd []string) fake.ExecOutcome {
		if len(cmd) == 1 && cmd[0] == "hang" {
			return fake.ExecOutcome{Hang: true}
		}
		code, _ := strconv.Atoi(cmd[len(cmd)-1])
		return fake.ExecOutcome{Result: runtimeadapter.ExecResult{ExitCode: code}}
	})
	return runtimetest.Instance{
		Runtime:     rt,
		Node:        "conformance",
		Image:       image,
		AbsentImage: "actorlet/absent:1",
		Workload: func(spec *runtimeadapter.ContainerSpec, w runtimetest.Workload) {
			spec.Image = image
			b := fake.Behavior{RunForever: true, TermDelay: time.Nanosecond}
			switch {
			case w.CannotStart:
				b = fake.Behavior{StartExitCode: 127, StartError: errors.New("exec: no such file")}
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
			return []string{"exit", strconv.Itoa(c.ExitCode)}, ""
		},
	}
}
