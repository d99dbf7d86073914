package images_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/images"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

var errBoom = errors.New("boom")

// clock is a settable clock for WithClock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func newManager(t *testing.T, rt *fake.Runtime, opts ...images.Option) *images.Manager {
	t.Helper()
	m := images.New(rt, opts...)
	t.Cleanup(m.Close)
	return m
}

func TestEnsurePolicy(t *testing.T) {
	const (
		latest = "app:latest"
		tagged = "app:1"
	)
	tests := []struct {
		policy     v1.PullPolicy
		ref        string
		present    bool
		pullOK     bool
		wantPulls  int
		wantReason string // "" for success
	}{
		{v1.PullAlways, tagged, true, true, 1, ""},
		{v1.PullAlways, tagged, true, false, 1, images.ReasonErrImagePull}, // present, yet the failed pull fails it
		{v1.PullAlways, tagged, false, true, 1, ""},
		{v1.PullAlways, tagged, false, false, 1, images.ReasonErrImagePull},

		{v1.PullIfNotPresent, tagged, true, true, 0, ""},
		{v1.PullIfNotPresent, tagged, true, false, 0, ""},
		{v1.PullIfNotPresent, tagged, false, true, 1, ""},
		{v1.PullIfNotPresent, tagged, false, false, 1, images.ReasonErrImagePull},

		{v1.PullNever, tagged, true, true, 0, ""},
		{v1.PullNever, tagged, true, false, 0, ""},
		{v1.PullNever, tagged, false, true, 0, images.ReasonErrImageNeverPull},
		{v1.PullNever, tagged, false, false, 0, images.ReasonErrImageNeverPull},

		// Empty policy: Always for :latest (or no tag), IfNotPresent else.
		{"", latest, true, true, 1, ""},
		{"", latest, true, false, 1, images.ReasonErrImagePull},
		{"", latest, false, true, 1, ""},
		{"", latest, false, false, 1, images.ReasonErrImagePull},
		{"", "app", true, false, 1, images.ReasonErrImagePull},
		{"", tagged, true, true, 0, ""},
		{"", tagged, true, false, 0, ""},
		{"", tagged, false, true, 1, ""},
		{"", tagged, false, false, 1, images.ReasonErrImagePull},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%s/%s/present=%v/pullOK=%v", cmp(string(tt.policy), "default"), tt.ref, tt.present, tt.pullOK)
		t.Run(name, func(t *testing.T) {
			var opts []fake.Option
			if tt.present {
				opts = append(opts, fake.WithImages(tt.ref))
			}
			if tt.pullOK {
				opts = append(opts, fake.WithPullable(tt.ref))
			}
			rt := fake.New(opts...)
			m := newManager(t, rt)
			err := m.Ensure(context.Background(), tt.ref, tt.policy)
			if got := images.Reason(err); got != tt.wantReason || (err == nil) != (tt.wantReason == "") {
				t.Fatalf("Ensure = %v (reason %q); want reason %q", err, got, tt.wantReason)
			}
			if n := rt.PullCount(tt.ref); n != tt.wantPulls {
				t.Errorf("pulls = %d; want %d", n, tt.wantPulls)
			}
			if tt.wantReason == images.ReasonErrImagePull {
				var pe *images.PullError
				if !errors.As(err, &pe) || pe.Image != tt.ref || !errors.Is(err, runtimeadapter.ErrNotFound) {
					t.Errorf("error %v: want a *PullError for %q wrapping ErrNotFound", err, tt.ref)
				}
			}
			if tt.wantReason == "" {
				if ok, _ := rt.ImagePresent(context.Background(), tt.ref); !ok {
					t.Error("image absent after a successful Ensure")
				}
			}
		})
	}
}

func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func TestEnsureInvalidName(t *testing.T) {
	rt := fake.New(fake.AutoImages(true))
	m := newManager(t, rt)
	for _, ref := range []string{"", "Bad/Name", "app:"} {
		err := m.Ensure(context.Background(), ref, v1.PullAlways)
		if !errors.Is(err, images.ErrInvalidImageName) || images.Reason(err) != images.ReasonInvalidImageName {
			t.Errorf("Ensure(%q) = %v; want ErrInvalidImageName", ref, err)
		}
	}
	if calls := rt.Calls(); len(calls) != 0 {
		t.Errorf("runtime called for invalid names: %v", calls)
	}
}

