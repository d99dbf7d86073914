package kubeapi

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind, e.g. a
// watch that did not end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
