package node_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine started by its tests is
// still running after they all passed. It waits up to 10 s for stragglers
// first (goleak.VerifyTestMain retries for only about half a second):
// protoactor-go's dead-letter throttle runs a one-shot goroutine for 1 s
// (DeadLetterThrottleInterval) after a message reaches a stopped actor,
// which happens when a late runtime answer arrives after node.Stop. That
// goroutine ends on its own and is not ignored; nothing is.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		err := goleak.Find()
		for deadline := time.Now().Add(10 * time.Second); err != nil && time.Now().Before(deadline); err = goleak.Find() {
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
