package images

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// Manager makes containers' images present per their imagePullPolicy,
// shares concurrent pulls of one image and backs off after failed pulls
// (see the package doc). Create one with New; it is safe for concurrent
// use. Close cancels its pulls.
type Manager struct {
	svc  runtimeadapter.ImageService
	opts options

	base   context.Context // pulls run on it; Close cancels it
	cancel context.CancelFunc
	group  singleflight.Group // in-flight pulls, by normalised reference

	mu       sync.Mutex
	closed   bool
	backOffs map[string]*pullBackOff // by normalised reference
	pulls    sync.WaitGroup          // running pulls; Add only under mu while !closed
}

// New returns a Manager that inspects and pulls images with svc (a
// runtime that implements runtimeadapter.ImageService: the Docker adapter
// or the fake). It starts no goroutine until a pull.
func New(svc runtimeadapter.ImageService, opts ...Option) *Manager {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	base, cancel := context.WithCancel(context.Background())
	return &Manager{svc: svc, opts: o, base: base, cancel: cancel, backOffs: map[string]*pullBackOff{}}
}

// Ensure makes image ref present for a container with pull policy policy
// ("" means DefaultPolicy(ref)), pulling it when the policy asks to:
// Never pulls never, IfNotPresent when ref is absent, Always every time.
// It returns nil once the image may be used. ctx bounds the presence check
// and the wait for a pull, not the pull itself, which other callers may
// share and which goes on when ctx ends (see the package doc).
//
// Errors (Reason gives the kubelet's reason for each):
//   - ErrInvalidImageName: ref does not parse; nothing is called.
//   - ErrImageInspect: ImagePresent failed (Never and IfNotPresent only).
//   - ErrImageNeverPull: policy Never and ref absent.
//   - *BackOffError (ErrImagePullBackOff): a pull of ref failed recently
//     and the next is allowed only at its Until; nothing is called.
//   - *PullError (ErrImagePull): the pull failed (or, for callers that
//     joined it, the shared pull failed). It starts or extends the
//     back-off.
//   - ctx's error, when ctx ended while a pull ran; that is no failure.
//   - ErrClosed after Close.
//
// An unknown policy is an error (manifest validation rejects it first).
func (m *Manager) Ensure(ctx context.Context, ref string, policy v1.PullPolicy) error {
	return m.EnsureNotify(ctx, ref, policy, nil)
}

// EnsureNotify is Ensure that calls pulling, when it is not nil, once this
// caller is about to wait for a pull of ref: one it starts, or one under
// way that it joins. It is not called when no pull is needed, nor when the
// back-off holds the attempt (the kubelet's "Pulling" event marks exactly
// these attempts). pulling runs on the caller's goroutine and must not
// block.
func (m *Manager) EnsureNotify(ctx context.Context, ref string, policy v1.PullPolicy, pulling func()) error {
	key, err := Normalize(ref)
	if err != nil {
		return err
	}
	if m.isClosed() {
		return fmt.Errorf("image %q: %w", ref, ErrClosed)
	}
	if policy == "" {
		policy = DefaultPolicy(ref)
	}
	switch policy {
	case v1.PullAlways:
		// Pull whether present or not, as the kubelet does.
	case v1.PullIfNotPresent, v1.PullNever:
		present, err := m.svc.ImagePresent(ctx, ref)
		if err != nil {
			return fmt.Errorf("image %q: %w: %w", ref, ErrImageInspect, err)
		}
		if present {
			return nil
		}
		if policy == v1.PullNever {
			return fmt.Errorf("image %q: %w", ref, ErrImageNeverPull)
		}
	default:
		return fmt.Errorf("image %q: unknown pull policy %q", ref, policy)
	}
	if err := m.backOffError(key, ref); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("image %q: %w", ref, err)
	}
	if pulling != nil {
		pulling()
	}
	ch := m.group.DoChan(key, func() (any, error) { return nil, m.pull(key, ref) })
	select {
	case res := <-ch:
		return res.Err
	case <-ctx.Done():
		return fmt.Errorf("image %q: stopped waiting for its pull, which goes on: %w", ref, ctx.Err())
	}
}

// Close cancels the running pulls (their callers get an error wrapping
// ErrClosed), waits for them to return, and makes later Ensure calls fail
// with ErrClosed. It is idempotent.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.cancel()
	m.pulls.Wait()
}

func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// backOffError returns a *BackOffError while key is in back-off.
func (m *Manager) backOffError(key, ref string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.backOffErrorLocked(key, ref)
}

func (m *Manager) backOffErrorLocked(key, ref string) error {
	b := m.backOffs[key]
	if b == nil || !b.active(m.opts.now()) {
		return nil
	}
	return &BackOffError{Image: ref, Until: b.until, Last: b.last}
}

// pull is the shared pull of one image (the singleflight function). It
// checks the back-off again (a pull that failed after the caller's check
// may have started one), pulls, and records the outcome.
func (m *Manager) pull(key, ref string) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return fmt.Errorf("image %q: %w", ref, ErrClosed)
	}
	if err := m.backOffErrorLocked(key, ref); err != nil {
		m.mu.Unlock()
		return err
	}
	m.pulls.Add(1)
	m.mu.Unlock()
	defer m.pulls.Done()

	err := m.callPull(ref)

	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case err == nil:
		delete(m.backOffs, key)
		return nil
	case m.base.Err() != nil: // Close cancelled it: no failure of the image
		return fmt.Errorf("image %q: pull cancelled: %w: %w", ref, ErrClosed, err)
	}
	var until time.Time
	if m.opts.initial > 0 {
		now := m.opts.now()
		m.forgetExpiredLocked(now)
		b := m.backOffs[key]
		if b == nil {
			b = newPullBackOff(m.opts.initial, m.opts.max)
			m.backOffs[key] = b
		}
		until = b.fail(now, err)
	}
	return &PullError{Image: ref, Err: err, Until: until}
}

// callPull runs the runtime's pull on the Manager's context with the pull
// timeout. A panic in the runtime becomes an error: singleflight would
// otherwise re-panic it where nothing can recover it.
func (m *Manager) callPull(ref string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("pull panicked: %v", p)
		}
	}()
	ctx, cancel := m.base, context.CancelFunc(func() {})
	if m.opts.pullTimeout > 0 {
		ctx, cancel = context.WithTimeout(m.base, m.opts.pullTimeout)
	}
	defer cancel()
	var progress func(runtimeadapter.PullProgress)
	if f := m.opts.progress; f != nil {
		progress = func(p runtimeadapter.PullProgress) { f(ref, p) }
	}
	return m.svc.PullImage(ctx, ref, progress)
}

// forgetExpiredLocked drops the back-off records that have expired at now,
// so the map holds only images that failed in the last 2×max.
func (m *Manager) forgetExpiredLocked(now time.Time) {
	for key, b := range m.backOffs {
		if b.expired(now) {
			delete(m.backOffs, key)
		}
	}
}
