package e2e

import (
	"testing"

	"github.com/actorlet/actorlet/test/support/testbin"
)

func TestMain(m *testing.M) { testbin.Main(m) }

// actorletBinary builds ./cmd/actorlet once per test process and returns
// the binary's path.
func actorletBinary(t testing.TB) string { return testbin.Actorlet(t) }
