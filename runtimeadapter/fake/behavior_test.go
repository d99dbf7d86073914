package fake

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

func TestExitAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := New(WithImages(image))
		rt.Script(image, Behavior{ExitCode: 3, ExitAfter: 5 * time.Second})
		start := time.Now()
		id := run(t, rt, spec("u1", "job"))

		time.Sleep(5*time.Second - time.Nanosecond)
		synctest.Wait()
		wantState(t, inspect(t, rt, id), runtimeadapter.StateRunning, "running")

		time.Sleep(time.Nanosecond)
		synctest.Wait()
		c := inspect(t, rt, id)
		wantState(t, c, runtimeadapter.StateExited, "exited")
		if c.ExitCode != 3 || c.Reason != "Error" {
			t.Errorf("exit %d reason %q, want 3 Error", c.ExitCode, c.Reason)
		}
		if got := c.FinishedAt.Sub(start); got != 5*time.Second {
			t.Errorf("finished %v after start, want 5s", got)
		}
		if got := c.FinishedAt.Sub(c.StartedAt); got != 5*time.Second {
			t.Errorf("ran %v, want 5s", got)
		}
	})
}

func TestDefaultRunsForever(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := New(WithImages(image))
		rt.Script("other", Behavior{}) // matches nothing here
		id := run(t, rt, spec("u1", "web"))
		time.Sleep(1000 * time.Hour)
		synctest.Wait()
		wantState(t, inspect(t, rt, id), runtimeadapter.StateRunning, "running")
	})
}

func TestZeroBehaviorCompletesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := New(WithImages(image))
		rt.Script("busybox", Behavior{})
		start := time.Now()
		id := run(t, rt, spec("u1", "job"))
		synctest.Wait()
		c := inspect(t, rt, id)
		wantState(t, c, runtimeadapter.StateExited, "exited")
		if c.ExitCode != 0 || c.Reason != "Completed" || !c.FinishedAt.Equal(start) {
			t.Errorf("exit %d reason %q at %v", c.ExitCode, c.Reason, c.FinishedAt.Sub(start))
		}
	})
}

func TestRunForeverOverridesExitAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := New(WithImages(image))
		rt.Script(image, Behavior{ExitAfter: time.Second, RunForever: true})
		id := run(t, rt, spec("u1", "web"))
		time.Sleep(time.Hour)
		synctest.Wait()
		wantState(t, inspect(t, rt, id), runtimeadapter.StateRunning, "running")
	})
}

func TestBehaviorPrecedence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := New(WithImages(image))
		rt.Script(image, Behavior{ExitCode: 1, ExitAfter: time.Second})
		rt.ScriptContainer("sidecar", Behavior{ExitCode: 2, ExitAfter: 2 * time.Second})
		rt.SetBehavior(func(s runtimeadapter.ContainerSpec) bool {
			return s.Labels[runtimeadapter.LabelPodUID] == "special"
		}, Behavior{RunForever: true})

		web := run(t, rt, spec("u1", "web"))
		side := run(t, rt, spec("u1", "sidecar"))
		special := run(t, rt, spec("special", "sidecar"))
		time.Sleep(time.Hour)
		synctest.Wait()

		if c := inspect(t, rt, web); c.ExitCode != 1 || c.FinishedAt.Sub(c.StartedAt) != time.Second {
			t.Errorf("web (by image): exit %d after %v", c.ExitCode, c.FinishedAt.Sub(c.StartedAt))
		}
		if c := inspect(t, rt, side); c.ExitCode != 2 || c.FinishedAt.Sub(c.StartedAt) != 2*time.Second {
			t.Errorf("sidecar (by name, newer rule): exit %d after %v", c.ExitCode, c.FinishedAt.Sub(c.StartedAt))
		}
		wantState(t, inspect(t, rt, special), runtimeadapter.StateRunning, "running")

		rt.ResetBehaviors()
		again := run(t, rt, spec("u2", "sidecar"))
		time.Sleep(time.Hour)
		synctest.Wait()
		wantState(t, inspect(t, rt, again), runtimeadapter.StateRunning, "running")
	})
}

func TestOOMKilledBehavior(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := New(WithImages(image))
		rt.ScriptContainer("hog", Behavior{OOMKilled: true, ExitCode: 1, ExitAfter: time.Minute})
		id := run(t, rt, spec("u1", "hog"))
		time.Sleep(time.Minute)
		synctest.Wait()
		c := inspect(t, rt, id)
		if c.State != runtimeadapter.StateExited || c.ExitCode != 137 || c.Reason != "OOMKilled" {
			t.Errorf("got %s exit %d reason %q, want exited 137 OOMKilled", c.State, c.ExitCode, c.Reason)
		}
	})
}

func TestStopCancelsExitAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := New(WithImages(image))
		rt.Script(image, Behavior{ExitCode: 9, ExitAfter: time.Minute})
		id := run(t, rt, spec("u1", "web"))
		time.Sleep(time.Second)
		if err := rt.Stop(context.Background(), id, time.Second); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if c := inspect(t, rt, id); c.ExitCode != 143 {
			t.Errorf("exit %d, want 143 (the stop, not the script)", c.ExitCode)
		}
	})
}

