package runtimetest

import (
	"context"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// Harness is what Run needs of an adapter.
type Harness struct {
	// New sets up the runtime one subtest uses and returns it with the
	// means to drive it. It is called once by every subtest, from parallel
	// subtests. It registers its own cleanup with t.Cleanup (removing
	// whatever is left on the Instance's Node, closing the runtime); the
	// suite also removes every container it created.
	New func(t *testing.T) Instance
}

// Instance is one subtest's runtime.
type Instance struct {
	// Runtime is the runtime under test. Its optional interfaces
	// (runtimeadapter.EventSource, Execer, LogSource, ImageService) are
	// found by type assertion.
	Runtime runtimeadapter.Runtime
	// Node is a node name no other subtest, test or process uses. The
	// suite also uses Node+"-other" as a second node.
	Node string
	// Image is an image present in the runtime. Workload need not use
	// it; the image subtests ask whether it is present.
	Image string
	// AbsentImage is an image reference that is not present and cannot be
	// pulled (no registry serves it).
	AbsentImage string
	// Workload fills spec's Image, Entrypoint, Cmd and Env so that a
	// container created from it behaves as w once started. The suite has
	// set spec.Name and spec.Labels already (and may set NetworkMode);
	// Workload must leave them as they are.
	Workload func(spec *runtimeadapter.ContainerSpec, w Workload)
	// Exec returns the argv of a command that behaves as c when Execer
	// runs it in a container of any Workload, and a string its output
	// contains ("" if the suite should not check the output). Needed
	// only when Runtime implements runtimeadapter.Execer.
	Exec func(c Command) (argv []string, output string)
	// Ready, when not nil, waits until the workload of the started
	// container id has set up its signal handling (a real process needs
	// a moment before it can trap SIGTERM; a fake none). The suite calls
	// it before it stops a container whose exit code it checks.
	Ready func(ctx context.Context, t *testing.T, id string)
	// LogLine is a string every Workload prints on stdout once started;
	// needed only when Runtime implements runtimeadapter.LogSource.
	LogLine string
	// NoPodNetwork: the runtime has no pod network (a CRI runtime
	// without CNI), so a sandbox can only use the host's. The suite's
	// sandboxes then use NetworkMode "host", and OnlyARunningSandboxHasAnIP
	// checks instead that a sandbox on the pod network is refused at
	// create, naming it.
	NoPodNetwork bool
	// SandboxesRunUntilStopped: a sandbox runs the runtime's own pause
	// image whatever its spec's Workload (CRI), so it never exits by
	// itself; the suite stops one it needs exited.
	SandboxesRunUntilStopped bool
}

// Workload is what a container does once started. The zero Workload runs
// until it gets SIGTERM, then exits 0 at once (a well-behaved server).
type Workload struct {
	// Exits: the container exits by itself with ExitCode, ExitAfter after
	// it starts.
	Exits     bool
	ExitCode  int
	ExitAfter time.Duration
	// IgnoreSIGTERM: only SIGKILL stops it.
	IgnoreSIGTERM bool
	// CannotStart: the container's command does not exist, so its start
	// fails, as "command: [/does-not-exist]" does in a pod.
	CannotStart bool
}

// Command is what a command run by Execer does.
type Command struct {
	// ExitCode is the command's exit status; it exits at once.
	ExitCode int
	// Hang: the command never ends by itself (until it is killed).
	Hang bool
}
