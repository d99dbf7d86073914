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

var errBoom = errors.New("boom")

func TestInjectErrorTimes(t *testing.T) {
	ctx := context.Background()
	rt := New(WithImages(image))
	rt.InjectError(MethodCreate, errBoom, 2)
	for i := range 2 {
		_, err := rt.Create(ctx, spec("u1", "web"))
		wantErrIs(t, err, errBoom)
		if !strings.Contains(err.Error(), "Create") {
			t.Errorf("error %q does not name the method", err)
		}
		if n := len(rt.Containers()); n != 0 {
			t.Fatalf("failed Create %d took effect", i)
		}
	}
	if _, err := rt.Create(ctx, spec("u1", "web")); err != nil {
		t.Fatalf("third Create: %v", err)
	}
}

func TestInjectErrorUntilCleared(t *testing.T) {
	ctx := context.Background()
	rt := New(WithImages(image))
	rt.InjectError(MethodList, runtimeadapter.ErrUnavailable, -1)
	for range 5 {
		_, err := rt.List(ctx, runtimeadapter.ListOptions{Node: node})
		wantErrIs(t, err, runtimeadapter.ErrUnavailable)
	}
	// Other methods are unaffected.
	if err := rt.EnsureImage(ctx, image); err != nil {
		t.Fatal(err)
	}
	rt.ClearFaults()
	if _, err := rt.List(ctx, runtimeadapter.ListOptions{Node: node}); err != nil {
		t.Fatalf("after ClearFaults: %v", err)
	}

	rt.InjectError(MethodList, errBoom, -1)
	rt.InjectError(MethodList, errBoom, 0) // clears
	if _, err := rt.List(ctx, runtimeadapter.ListOptions{Node: node}); err != nil {
		t.Fatalf("after times=0: %v", err)
	}
	rt.InjectError(MethodList, errBoom, -1)
	rt.InjectError(MethodList, nil, 3) // clears too
	if _, err := rt.List(ctx, runtimeadapter.ListOptions{Node: node}); err != nil {
		t.Fatalf("after nil error: %v", err)
	}
}

func TestInjectErrorEveryMethod(t *testing.T) {
	ctx := context.Background()
	rt := New(WithImages(image))
	id := run(t, rt, spec("u1", "web"))
	calls := map[string]func() error{
		MethodList:        func() error { _, err := rt.List(ctx, runtimeadapter.ListOptions{Node: node}); return err },
		MethodInspect:     func() error { _, err := rt.Inspect(ctx, id); return err },
		MethodEnsureImage: func() error { return rt.EnsureImage(ctx, image) },
		MethodCreate:      func() error { _, err := rt.Create(ctx, spec("u2", "web")); return err },
		MethodStart:       func() error { return rt.Start(ctx, id) },
		MethodStop:        func() error { return rt.Stop(ctx, id, time.Second) },
		MethodRemove:      func() error { return rt.Remove(ctx, id) },
		MethodEvents: func() error {
			evs, errs := rt.Events(ctx, node)
			if _, open := <-evs; open {
				t.Error("failed Events stream delivered an event")
			}
			return <-errs
		},
	}
	for method, call := range calls {
		rt.InjectError(method, errBoom, 1)
		wantErrIs(t, call(), errBoom)
	}
	if c := inspect(t, rt, id); c.State != runtimeadapter.StateRunning {
		t.Errorf("failed Stop/Remove took effect: %s", c.State)
	}
}

// The daemon created the container but the answer was lost: the retry must
// meet a name conflict naming the container to adopt.
func TestInjectErrorAfterCreate(t *testing.T) {
	ctx := context.Background()
	rt := New(WithImages(image))
	rt.InjectErrorAfter(MethodCreate, runtimeadapter.ErrUnavailable, 1)
	_, err := rt.Create(ctx, spec("u1", "web"))
	wantErrIs(t, err, runtimeadapter.ErrUnavailable)
	cs := rt.Containers()
	if len(cs) != 1 {
		t.Fatalf("%d containers, want the one created before the error", len(cs))
	}
	_, err = rt.Create(ctx, spec("u1", "web"))
	var nc *runtimeadapter.NameConflictError
	if !errors.As(err, &nc) || nc.ID != cs[0].ID {
		t.Fatalf("retry: %v, want a name conflict with %s", err, cs[0].ID)
	}
}

func TestInjectErrorAfterStop(t *testing.T) {
	ctx := context.Background()
	rt := New(WithImages(image))
	id := run(t, rt, spec("u1", "web"))
	rt.InjectErrorAfter(MethodStop, errBoom, 1)
	wantErrIs(t, rt.Stop(ctx, id, time.Second), errBoom)
	if c := inspect(t, rt, id); c.State != runtimeadapter.StateExited {
		t.Fatalf("Stop with an after-error did not take effect: %s", c.State)
	}
}

