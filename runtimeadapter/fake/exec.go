package fake

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"
	"weak"

	"github.com/actorlet/actorlet/runtimeadapter"
)

var _ runtimeadapter.Execer = (*Runtime)(nil)

// MethodExec names Exec in the call log and for the fault injectors
// (InjectError, InjectErrorAfter, SetDelay, Hang), like the Method*
// constants of runtimeadapter.Runtime's methods.
const MethodExec = "Exec"

func init() { methods[MethodExec] = true }

// ExecOutcome scripts what one command run by Exec does.
//
// The zero ExecOutcome is a command that exits 0 at once with no output: a
// passing exec probe.
type ExecOutcome struct {
	// Result is what the command yields when it finishes: its exit code and
	// output (truncated to runtimeadapter.MaxExecOutput).
	Result runtimeadapter.ExecResult
	// Err, when set, makes Exec fail with an error wrapping it (after
	// Duration) instead of returning Result, as when the runtime could not
	// run the command. Use Hang, not ErrExecTimeout, for a command that
	// outlives its timeout.
	Err error
	// Duration is how long the command runs (a timer, so a synctest bubble
	// fakes it). When it is not shorter than Exec's timeout the command
	// times out.
	Duration time.Duration
	// Hang: the command never finishes by itself. Exec returns an error
	// wrapping runtimeadapter.ErrExecTimeout when its timeout passes (or
	// ctx's error when ctx ends first; with no timeout it waits for ctx).
	Hang bool
}

// ExecCall is one logged Exec call.
type ExecCall struct {
	// ContainerID is the ID the call resolved to ("" if none).
	ContainerID string
	// Container is the container's name in its pod (the
	// runtimeadapter.LabelContainerName label, else its runtime name).
	Container string
	Cmd       []string
	Timeout   time.Duration
	// Time is when the command started (time.Now).
	Time time.Time
	// Done is false while the call runs.
	Done   bool
	Result runtimeadapter.ExecResult
	Err    error
}

// execState is a Runtime's exec bookkeeping. It lives beside the Runtime
// (see states) and must not refer to it, so that the Runtime can be
// collected.
type execState struct {
	mu       sync.Mutex
	scripts  map[string]func(cmd []string) ExecOutcome // by container name; "" for any
	inFlight map[string]int
	maxIn    map[string]int
	calls    []*ExecCall
}

// states maps each Runtime (weakly, so an unused Runtime is still
// collected, and its entry dropped) to its exec bookkeeping.
var states sync.Map // weak.Pointer[Runtime] → *execState

// exec returns r's exec bookkeeping, creating it on first use.
func (r *Runtime) exec() *execState {
	key := weak.Make(r)
	if s, ok := states.Load(key); ok {
		return s.(*execState)
	}
	s, loaded := states.LoadOrStore(key, &execState{
		scripts:  map[string]func([]string) ExecOutcome{},
		inFlight: map[string]int{},
		maxIn:    map[string]int{},
	})
	if !loaded {
		runtime.AddCleanup(r, func(k weak.Pointer[Runtime]) { states.Delete(k) }, key)
	}
	return s.(*execState)
}

// ScriptExec makes Exec in containers named containerName in their pod
// (the runtimeadapter.LabelContainerName label; the runtime name for a
// container without it) run f to decide what each command does. An empty
// containerName scripts every container that has no script of its own; a
// nil f removes the script. f runs outside the Runtime's locks but must
// not block. Containers without a script run every command successfully
// (exit 0, no output).
func (r *Runtime) ScriptExec(containerName string, f func(cmd []string) ExecOutcome) {
	s := r.exec()
	s.mu.Lock()
	defer s.mu.Unlock()
	if f == nil {
		delete(s.scripts, containerName)
		return
	}
	s.scripts[containerName] = f
}

// SetExecResult makes every command in containerName finish at once with
// res, or fail with an error wrapping err when err is not nil. See
// ScriptExec for the name.
func (r *Runtime) SetExecResult(containerName string, res runtimeadapter.ExecResult, err error) {
	r.ScriptExec(containerName, func([]string) ExecOutcome { return ExecOutcome{Result: res, Err: err} })
}

// SetExecHang makes every command in containerName hang: Exec returns
// ErrExecTimeout at its timeout. See ScriptExec for the name.
func (r *Runtime) SetExecHang(containerName string) {
	r.ScriptExec(containerName, func([]string) ExecOutcome { return ExecOutcome{Hang: true} })
}

// ExecInFlight returns how many Exec calls in containers named
// containerName (see ScriptExec) are running now.
func (r *Runtime) ExecInFlight(containerName string) int {
	s := r.exec()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight[containerName]
}

// ExecMaxInFlight returns the most Exec calls in containers named
// containerName that ever ran at once: 1 means execs never piled up.
func (r *Runtime) ExecMaxInFlight(containerName string) int {
	s := r.exec()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxIn[containerName]
}

