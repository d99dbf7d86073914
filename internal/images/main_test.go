package images_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: a
// Manager's pulls end at Close.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
