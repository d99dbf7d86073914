package fake

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

func TestExecDefaultAndLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		rt := New(WithImages(image))
		id := run(t, rt, spec("u1", "web"))
		start := time.Now()

		res, err := rt.Exec(ctx, id, []string{"cat", "/ready"}, time.Second)
		if err != nil || res.ExitCode != 0 || len(res.Output) != 0 {
			t.Fatalf("unscripted Exec = %+v, %v; want exit 0, no output", res, err)
		}
		if time.Since(start) != 0 {
			t.Errorf("unscripted Exec took %v", time.Since(start))
		}
		if n := rt.CallCount(MethodExec); n != 1 {
			t.Errorf("CallCount(Exec) = %d, want 1", n)
		}
		calls := rt.ExecCalls()
		want := ExecCall{ContainerID: id, Container: "web", Cmd: []string{"cat", "/ready"}, Timeout: time.Second, Time: start, Done: true, Result: res}
		if len(calls) != 1 || !equalCall(calls[0], want) {
			t.Fatalf("ExecCalls() = %+v, want [%+v]", calls, want)
		}
	})
}

func equalCall(a, b ExecCall) bool {
	return a.ContainerID == b.ContainerID && a.Container == b.Container && slices.Equal(a.Cmd, b.Cmd) &&
		a.Timeout == b.Timeout && a.Time.Equal(b.Time) && a.Done == b.Done &&
		a.Result.ExitCode == b.Result.ExitCode && bytes.Equal(a.Result.Output, b.Result.Output) && a.Err == b.Err
}

func TestExecScripted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		rt := New(WithImages(image))
		web := run(t, rt, spec("u1", "web"))
		db := run(t, rt, spec("u1", "db"))
		other := run(t, rt, spec("u2", "cache"))
		boom := errors.New("boom")

		rt.SetExecResult("web", runtimeadapter.ExecResult{ExitCode: 1, Output: []byte("not ready")}, nil)
		rt.SetExecResult("db", runtimeadapter.ExecResult{}, boom)
		rt.ScriptExec("", func(cmd []string) ExecOutcome { // every other container
			return ExecOutcome{Result: runtimeadapter.ExecResult{ExitCode: len(cmd), Output: []byte(strings.Join(cmd, " "))}}
		})

		res, err := rt.Exec(ctx, web, []string{"probe"}, time.Second)
		if err != nil || res.ExitCode != 1 || string(res.Output) != "not ready" {
			t.Errorf("web: %+v, %v", res, err)
		}
		res, err = rt.Exec(ctx, db, []string{"probe"}, time.Second)
		if !errors.Is(err, boom) || res.ExitCode != -1 {
			t.Errorf("db: %+v, %v; want exit -1 and an error wrapping boom", res, err)
		}
		res, err = rt.Exec(ctx, other, []string{"a", "b"}, time.Second)
		if err != nil || res.ExitCode != 2 || string(res.Output) != "a b" {
			t.Errorf("default script: %+v, %v", res, err)
		}

		rt.ScriptExec("web", nil) // back to the "" script
		if res, _ := rt.Exec(ctx, web, []string{"x"}, time.Second); res.ExitCode != 1 || string(res.Output) != "x" {
			t.Errorf("web after its script was removed: %+v", res)
		}

		rt.SetExecResult("web", runtimeadapter.ExecResult{Output: bytes.Repeat([]byte("y"), runtimeadapter.MaxExecOutput+5)}, nil)
		if res, _ := rt.Exec(ctx, web, []string{"x"}, time.Second); len(res.Output) != runtimeadapter.MaxExecOutput {
			t.Errorf("output of %d bytes, want it capped at %d", len(res.Output), runtimeadapter.MaxExecOutput)
		}
	})
}

func TestExecTiming(t *testing.T) {
	tests := []struct {
		name     string
		outcome  ExecOutcome
		timeout  time.Duration
		wantTook time.Duration
		wantErr  error // nil: success
	}{
		{"finishes in time", ExecOutcome{Duration: 300 * time.Millisecond}, time.Second, 300 * time.Millisecond, nil},
		{"no timeout", ExecOutcome{Duration: time.Hour}, 0, time.Hour, nil},
		{"too slow", ExecOutcome{Duration: 2 * time.Second}, time.Second, time.Second, runtimeadapter.ErrExecTimeout},
		{"exactly the timeout", ExecOutcome{Duration: time.Second}, time.Second, time.Second, runtimeadapter.ErrExecTimeout},
		{"hang", ExecOutcome{Hang: true}, 3 * time.Second, 3 * time.Second, runtimeadapter.ErrExecTimeout},
		{"slow error", ExecOutcome{Duration: 100 * time.Millisecond, Err: runtimeadapter.ErrUnavailable}, time.Second, 100 * time.Millisecond, runtimeadapter.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rt := New(WithImages(image))
				id := run(t, rt, spec("u1", "web"))
				rt.ScriptExec("web", func([]string) ExecOutcome { return tt.outcome })

				start := time.Now()
				done := make(chan error, 1)
				go func() {
					_, err := rt.Exec(context.Background(), id, []string{"probe"}, tt.timeout)
					done <- err
				}()
				synctest.Wait()
				if n := rt.ExecInFlight("web"); n != 1 {
					t.Errorf("ExecInFlight while running = %d, want 1", n)
				}
				err := <-done
				if took := time.Since(start); took != tt.wantTook {
					t.Errorf("Exec took %v, want %v", took, tt.wantTook)
				}
				if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Errorf("Exec error %v, want %v", err, tt.wantErr)
				}
				if n := rt.ExecInFlight("web"); n != 0 {
					t.Errorf("ExecInFlight after = %d, want 0", n)
				}
				if calls := rt.ExecCalls(); len(calls) != 1 || !calls[0].Done || calls[0].Err != err {
					t.Errorf("ExecCalls() = %+v", calls)
				}
			})
		})
	}
}

func TestExecInFlightPileUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := New(WithImages(image))
		id := run(t, rt, spec("u1", "web"))
		rt.SetExecHang("web")
		for range 3 {
			go func() { _, _ = rt.Exec(context.Background(), id, []string{"probe"}, 10*time.Second) }()
			time.Sleep(time.Second)
		}
		if got := rt.ExecInFlight("web"); got != 3 {
			t.Errorf("ExecInFlight = %d, want 3", got)
		}
		time.Sleep(20 * time.Second)
		if got, maxIn := rt.ExecInFlight("web"), rt.ExecMaxInFlight("web"); got != 0 || maxIn != 3 {
			t.Errorf("after the timeouts: ExecInFlight = %d, ExecMaxInFlight = %d; want 0, 3", got, maxIn)
		}
		if got := rt.ExecMaxInFlight("db"); got != 0 {
			t.Errorf("ExecMaxInFlight(db) = %d, want 0", got)
		}
	})
}

func TestExecEndsEarly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := New(WithImages(image))
		id := run(t, rt, spec("u1", "web"))
		rt.SetExecHang("web")

		// ctx cancelled while the command hangs.
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		_, err := rt.Exec(ctx, id, []string{"probe"}, time.Minute)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled: %v, want context.Canceled", err)
		}

		// The container stops while the command hangs.
		time.AfterFunc(time.Second, func() { _ = rt.Stop(context.Background(), id, 0) })
		res, err := rt.Exec(context.Background(), id, []string{"probe"}, time.Minute)
		if err != nil || res.ExitCode != 137 {
			t.Errorf("container stopped: %+v, %v; want exit 137", res, err)
		}
		if rt.ExecInFlight("web") != 0 {
			t.Error("execs left in flight")
		}
	})
}

func TestExecErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		rt := New(WithImages(image))
		probe := []string{"probe"}

		_, err := rt.Exec(ctx, "missing", probe, time.Second)
		wantErrIs(t, err, runtimeadapter.ErrNotFound)

		created, err := rt.Create(ctx, spec("u1", "created"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = rt.Exec(ctx, created, probe, time.Second)
		wantErrIs(t, err, runtimeadapter.ErrNotRunning)

		id := run(t, rt, spec("u1", "web"))
		if _, err := rt.Exec(ctx, id, nil, time.Second); err == nil {
			t.Error("empty command: no error")
		}

		rt.InjectError(MethodExec, runtimeadapter.ErrUnavailable, 1)
		_, err = rt.Exec(ctx, id, probe, time.Second)
		wantErrIs(t, err, runtimeadapter.ErrUnavailable)
		if calls := rt.ExecCalls(); len(calls) != 0 {
			t.Errorf("failed calls reached the container: %+v", calls)
		}

		rt.InjectErrorAfter(MethodExec, runtimeadapter.ErrUnavailable, 1)
		res, err := rt.Exec(ctx, id, probe, time.Second)
		wantErrIs(t, err, runtimeadapter.ErrUnavailable)
		if res.ExitCode != -1 || len(rt.ExecCalls()) != 1 {
			t.Errorf("InjectErrorAfter: %+v, %d exec calls", res, len(rt.ExecCalls()))
		}

		rt.Hang(MethodExec, "web") // by container name
		hctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		_, err = rt.Exec(hctx, id, probe, time.Second)
		wantErrIs(t, err, runtimeadapter.ErrUnavailable)
		wantErrIs(t, err, context.DeadlineExceeded)

		if err := rt.Stop(ctx, id, 0); err != nil {
			t.Fatal(err)
		}
		rt.ClearFaults()
		_, err = rt.Exec(ctx, id, probe, time.Second)
		wantErrIs(t, err, runtimeadapter.ErrNotRunning)
		if n := rt.CallCount(MethodExec); n != 7 {
			t.Errorf("CallCount(Exec) = %d, want 7", n)
		}
	})
}