func TestEnsureInspectError(t *testing.T) {
	rt := fake.New(fake.WithImages("app:1"), fake.WithPullable("app:1"))
	rt.InjectError(fake.MethodImagePresent, runtimeadapter.ErrUnavailable, -1)
	m := newManager(t, rt)
	for _, p := range []v1.PullPolicy{v1.PullIfNotPresent, v1.PullNever} {
		err := m.Ensure(context.Background(), "app:1", p)
		if images.Reason(err) != images.ReasonImageInspectError || !errors.Is(err, runtimeadapter.ErrUnavailable) {
			t.Errorf("%s: Ensure = %v; want ImageInspectError wrapping ErrUnavailable", p, err)
		}
	}
	// Always does not inspect.
	if err := m.Ensure(context.Background(), "app:1", v1.PullAlways); err != nil {
		t.Errorf("Always: Ensure = %v", err)
	}
	if rt.PullCount("app:1") != 1 {
		t.Errorf("pulls = %d; want 1", rt.PullCount("app:1"))
	}
}

func TestEnsureUnknownPolicy(t *testing.T) {
	rt := fake.New(fake.AutoImages(true))
	m := newManager(t, rt)
	err := m.Ensure(context.Background(), "app:1", "Sometimes")
	if err == nil || !strings.Contains(err.Error(), `unknown pull policy "Sometimes"`) {
		t.Errorf("Ensure = %v; want unknown policy error", err)
	}
	if n := rt.PullCount("app:1"); n != 0 {
		t.Errorf("pulls = %d; want 0", n)
	}
}

// TestBackOffSequence checks the image pull back-off exactly: 10, 20, 40,
// 80, 160, 300, 300 s after consecutive failures; no pull while backing
// off; a success resets it.
func TestBackOffSequence(t *testing.T) {
	const ref = "app:1"
	ctx := context.Background()
	clk := newClock()
	rt := fake.New(fake.WithPullable(ref))
	rt.InjectError(fake.MethodPullImage, errBoom, -1)
	m := newManager(t, rt, images.WithClock(clk.Now))

	now := clk.Now()
	pulls := 0
	fail := func(wantDelay time.Duration) {
		t.Helper()
		clk.Set(now)
		err := m.Ensure(ctx, ref, v1.PullAlways)
		pulls++
		if !errors.Is(err, images.ErrImagePull) || !errors.Is(err, errBoom) {
			t.Fatalf("at %v: Ensure = %v; want ErrImagePull wrapping the pull's error", now, err)
		}
		if n := rt.PullCount(ref); n != pulls {
			t.Fatalf("pulls = %d; want %d", n, pulls)
		}
		until := now.Add(wantDelay)
		for _, at := range []time.Time{now, now.Add(wantDelay / 2), until.Add(-time.Nanosecond)} {
			clk.Set(at)
			err := m.Ensure(ctx, ref, v1.PullAlways)
			var be *images.BackOffError
			if !errors.As(err, &be) || images.Reason(err) != images.ReasonImagePullBackOff {
				t.Fatalf("at +%v: Ensure = %v; want a *BackOffError", at.Sub(now), err)
			}
			if !be.Until.Equal(until) || be.Image != ref || !errors.Is(be.Last, errBoom) {
				t.Fatalf("BackOffError = %+v; want Until %v (+%v), Last boom", be, until, wantDelay)
			}
		}
		if n := rt.PullCount(ref); n != pulls {
			t.Fatalf("pulled during back-off: %d pulls; want %d", n, pulls)
		}
		now = until
	}
	for _, s := range []int{10, 20, 40, 80, 160, 300, 300} {
		fail(time.Duration(s) * time.Second)
	}

	// A success resets the back-off.
	rt.ClearFaults()
	clk.Set(now)
	if err := m.Ensure(ctx, ref, v1.PullAlways); err != nil {
		t.Fatalf("Ensure after the registry recovered = %v", err)
	}
	pulls++
	rt.InjectError(fake.MethodPullImage, errBoom, -1)
	fail(10 * time.Second)
	fail(20 * time.Second)
}

