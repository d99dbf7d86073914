// Package leakcheck is the TestMain of actorlet's packages that run actor
// trees: it fails the package when a goroutine started by its tests is
// still running after they all passed. Only tests import it.
package leakcheck

import (
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Straggle is how long Main waits for goroutines to end before it calls
// them leaked (goleak.VerifyTestMain retries for only about half a
// second): protoactor-go's dead-letter throttle runs a one-shot goroutine
// for 1 s (DeadLetterThrottleInterval) after a message reaches a stopped
// actor, which happens when a late runtime answer arrives after a node
// stopped. That goroutine ends on its own and is not ignored; nothing is.
const Straggle = 10 * time.Second

// Main runs the package's tests and, if they passed, checks for leaked
// goroutines; it exits with the result. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if code == 0 {
		err := goleak.Find()
		for deadline := time.Now().Add(Straggle); err != nil && time.Now().Before(deadline); err = goleak.Find() {
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