func TestIgnoreSIGTERM(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := New(WithImages(image))
		rt.Script(image, Behavior{RunForever: true, IgnoreSIGTERM: true})
		ctx := context.Background()

		id := run(t, rt, spec("u1", "stubborn"))
		start := time.Now()
		if err := rt.Stop(ctx, id, 30*time.Second); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 30*time.Second {
			t.Errorf("Stop took %v, want the 30s grace", d)
		}
		c := inspect(t, rt, id)
		if c.State != runtimeadapter.StateExited || c.ExitCode != 137 {
			t.Errorf("after Stop: %s exit %d, want exited 137", c.State, c.ExitCode)
		}

		// Zero grace kills at once.
		id = run(t, rt, spec("u1", "stubborn2"))
		if err := rt.Stop(ctx, id, 0); err != nil {
			t.Fatal(err)
		}
		if c := inspect(t, rt, id); c.ExitCode != 137 {
			t.Errorf("zero grace: exit %d, want 137", c.ExitCode)
		}
	})
}

// A container that traps SIGTERM drains for TermDelay and exits 0; one
// whose grace period is shorter is killed at the grace.
func TestTermDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := New(WithImages(image))
		rt.Script(image, Behavior{RunForever: true, TermDelay: 3 * time.Second})
		ctx := context.Background()
		for _, tc := range []struct {
			name       string
			grace      time.Duration
			took       time.Duration
			exitCode   int
			reasonWant string
		}{
			{"drains", 10 * time.Second, 3 * time.Second, 0, "Completed"},
			{"killed at grace", 2 * time.Second, 2 * time.Second, 137, "Error"},
		} {
			id := run(t, rt, spec("u1", "drainer-"+strings.ReplaceAll(tc.name, " ", "-")))
			start := time.Now()
			if err := rt.Stop(ctx, id, tc.grace); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d != tc.took {
				t.Errorf("%s: Stop took %v, want %v", tc.name, d, tc.took)
			}
			c := inspect(t, rt, id)
			if c.State != runtimeadapter.StateExited || c.ExitCode != tc.exitCode || c.Reason != tc.reasonWant {
				t.Errorf("%s: after Stop: %s exit %d %s, want exited %d %s", tc.name, c.State, c.ExitCode, c.Reason, tc.exitCode, tc.reasonWant)
			}
		}
	})
}

func TestIgnoreSIGTERMStopContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := New(WithImages(image))
		rt.Script(image, Behavior{RunForever: true, IgnoreSIGTERM: true})
		id := run(t, rt, spec("u1", "stubborn"))

		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		err := rt.Stop(ctx, id, 10*time.Second)
		wantErrIs(t, err, runtimeadapter.ErrUnavailable)
		wantErrIs(t, err, context.DeadlineExceeded)
		wantState(t, inspect(t, rt, id), runtimeadapter.StateRunning, "running")

		// The kill still comes when the grace ends, as with a real daemon.
		time.Sleep(8 * time.Second)
		synctest.Wait()
		c := inspect(t, rt, id)
		if c.State != runtimeadapter.StateExited || c.ExitCode != 137 {
			t.Fatalf("after grace: %s exit %d, want exited 137", c.State, c.ExitCode)
		}
	})
}

func TestStartError(t *testing.T) {
	rt := New(WithImages(image))
	boom := errors.New(`exec: "nope": executable file not found in $PATH`)
	rt.ScriptContainer("broken", Behavior{StartError: boom})
	ctx := context.Background()
	id, err := rt.Create(ctx, spec("u1", "broken"))
	if err != nil {
		t.Fatal(err)
	}
	wantErrIs(t, rt.Start(ctx, id), boom)
	// As Docker leaves it: created, no times, exit code 128, the message.
	c := inspect(t, rt, id)
	if c.State != runtimeadapter.StateUnknown || c.RawState != "created" || c.ExitCode != 128 || c.Error != boom.Error() ||
		c.Reason != "" || !c.StartedAt.IsZero() || !c.FinishedAt.IsZero() {
		t.Errorf("got %+v; want created, exit 128, Error %q, no reason, no times", c, boom.Error())
	}
	// Starting it again fails the same way.
	wantErrIs(t, rt.Start(ctx, id), boom)
	if c := inspect(t, rt, id); c.RawState != "created" || c.Error != boom.Error() {
		t.Errorf("after a second start: %+v", c)
	}
}

// A failed start emits no event (Docker emits neither start nor die) and
// takes Behavior.StartExitCode as the exit code.
func TestStartErrorEmitsNoEventAndTakesItsExitCode(t *testing.T) {
	rt := New(WithImages(image))
	boom := errors.New(`exec: "/nope": stat /nope: no such file or directory`)
	rt.ScriptContainer("broken", Behavior{StartError: boom, StartExitCode: 127})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, _ := rt.Events(ctx, spec("u1", "broken").Labels[runtimeadapter.LabelNode])
	id, err := rt.Create(ctx, spec("u1", "broken"))
	if err != nil {
		t.Fatal(err)
	}
	wantErrIs(t, rt.Start(ctx, id), boom)
	if c := inspect(t, rt, id); c.ExitCode != 127 {
		t.Errorf("exit code %d, want 127", c.ExitCode)
	}
	ok, err := rt.Create(ctx, spec("u1", "fine"))
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(ctx, ok); err != nil {
		t.Fatal(err)
	}
	// Events come in order: the first one is the start of the good one.
	if ev := <-events; ev.Kind != runtimeadapter.EventStart || ev.ContainerID != ok {
		t.Errorf("first event %+v, want the start of %s", ev, ok)
	}
}