// TestBackOffExpires: a back-off whose last failure is more than twice the
// cap ago starts over at the initial delay, as the kubelet's.
func TestBackOffExpires(t *testing.T) {
	const ref = "app:1"
	for _, tt := range []struct {
		name      string
		after     time.Duration // since the second failure
		wantDelay time.Duration
	}{
		{"within 2×max", 600 * time.Second, 40 * time.Second},
		{"after 2×max", 600*time.Second + time.Nanosecond, 10 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := newClock()
			start := clk.Now()
			rt := fake.New()
			m := newManager(t, rt, images.WithClock(clk.Now))
			ensure := func() error { return m.Ensure(context.Background(), ref, v1.PullAlways) }
			_ = ensure() // fails at 0 s: next pull at 10 s
			clk.Set(start.Add(10 * time.Second))
			_ = ensure() // fails at 10 s: next pull at 30 s
			clk.Set(start.Add(10*time.Second + tt.after))
			if err := ensure(); !errors.Is(err, images.ErrImagePull) {
				t.Fatalf("Ensure = %v; want ErrImagePull", err)
			}
			var be *images.BackOffError
			if err := ensure(); !errors.As(err, &be) {
				t.Fatalf("Ensure = %v; want *BackOffError", err)
			}
			if got := be.Until.Sub(clk.Now()); got != tt.wantDelay {
				t.Errorf("delay = %v; want %v", got, tt.wantDelay)
			}
			if n := rt.PullCount(ref); n != 3 {
				t.Errorf("pulls = %d; want 3", n)
			}
		})
	}
}

func TestBackOffIsPerImage(t *testing.T) {
	ctx := context.Background()
	rt := fake.New(fake.WithPullable("b:1"))
	m := newManager(t, rt)
	if err := m.Ensure(ctx, "a:1", v1.PullIfNotPresent); !errors.Is(err, images.ErrImagePull) {
		t.Fatalf("Ensure(a) = %v; want ErrImagePull", err)
	}
	if err := m.Ensure(ctx, "b:1", v1.PullIfNotPresent); err != nil {
		t.Fatalf("Ensure(b) while a backs off = %v", err)
	}
	// Another spelling of a is the same image, hence in back-off.
	if err := m.Ensure(ctx, "docker.io/library/a:1", v1.PullIfNotPresent); !errors.Is(err, images.ErrImagePullBackOff) {
		t.Fatalf("Ensure(docker.io/library/a:1) = %v; want ErrImagePullBackOff", err)
	}
}

// TestBackOffOnlyWhenPulling: a present image with IfNotPresent (or Never)
// is used during its back-off; only a pull waits.
func TestBackOffOnlyWhenPulling(t *testing.T) {
	ctx := context.Background()
	rt := fake.New()
	m := newManager(t, rt)
	if err := m.Ensure(ctx, "app:1", v1.PullAlways); !errors.Is(err, images.ErrImagePull) {
		t.Fatalf("Ensure = %v; want ErrImagePull", err)
	}
	rt.AddImage("app:1")
	for _, p := range []v1.PullPolicy{v1.PullIfNotPresent, v1.PullNever} {
		if err := m.Ensure(ctx, "app:1", p); err != nil {
			t.Errorf("%s: Ensure = %v; want nil", p, err)
		}
	}
	if err := m.Ensure(ctx, "app:1", v1.PullAlways); !errors.Is(err, images.ErrImagePullBackOff) {
		t.Errorf("Always: Ensure = %v; want ErrImagePullBackOff", err)
	}
}

func TestBackOffDisabled(t *testing.T) {
	rt := fake.New()
	m := newManager(t, rt, images.WithBackOff(0, 0))
	for range 3 {
		if err := m.Ensure(context.Background(), "app:1", v1.PullAlways); !errors.Is(err, images.ErrImagePull) {
			t.Fatalf("Ensure = %v; want ErrImagePull", err)
		}
	}
	if n := rt.PullCount("app:1"); n != 3 {
		t.Errorf("pulls = %d; want 3", n)
	}
}

