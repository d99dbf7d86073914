package docker_test

import (
	"testing"

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

func newConformanceInstance(t *testing.T) runtimetest.Instance {
	rt := testimages.EnsureTestImages(t)
	node := testimages.NodeName("t-conf")
	testimages.CleanupNode(t, rt, node)
	testimages.CleanupNode(t, rt, node+"-other")
	return testimages.Conformance(rt, node)
}
