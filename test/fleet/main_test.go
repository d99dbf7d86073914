// Package fleet is actorlet's end-to-end test of a fleet: three
// `actorlet run` processes with different node names, fed from one etcd
// (a real one, embedded in the test process by test/support/etcdtest), on
// one Docker Engine.
//
// The test needs Docker: without it it skips, or fails when CI=true (see
// test/support/testimages). Its node names are unique to the run, and every
// container labelled with them is removed at the end.
package fleet

import (
	"testing"

	"github.com/actorlet/actorlet/test/support/testbin"
)

func TestMain(m *testing.M) { testbin.Main(m) }

// actorletBinary builds ./cmd/actorlet once per test process and returns
// the binary's path.
func actorletBinary(t testing.TB) string { return testbin.Actorlet(t) }