func TestWithBackOff(t *testing.T) {
	clk := newClock()
	rt := fake.New()
	m := newManager(t, rt, images.WithClock(clk.Now), images.WithBackOff(time.Second, 3*time.Second))
	var delays []time.Duration
	for range 4 {
		_ = m.Ensure(context.Background(), "app:1", v1.PullAlways)
		var be *images.BackOffError
		if err := m.Ensure(context.Background(), "app:1", v1.PullAlways); !errors.As(err, &be) {
			t.Fatalf("Ensure = %v; want *BackOffError", err)
		}
		delays = append(delays, be.Until.Sub(clk.Now()))
		clk.Set(be.Until)
	}
	if want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second}; fmt.Sprint(delays) != fmt.Sprint(want) {
		t.Errorf("delays = %v; want %v", delays, want)
	}
}

// TestSharedPull: N concurrent Ensure calls for one image make one
// PullImage call and all get its result.
func TestSharedPull(t *testing.T) {
	const n = 20
	for _, tt := range []struct {
		name   string
		pullOK bool
		policy v1.PullPolicy
	}{
		{"success/IfNotPresent", true, v1.PullIfNotPresent},
		{"success/Always", true, v1.PullAlways},
		{"failure/Always", false, v1.PullAlways},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rt := fake.New()
				if tt.pullOK {
					rt.AddPullable("app:1")
				}
				rt.SetDelay(fake.MethodPullImage, time.Second)
				m := images.New(rt)
				defer m.Close()
				start := time.Now()
				errs := make([]error, n)
				var wg sync.WaitGroup
				for i := range n {
					wg.Go(func() { errs[i] = m.Ensure(context.Background(), "app:1", tt.policy) })
				}
				wg.Wait()
				if d := time.Since(start); d != time.Second {
					t.Errorf("Ensure calls took %v; want 1s (one pull)", d)
				}
				if got := rt.PullCount("app:1"); got != 1 {
					t.Errorf("PullImage calls = %d; want 1", got)
				}
				for i, err := range errs {
					if tt.pullOK && err != nil {
						t.Errorf("caller %d: %v", i, err)
					}
					if !tt.pullOK && !errors.Is(err, images.ErrImagePull) {
						t.Errorf("caller %d: %v; want ErrImagePull", i, err)
					}
				}
				if !tt.pullOK { // one failure, one back-off of 10 s from its end
					var be *images.BackOffError
					if err := m.Ensure(context.Background(), "app:1", tt.policy); !errors.As(err, &be) {
						t.Fatalf("Ensure after the shared failure = %v; want *BackOffError", err)
					}
					if want := start.Add(time.Second + 10*time.Second); !be.Until.Equal(want) {
						t.Errorf("Until = %v; want %v", be.Until, want)
					}
				}
			})
		})
	}
}

// TestHungPullDoesNotBlockOthers: while the pull of image a hangs, pulls of
// b go through at once, and callers of a can give up without ending it.
func TestHungPullDoesNotBlockOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.WithPullable("a:1", "b:1"))
		rt.Hang(fake.MethodPullImage, "a:1")
		m := images.New(rt, images.WithPullTimeout(0))
		hung := make(chan error, 1)
		go func() { hung <- m.Ensure(context.Background(), "a:1", v1.PullIfNotPresent) }()
		synctest.Wait() // the pull of a has started and hangs

		start := time.Now()
		for _, p := range []v1.PullPolicy{v1.PullIfNotPresent, v1.PullAlways} {
			if err := m.Ensure(context.Background(), "b:1", p); err != nil {
				t.Fatalf("Ensure(b, %s) = %v", p, err)
			}
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("Ensure(b) took %v while a hangs; want 0", d)
		}

		// A caller of a with a deadline gives up; the pull goes on.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := m.Ensure(ctx, "a:1", v1.PullIfNotPresent)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || images.Reason(err) != "" {
			t.Errorf("Ensure(a) with a 5s deadline = %v (reason %q); want DeadlineExceeded, no reason", err, images.Reason(err))
		}
		if d := time.Since(start); d != 5*time.Second {
			t.Errorf("gave up after %v; want 5s", d)
		}
		select {
		case err := <-hung:
			t.Fatalf("the hung pull returned: %v", err)
		default:
		}
		if n := rt.PullCount("a:1"); n != 1 {
			t.Errorf("pulls of a = %d; want 1 (the second caller joins the hung pull)", n)
		}

		m.Close() // cancels the hung pull
		if err := <-hung; !errors.Is(err, images.ErrClosed) || images.Reason(err) != "" {
			t.Errorf("hung Ensure after Close = %v; want ErrClosed", err)
		}
	})
}

