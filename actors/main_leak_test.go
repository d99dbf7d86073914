package actors

import (
	"testing"

	"github.com/actorlet/actorlet/test/support/leakcheck"
)

// TestMain fails the package when a goroutine started by its tests is
// still running after they all passed (see leakcheck.Main).
func TestMain(m *testing.M) { leakcheck.Main(m) }
