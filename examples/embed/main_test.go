package main

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter/fake"
	"github.com/actorlet/actorlet/supervision"
)

// This is how a user tests their own service against actorlet: the fake
// runtime scripts the workload (exit 1 after 2 s), synctest drives time,
// and the test checks the service's own behaviour — here, the alerts.
func TestWatchdogAlertsOnCrashLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("worker", fake.Behavior{ExitCode: 1, ExitAfter: 2 * time.Second})
		alerts := make(chan string, 16)
		svc, err := Start(rt, "test-node", supervision.BackoffPolicy{Initial: 10 * time.Second, Max: 40 * time.Second}, alerts, CrasherPod())
		if err != nil {
			t.Fatal(err)
		}
		// Exit at +2 s: restarted at once (a first exit arms the back-off),
		// no alert. Exit at +4 s, back-off 10 s: the alert comes right after.
		time.Sleep(3 * time.Second)
		synctest.Wait()
		select {
		case a := <-alerts:
			t.Fatalf("alert %q after the first exit, which restarts at once", a)
		default:
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		select {
		case a := <-alerts:
			if want := "ALERT pod default/flaky container worker is crash-looping (restarts: 1)"; a != want {
				t.Fatalf("alert %q, want %q", a, want)
			}
		default:
			t.Fatal("no alert 1 s after the second crash")
		}
		// Restart at +14 s, exit at +16 s: a second alert, for restart 2.
		time.Sleep(12 * time.Second)
		synctest.Wait()
		select {
		case a := <-alerts:
			if want := "ALERT pod default/flaky container worker is crash-looping (restarts: 2)"; a != want {
				t.Fatalf("alert %q, want %q", a, want)
			}
		default:
			t.Fatal("no alert after the third crash")
		}
		if err := svc.Shutdown(rt, "test-node", time.Minute); err != nil {
			t.Fatal(err)
		}
		rt.Close()
		time.Sleep(5 * time.Second) // stragglers (dead-letter throttle timers) end; no time in the bubble
	})
}