func TestUnknownMethodPanics(t *testing.T) {
	rt := New()
	for name, f := range map[string]func(){
		"InjectError":      func() { rt.InjectError("CreateContainer", errBoom, 1) },
		"InjectErrorAfter": func() { rt.InjectErrorAfter("list", errBoom, 1) },
		"SetDelay":         func() { rt.SetDelay("Pull", time.Second) },
		"Hang":             func() { rt.Hang("Kill", "") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s with an unknown method did not panic", name)
				}
			}()
			f()
		}()
	}
}

func TestSetDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := New(WithImages(image))
		rt.SetDelay(MethodCreate, 3*time.Second)

		start := time.Now()
		if _, err := rt.Create(context.Background(), spec("u1", "a")); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 3*time.Second {
			t.Errorf("Create took %v, want 3s", d)
		}

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start = time.Now()
		_, err := rt.Create(ctx, spec("u1", "b"))
		wantErrIs(t, err, runtimeadapter.ErrUnavailable)
		wantErrIs(t, err, context.DeadlineExceeded)
		if d := time.Since(start); d != time.Second {
			t.Errorf("timed-out Create returned after %v, want 1s", d)
		}
		if n := len(rt.Containers()); n != 1 {
			t.Errorf("%d containers: the timed-out Create took effect", n)
		}

		rt.SetDelay(MethodCreate, 0)
		start = time.Now()
		if _, err := rt.Create(context.Background(), spec("u1", "c")); err != nil || time.Since(start) != 0 {
			t.Errorf("after clearing the delay: %v after %v", err, time.Since(start))
		}
	})
}

func TestCanceledContext(t *testing.T) {
	rt := New(WithImages(image))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := rt.Create(ctx, spec("u1", "web"))
	wantErrIs(t, err, runtimeadapter.ErrUnavailable)
	wantErrIs(t, err, context.Canceled)
}

func TestHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := New(WithImages(image))
		a := run(t, rt, spec("u1", "web"))
		b := run(t, rt, spec("u2", "web"))
		rt.Hang(MethodStop, "pod-u1") // matches a's name, not its ID

		// Other containers are unaffected.
		if err := rt.Stop(context.Background(), b, time.Second); err != nil {
			t.Fatal(err)
		}

		// A hung call ends with its context, without effect.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		start := time.Now()
		err := rt.Stop(ctx, a, time.Second)
		cancel()
		wantErrIs(t, err, runtimeadapter.ErrUnavailable)
		wantErrIs(t, err, context.DeadlineExceeded)
		if d := time.Since(start); d != time.Minute {
			t.Errorf("hung Stop returned after %v, want 1m", d)
		}
		wantState(t, inspect(t, rt, a), runtimeadapter.StateRunning, "running")

		// ClearFaults lets a hung call proceed.
		done := make(chan error)
		go func() { done <- rt.Stop(context.Background(), a, time.Second) }()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Stop did not hang: %v", err)
		default:
		}
		rt.ClearFaults()
		if err := <-done; err != nil {
			t.Fatalf("released Stop: %v", err)
		}
		wantState(t, inspect(t, rt, a), runtimeadapter.StateExited, "exited")
	})
}

func TestHangEmptyMatchesAll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := New()
		rt.Hang(MethodList, "")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := rt.List(ctx, runtimeadapter.ListOptions{Node: node})
		wantErrIs(t, err, runtimeadapter.ErrUnavailable)
	})
}

func TestClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := New(WithImages(image))
		rt.Script(image, Behavior{ExitAfter: time.Second})
		id := run(t, rt, spec("u1", "web"))
		rt.Hang(MethodInspect, "")
		hung := make(chan error)
		go func() { _, err := rt.Inspect(context.Background(), id); hung <- err }()
		synctest.Wait()

		rt.Close()
		rt.Close() // idempotent
		wantErrIs(t, <-hung, runtimeadapter.ErrUnavailable)
		_, err := rt.List(context.Background(), runtimeadapter.ListOptions{Node: node})
		wantErrIs(t, err, runtimeadapter.ErrUnavailable)

		// Timers are stopped: the container keeps its state.
		time.Sleep(time.Hour)
		synctest.Wait()
		if cs := rt.Containers(); cs[0].State != runtimeadapter.StateRunning {
			t.Errorf("container changed after Close: %s", cs[0].State)
		}
	})
}