// TestCallerGivesUpPullGoesOn: a caller whose context ends leaves the pull
// running; a later caller joins it instead of starting another.
func TestCallerGivesUpPullGoesOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.WithPullable("app:1"))
		rt.SetDelay(fake.MethodPullImage, time.Minute)
		m := images.New(rt)
		defer m.Close()
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.Ensure(ctx, "app:1", v1.PullIfNotPresent); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Ensure = %v; want DeadlineExceeded", err)
		}
		time.Sleep(10 * time.Second) // fake time: 20 s after start
		if err := m.Ensure(context.Background(), "app:1", v1.PullIfNotPresent); err != nil {
			t.Fatalf("second Ensure = %v", err)
		}
		if d := time.Since(start); d != time.Minute {
			t.Errorf("second Ensure returned at +%v; want +1m (the first pull's end)", d)
		}
		if n := rt.PullCount("app:1"); n != 1 {
			t.Errorf("pulls = %d; want 1", n)
		}
	})
}

// TestPullTimeout: a pull that outlasts the pull timeout fails with
// ErrImagePull and starts the back-off.
func TestPullTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.WithPullable("app:1"))
		rt.Hang(fake.MethodPullImage, "app:1")
		m := images.New(rt, images.WithPullTimeout(30*time.Second))
		defer m.Close()
		start := time.Now()
		err := m.Ensure(context.Background(), "app:1", v1.PullIfNotPresent)
		if !errors.Is(err, images.ErrImagePull) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Ensure = %v; want ErrImagePull wrapping DeadlineExceeded", err)
		}
		if d := time.Since(start); d != 30*time.Second {
			t.Errorf("failed after %v; want 30s", d)
		}
		var be *images.BackOffError
		if err := m.Ensure(context.Background(), "app:1", v1.PullIfNotPresent); !errors.As(err, &be) {
			t.Fatalf("Ensure = %v; want *BackOffError", err)
		}
		if want := start.Add(40 * time.Second); !be.Until.Equal(want) {
			t.Errorf("Until = %v; want %v", be.Until, want)
		}
	})
}

func TestClose(t *testing.T) {
	rt := fake.New(fake.AutoImages(true))
	m := images.New(rt)
	m.Close()
	m.Close() // idempotent
	if err := m.Ensure(context.Background(), "app:1", v1.PullAlways); !errors.Is(err, images.ErrClosed) {
		t.Errorf("Ensure after Close = %v; want ErrClosed", err)
	}
	if n := len(rt.Calls()); n != 0 {
		t.Errorf("runtime called %d times after Close", n)
	}
}

func TestProgress(t *testing.T) {
	rt := fake.New(fake.WithPullable("app:1"))
	var got []string
	m := newManager(t, rt, images.WithProgress(func(ref string, p runtimeadapter.PullProgress) {
		got = append(got, ref+": "+p.Status)
	}))
	if err := m.Ensure(context.Background(), "app:1", v1.PullAlways); err != nil {
		t.Fatal(err)
	}
	if want := []string{"app:1: Downloaded newer image for app:1"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("progress = %q; want %q", got, want)
	}
}

// panicky is an ImageService whose pull panics.
type panicky struct{}

func (panicky) ImagePresent(context.Context, string) (bool, error) { return false, nil }
func (panicky) PullImage(context.Context, string, func(runtimeadapter.PullProgress)) error {
	panic("registry exploded")
}

