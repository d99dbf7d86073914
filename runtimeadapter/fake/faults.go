package fake

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// Method names, as in runtimeadapter.Runtime and EventSource, for the fault
// injectors and the call log.
const (
	MethodList        = "List"
	MethodInspect     = "Inspect"
	MethodEnsureImage = "EnsureImage"
	MethodCreate      = "Create"
	MethodStart       = "Start"
	MethodStop        = "Stop"
	MethodRemove      = "Remove"
	MethodEvents      = "Events"
)

var methods = map[string]bool{
	MethodList: true, MethodInspect: true, MethodEnsureImage: true, MethodCreate: true,
	MethodStart: true, MethodStop: true, MethodRemove: true, MethodEvents: true,
}

// mustMethod panics on a method name the fake does not have, so that a typo
// in a test fails loudly instead of injecting nothing.
func mustMethod(method string) {
	if !methods[method] {
		panic(fmt.Sprintf("fake: unknown method %q", method))
	}
}

// fault is an injected error for one method.
type fault struct {
	err   error
	times int  // remaining; < 0 means until cleared
	after bool // fail after the call took effect
}

// hang makes matching calls block until their context ends or the hang is
// cleared.
type hang struct {
	method, match string
	release       chan struct{}
}

func (h *hang) matches(method string, args []string) bool {
	if h.method != method {
		return false
	}
	for _, a := range args {
		if strings.Contains(a, h.match) {
			return true
		}
	}
	return false
}

// InjectError makes the next times calls of method (a Method* constant)
// fail with an error wrapping err, without taking effect; times < 0 means
// every call until cleared, times == 0 or a nil err clears the injection.
// It replaces any earlier injection for method. It panics on an unknown
// method.
func (r *Runtime) InjectError(method string, err error, times int) {
	r.inject(method, err, times, false)
}

// InjectErrorAfter is InjectError for failures that happen after the call
// took effect, as when the daemon created the container but the answer was
// lost: Create then leaves the container behind and returns the error, and
// a retry meets a name conflict.
func (r *Runtime) InjectErrorAfter(method string, err error, times int) {
	r.inject(method, err, times, true)
}

func (r *Runtime) inject(method string, err error, times int, after bool) {
	mustMethod(method)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil || times == 0 {
		delete(r.faults, method)
		return
	}
	r.faults[method] = &fault{err: err, times: times, after: after}
}

// SetDelay makes every call of method take d longer before it takes effect
// (d <= 0 clears it). If the call's context ends first, the call fails with
// an error wrapping both runtimeadapter.ErrUnavailable and the context's
// error, without taking effect. It panics on an unknown method.
func (r *Runtime) SetDelay(method string, d time.Duration) {
	mustMethod(method)
	r.mu.Lock()
	defer r.mu.Unlock()
	if d <= 0 {
		delete(r.delays, method)
		return
	}
	r.delays[method] = d
}

// Hang makes calls of method whose argument contains match block until
// their context ends; they then fail like a delayed call (see SetDelay).
// The argument is the container ID or name for container methods (either
// may match), the spec's name for Create, the image for EnsureImage, the
// node for Events and Call.Arg's rendering for List. An empty match hangs
// every call. ClearFaults (or Close) releases hung calls, which then
// proceed. Call Hang inside a synctest bubble when the hung calls run in
// it. It panics on an unknown method.
func (r *Runtime) Hang(method, match string) {
	mustMethod(method)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hangs = append(r.hangs, &hang{method: method, match: match, release: make(chan struct{})})
}

// ClearFaults removes every injected error, delay and hang, and lets hung
// calls proceed; Events streams opened afterwards flow (see
// SilenceEvents). Scripted behaviours stay.
func (r *Runtime) ClearFaults() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.faults)
	clear(r.delays)
	r.silenceNext = 0
	r.releaseHangsLocked()
}

func (r *Runtime) releaseHangsLocked() {
	for _, h := range r.hangs {
		close(h.release)
	}
	r.hangs = nil
}

// begin logs a call and applies the faults that strike before it takes
// effect: a closed runtime, a done context, a hang, a delay and an injected
// error, in that order. match holds further strings a hang may match (the
// container's name). The returned Call must be passed to finish.
func (r *Runtime) begin(ctx context.Context, call Call, match ...string) (*Call, error) {
	call.Time = time.Now()
	c := &call
	r.mu.Lock()
	r.calls = append(r.calls, c)
	if r.closed {
		r.mu.Unlock()
		return c, errClosed(call.Method)
	}
	var h *hang
	args := append([]string{call.Arg}, match...)
	for _, x := range r.hangs {
		if x.matches(call.Method, args) {
			h = x
			break
		}
	}
	d := r.delays[call.Method]
	r.mu.Unlock()

	if err := ctx.Err(); err != nil {
		return c, errContext(call.Method, err)
	}
	if h != nil {
		select {
		case <-ctx.Done():
			return c, errContext(call.Method, ctx.Err())
		case <-h.release:
		}
	}
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return c, errContext(call.Method, ctx.Err())
		case <-t.C:
		}
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return c, errClosed(call.Method)
	}
	return c, r.takeFaultLocked(call.Method, false)
}

// faultAfter returns the injected error of a call that has taken effect.
func (r *Runtime) faultAfter(method string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.takeFaultLocked(method, true)
}

func (r *Runtime) takeFaultLocked(method string, after bool) error {
	f := r.faults[method]
	if f == nil || f.after != after {
		return nil
	}
	if f.times > 0 {
		f.times--
		if f.times == 0 {
			delete(r.faults, method)
		}
	}
	return fmt.Errorf("fake %s: injected: %w", method, f.err)
}

func errContext(method string, err error) error {
	return fmt.Errorf("fake %s: %w: %w", method, runtimeadapter.ErrUnavailable, err)
}

func errClosed(method string) error {
	return fmt.Errorf("fake %s: runtime closed: %w", method, runtimeadapter.ErrUnavailable)
}
