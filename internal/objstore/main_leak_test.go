package objstore

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine started by its tests is
// still running after they all ended (goleak retries for a while first).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