func TestPullPanicIsAnError(t *testing.T) {
	m := images.New(panicky{})
	defer m.Close()
	err := m.Ensure(context.Background(), "app:1", v1.PullAlways)
	if !errors.Is(err, images.ErrImagePull) || !strings.Contains(err.Error(), "registry exploded") {
		t.Errorf("Ensure = %v; want ErrImagePull naming the panic", err)
	}
}

// TestPullErrorUntil: a failed pull's error says when the next pull is
// allowed (the end of the back-off it started), as a later BackOffError
// does; with the back-off disabled it is zero.
func TestPullErrorUntil(t *testing.T) {
	const ref = "app:1"
	clk := newClock()
	rt := fake.New(fake.WithPullable(ref))
	rt.InjectError(fake.MethodPullImage, errBoom, -1)
	m := newManager(t, rt, images.WithClock(clk.Now))
	err := m.Ensure(context.Background(), ref, v1.PullAlways)
	var pe *images.PullError
	if !errors.As(err, &pe) || !pe.Until.Equal(clk.Now().Add(images.DefaultBackOffInitial)) {
		t.Fatalf("Ensure = %v (%+v); want a *PullError with Until +10s", err, pe)
	}
	off := newManager(t, rt, images.WithBackOff(0, 0))
	if err := off.Ensure(context.Background(), ref, v1.PullAlways); !errors.As(err, &pe) || !pe.Until.IsZero() {
		t.Fatalf("without back-off: Ensure = %v (%+v); want a *PullError with zero Until", err, pe)
	}
}

// TestEnsureNotify: the pulling callback marks exactly the attempts that
// start or join a pull: not an image already present, not one Never may
// not pull, not an attempt the back-off holds.
func TestEnsureNotify(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.WithImages("here:1"), fake.WithPullable("slow:1"))
		rt.SetDelay(fake.MethodPullImage, 10*time.Second)
		m := images.New(rt)
		defer m.Close()
		ensure := func(ref string, p v1.PullPolicy) (error, bool) {
			pulling := false
			err := m.EnsureNotify(context.Background(), ref, p, func() { pulling = true })
			return err, pulling
		}
		if err, pulling := ensure("here:1", v1.PullIfNotPresent); err != nil || pulling {
			t.Errorf("present image: %v, pulling %v; want nil, false", err, pulling)
		}
		if err, pulling := ensure("gone:1", v1.PullNever); !errors.Is(err, images.ErrImageNeverPull) || pulling {
			t.Errorf("Never: %v, pulling %v; want ErrImageNeverPull, false", err, pulling)
		}
		// Two callers of one slow pull: both are told (one starts it, one joins).
		var wg sync.WaitGroup
		var told [2]bool
		for i := range told {
			wg.Go(func() {
				var err error
				if err, told[i] = ensure("slow:1", v1.PullAlways); err != nil {
					t.Errorf("caller %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		if !told[0] || !told[1] || rt.PullCount("slow:1") != 1 {
			t.Errorf("callers told %v, %d pulls; want both told, one pull", told, rt.PullCount("slow:1"))
		}
		// A failed pull: the next attempt is held by the back-off, untold.
		if err, pulling := ensure("missing:1", v1.PullAlways); !errors.Is(err, images.ErrImagePull) || !pulling {
			t.Errorf("failed pull: %v, pulling %v; want ErrImagePull, true", err, pulling)
		}
		if err, pulling := ensure("missing:1", v1.PullAlways); !errors.Is(err, images.ErrImagePullBackOff) || pulling {
			t.Errorf("held by the back-off: %v, pulling %v; want ImagePullBackOff, false", err, pulling)
		}
	})
}

// TestInvalidNameError: the error of a reference that does not parse
// carries the parser's reason.
func TestInvalidNameError(t *testing.T) {
	_, err := images.Normalize("Bad/Name")
	var ne *images.InvalidNameError
	if !errors.As(err, &ne) || ne.Image != "Bad/Name" || ne.Err == nil || !strings.Contains(ne.Err.Error(), "must be lowercase") {
		t.Fatalf("Normalize = %v; want an *InvalidNameError saying why", err)
	}
	if want := `image "Bad/Name": invalid image name: ` + ne.Err.Error(); err.Error() != want {
		t.Errorf("error = %q; want %q", err, want)
	}
}
