package fake

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

func TestImagePresent(t *testing.T) {
	ctx := context.Background()
	rt := New(WithImages("busybox"))
	for ref, want := range map[string]bool{"busybox": true, "busybox:latest": true, "busybox:1": false, "nginx": false} {
		got, err := rt.ImagePresent(ctx, ref)
		if err != nil || got != want {
			t.Errorf("ImagePresent(%q) = %v, %v; want %v, nil", ref, got, err, want)
		}
	}
	rt.InjectError(MethodImagePresent, runtimeadapter.ErrUnavailable, 1)
	if _, err := rt.ImagePresent(ctx, "busybox"); !errors.Is(err, runtimeadapter.ErrUnavailable) {
		t.Errorf("ImagePresent with injected error = %v; want ErrUnavailable", err)
	}
	if n := rt.CallCount(MethodImagePresent); n != 5 {
		t.Errorf("CallCount(ImagePresent) = %d; want 5", n)
	}
}

func TestPullImage(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		opts     []Option
		ref      string
		wantErr  error
		progress int
	}{
		{name: "not pullable", ref: "nginx:1", wantErr: runtimeadapter.ErrNotFound},
		{name: "pullable", opts: []Option{WithPullable("nginx:1")}, ref: "nginx:1", progress: 1},
		{name: "pullable without tag", opts: []Option{WithPullable("nginx")}, ref: "nginx:latest", progress: 1},
		{name: "other tag", opts: []Option{WithPullable("nginx:1")}, ref: "nginx:2", wantErr: runtimeadapter.ErrNotFound},
		{name: "AutoImages", opts: []Option{AutoImages(true)}, ref: "anything:7", progress: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := New(tt.opts...)
			var msgs []runtimeadapter.PullProgress
			err := rt.PullImage(ctx, tt.ref, func(p runtimeadapter.PullProgress) { msgs = append(msgs, p) })
			if !errors.Is(err, tt.wantErr) || (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("PullImage(%q) = %v; want %v", tt.ref, err, tt.wantErr)
			}
			present, _ := rt.ImagePresent(ctx, tt.ref)
			if present != (tt.wantErr == nil) {
				t.Errorf("present after pull = %v; want %v", present, tt.wantErr == nil)
			}
			if len(msgs) != tt.progress {
				t.Errorf("progress messages = %v; want %d", msgs, tt.progress)
			}
			if n := rt.PullCount(tt.ref); n != 1 {
				t.Errorf("PullCount = %d; want 1", n)
			}
		})
	}
}

func TestPullImageNilProgressAndCount(t *testing.T) {
	ctx := context.Background()
	rt := New()
	rt.AddPullable("busybox")
	for range 3 {
		if err := rt.PullImage(ctx, "busybox", nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := rt.PullImage(ctx, "other", nil); err == nil {
		t.Fatal("pull of a non-pullable image succeeded")
	}
	if got := rt.PullCount("busybox:latest"); got != 3 {
		t.Errorf("PullCount(busybox:latest) = %d; want 3", got)
	}
	if got := rt.PullCount("other"); got != 1 {
		t.Errorf("PullCount(other) = %d; want 1", got)
	}
	rt.ResetCalls()
	if got := rt.PullCount("busybox"); got != 0 {
		t.Errorf("PullCount after ResetCalls = %d; want 0", got)
	}
}

func TestPullImageFaults(t *testing.T) {
	ctx := context.Background()
	t.Run("InjectError", func(t *testing.T) {
		rt := New(WithPullable("busybox"))
		rt.InjectError(MethodPullImage, errBoom, 1)
		if err := rt.PullImage(ctx, "busybox", nil); !errors.Is(err, errBoom) {
			t.Fatalf("PullImage = %v; want injected error", err)
		}
		if ok, _ := rt.ImagePresent(ctx, "busybox"); ok {
			t.Error("a failed pull made the image present")
		}
		if err := rt.PullImage(ctx, "busybox", nil); err != nil {
			t.Fatalf("second PullImage = %v", err)
		}
	})
	t.Run("InjectErrorAfter", func(t *testing.T) {
		rt := New(WithPullable("busybox"))
		rt.InjectErrorAfter(MethodPullImage, errBoom, 1)
		if err := rt.PullImage(ctx, "busybox", nil); !errors.Is(err, errBoom) {
			t.Fatalf("PullImage = %v; want injected error", err)
		}
		if ok, _ := rt.ImagePresent(ctx, "busybox"); !ok {
			t.Error("the pull did not take effect")
		}
	})
	t.Run("SetDelay", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rt := New(WithPullable("busybox"))
			rt.SetDelay(MethodPullImage, time.Minute)
			start := time.Now()
			if err := rt.PullImage(ctx, "busybox", nil); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d != time.Minute {
				t.Errorf("pull took %v; want 1m", d)
			}
		})
	})
	t.Run("Hang", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rt := New(WithPullable("a", "b"))
			rt.Hang(MethodPullImage, "a")
			cctx, cancel := context.WithTimeout(ctx, time.Hour)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- rt.PullImage(cctx, "a", nil) }()
			if err := rt.PullImage(ctx, "b", nil); err != nil {
				t.Fatalf("pull of b while a hangs: %v", err)
			}
			synctest.Wait()
			select {
			case err := <-done:
				t.Fatalf("hung pull returned %v", err)
			default:
			}
			err := <-done // the context's deadline releases it
			if !errors.Is(err, runtimeadapter.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("hung pull = %v; want ErrUnavailable and DeadlineExceeded", err)
			}
			if ok, _ := rt.ImagePresent(ctx, "a"); ok {
				t.Error("a hung pull made the image present")
			}
		})
	})
	t.Run("Closed", func(t *testing.T) {
		rt := New(WithPullable("busybox"))
		rt.Close()
		if err := rt.PullImage(ctx, "busybox", nil); !errors.Is(err, runtimeadapter.ErrUnavailable) {
			t.Errorf("PullImage after Close = %v; want ErrUnavailable", err)
		}
		if _, err := rt.ImagePresent(ctx, "busybox"); !errors.Is(err, runtimeadapter.ErrUnavailable) {
			t.Errorf("ImagePresent after Close = %v; want ErrUnavailable", err)
		}
	})
}

func TestPullableIsPerRuntime(t *testing.T) {
	a, b := New(WithPullable("busybox")), New()
	if err := b.PullImage(context.Background(), "busybox", nil); !errors.Is(err, runtimeadapter.ErrNotFound) {
		t.Errorf("pull on another runtime = %v; want ErrNotFound", err)
	}
	if err := a.PullImage(context.Background(), "busybox", nil); err != nil {
		t.Errorf("pull = %v", err)
	}
}
