package api

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind, e.g. a
// log stream that did not end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
