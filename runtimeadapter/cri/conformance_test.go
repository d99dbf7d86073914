package cri_test

import (
	"os"
	"testing"

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

func newConformanceInstance(t *testing.T) runtimetest.Instance {
	rt, cd := newRuntime(t)
	node := testimages.NodeName("t-cri")
	cd.CleanupNode(t, node)
	cd.CleanupNode(t, node+"-other")
	inst := testimages.Conformance(rt, node)
	inst.NoPodNetwork = true
	inst.SandboxesRunUntilStopped = true
	return inst
}