// ExecCalls returns a copy of the log of Exec calls that reached a running
// container, in the order they started. (Every Exec call, including failed
// lookups, is also in Calls under MethodExec.)
func (r *Runtime) ExecCalls() []ExecCall {
	s := r.exec()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ExecCall, len(s.calls))
	for i, c := range s.calls {
		out[i] = *c
		out[i].Cmd = slices.Clone(c.Cmd)
		out[i].Result.Output = slices.Clone(c.Result.Output)
	}
	return out
}

// Exec runs cmd in the running container id (ID, name or unique ID
// prefix) as scripted with ScriptExec and returns what the script says
// (exit 0 and no output when unscripted). It implements
// runtimeadapter.Execer:
//   - a command that outlives timeout (ExecOutcome.Hang, or a Duration not
//     shorter than timeout) makes Exec return, at the timeout, an error
//     wrapping runtimeadapter.ErrExecTimeout; the command then counts as
//     killed (it leaves ExecInFlight);
//   - ctx ending first yields an error wrapping ctx's error;
//   - the container stopping while the command runs ends it with exit
//     code 137, as the kill of its container does in Docker.
//
// Errors: missing container → wrapping runtimeadapter.ErrNotFound; not
// running → wrapping runtimeadapter.ErrNotRunning; empty cmd → an error;
// and the faults injected for MethodExec.
func (r *Runtime) Exec(ctx context.Context, id string, cmd []string, timeout time.Duration) (_ runtimeadapter.ExecResult, err error) {
	failed := runtimeadapter.ExecResult{ExitCode: -1}
	call, err := r.begin(ctx, Call{Method: MethodExec, Arg: id}, r.nameOf(id))
	defer func() { r.finish(call, err) }()
	if err != nil {
		return failed, err
	}
	if len(cmd) == 0 {
		return failed, fmt.Errorf("fake Exec %s: empty command", id)
	}

	r.mu.Lock()
	c := r.lookupLocked(id)
	var (
		containerID, name, raw string
		running                bool
		exited                 <-chan struct{}
	)
	if c != nil {
		containerID, name, raw = c.c.ID, c.c.Labels[runtimeadapter.LabelContainerName], c.c.RawState
		if name == "" {
			name = c.c.Name
		}
		running, exited = c.running(), c.exited
	}
	r.mu.Unlock()
	switch {
	case c == nil:
		return failed, errNotFound(MethodExec, id)
	case !running:
		return failed, fmt.Errorf("fake Exec %s: container is %s: %w", id, raw, runtimeadapter.ErrNotRunning)
	}

	s := r.exec()
	log := &ExecCall{ContainerID: containerID, Container: name, Cmd: slices.Clone(cmd), Timeout: timeout, Time: time.Now()}
	script := s.start(name, log)
	out := ExecOutcome{}
	if script != nil {
		out = script(slices.Clone(cmd))
	}
	res, err := runScripted(ctx, out, timeout, exited)
	if err != nil {
		err = fmt.Errorf("fake Exec %q in %s: %w", cmd, id, err)
	} else if err = r.faultAfter(MethodExec); err != nil {
		res = failed
	}
	s.end(name, log, runtimeadapter.ExecResult{ExitCode: res.ExitCode, Output: slices.Clone(res.Output)}, err)
	return res, err
}

// runScripted waits for a scripted command to finish, time out, be cancelled or
// lose its container.
func runScripted(ctx context.Context, out ExecOutcome, timeout time.Duration, exited <-chan struct{}) (runtimeadapter.ExecResult, error) {
	failed := runtimeadapter.ExecResult{ExitCode: -1}
	var finished, timedOut <-chan time.Time
	if !out.Hang && (timeout <= 0 || out.Duration < timeout) {
		t := time.NewTimer(out.Duration)
		defer t.Stop()
		finished = t.C
	}
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timedOut = t.C
	}
	select {
	case <-finished:
		if out.Err != nil {
			return failed, out.Err
		}
		res := out.Result
		res.Output = slices.Clone(res.Output[:min(len(res.Output), runtimeadapter.MaxExecOutput)])
		return res, nil
	case <-timedOut:
		return failed, fmt.Errorf("%w after %v", runtimeadapter.ErrExecTimeout, timeout)
	case <-exited:
		return runtimeadapter.ExecResult{ExitCode: exitSIGKILL}, nil
	case <-ctx.Done():
		return failed, ctx.Err()
	}
}

// start logs an exec and counts it in flight; it returns the script that
// decides the command's outcome (nil for the default).
func (s *execState) start(name string, log *ExecCall) func([]string) ExecOutcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, log)
	s.inFlight[name]++
	s.maxIn[name] = max(s.maxIn[name], s.inFlight[name])
	if f, ok := s.scripts[name]; ok {
		return f
	}
	return s.scripts[""]
}

// end records an exec's outcome and takes it out of flight.
func (s *execState) end(name string, log *ExecCall, res runtimeadapter.ExecResult, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight[name]--
	log.Done, log.Result, log.Err = true, res, err
}
