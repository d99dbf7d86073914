package runtimetest_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
	"github.com/actorlet/actorlet/runtimeadapter/runtimetest"
)

// newMyRuntime stands for a third-party adapter's constructor (a CRI
// adapter, say); here it is the fake, so the example compiles.
func newMyRuntime() (runtimeadapter.Runtime, func()) {
	rt := fake.New(fake.WithImages("registry.local/testworkload:1"))
	return rt, rt.Close
}

// A third-party adapter holds itself to the suite from a test in its own
// package: TestConformance below is what its conformance_test.go holds.
// Its containers run a test image that does what each Workload and
// Command asks (actorlet's ./images/testworkload does, through flags),
// and every subtest gets a node name of its own.
func ExampleRun() {
	TestConformance := func(t *testing.T) {
		runtimetest.Run(t, runtimetest.Harness{New: func(t *testing.T) runtimetest.Instance {
			rt, closeRuntime := newMyRuntime()
			t.Cleanup(closeRuntime)
			node := "conformance-" + strconv.FormatInt(nodes.Add(1), 10) // one per subtest
			return runtimetest.Instance{
				Runtime:     rt,
				Node:        node,
				Image:       "registry.local/testworkload:1",
				AbsentImage: "127.0.0.1:1/absent:1", // nothing serves it
				Workload: func(spec *runtimeadapter.ContainerSpec, w runtimetest.Workload) {
					spec.Image = "registry.local/testworkload:1"
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
					return []string{"/testworkload", "--exit-code", strconv.Itoa(c.ExitCode), "--exit-after", "1ms"}, ""
				},
				Ready: func(ctx context.Context, t *testing.T, id string) {
					// Wait until the workload has printed LogLine: it
					// then traps SIGTERM.
				},
				LogLine: "testworkload: started",
			}
		}})
	}
	_ = TestConformance
}

// nodes numbers the subtests' nodes.
var nodes atomic.Int64
