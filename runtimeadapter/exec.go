package runtimeadapter

import (
	"context"
	"errors"
	"io"
	"time"
)

// MaxExecOutput is how much of a command's output (stdout and stderr
// together) an ExecResult keeps: 10 KiB, as the kubelet keeps of a probe's
// output. Adapters read and discard the rest, so a chatty command never
// blocks on a full pipe.
const MaxExecOutput = 10 << 10

// Errors of Execer.Exec, wrapped with %w and naming the container.
var (
	// ErrExecTimeout: the command did not finish within its timeout. The
	// adapter tried to kill it; see Execer for when it cannot.
	ErrExecTimeout = errors.New("exec timed out")
	// ErrNotRunning: the container exists but does not run (created,
	// exited, paused or restarting), so nothing can be run in it.
	ErrNotRunning = errors.New("container not running")
)

// ExecResult is the outcome of a command run in a container.
type ExecResult struct {
	// ExitCode is the command's exit status. It is -1 when the command did
	// not finish (a timeout or another error).
	ExitCode int
	// Output is the command's stdout and stderr interleaved in the order
	// they were read, truncated to MaxExecOutput bytes.
	Output []byte
}

// Execer is implemented by runtimes that can run a command in a running
// container (exec probes, exec lifecycle hooks). It is optional: callers
// type-assert a Runtime to it.
type Execer interface {
	// Exec runs cmd (argv; cmd[0] is looked up in the container's PATH)
	// in the running container id (ID or name), without a TTY or stdin,
	// and waits for it at most timeout, counted from the command's start;
	// timeout <= 0 waits until ctx ends. A non-zero exit status is not an
	// error: it is in the result.
	//
	// On timeout Exec returns an error wrapping ErrExecTimeout (with the
	// output read so far) and makes sure the command does not keep running
	// when it can. Runtimes that cannot kill a command on their own (Docker
	// has no API for it) kill its process by PID, which needs actorlet to
	// run as root in the runtime's PID namespace; when it cannot, the error
	// still wraps ErrExecTimeout and also says that the command may still
	// be running. When ctx ends first the command is killed the same way
	// and the error wraps ctx's error.
	//
	// Errors: ErrNotFound when the container does not exist, ErrNotRunning
	// when it does not run, ErrUnavailable when the runtime cannot be
	// reached; an empty cmd is an error.
	Exec(ctx context.Context, id string, cmd []string, timeout time.Duration) (ExecResult, error)
}

// TermSize is a terminal's size in characters.
type TermSize struct {
	Width, Height uint16
}

// ExecStreams are an interactive command's streams (kubectl exec).
type ExecStreams struct {
	// Stdin, when set, is the command's standard input; its EOF closes it.
	Stdin io.Reader
	// Stdout and Stderr receive the command's output; with TTY both go to
	// Stdout. Either may be nil (that output is discarded).
	Stdout, Stderr io.Writer
	// TTY gives the command a terminal.
	TTY bool
	// Resize, when set, carries the terminal's new sizes.
	Resize <-chan TermSize
}

// StreamExecer is implemented by runtimes that run an interactive command
// in a running container (kubectl exec). Optional, as Execer.
type StreamExecer interface {
	// ExecStream runs cmd in the running container id with s's streams
	// until it exits (its output ends and the runtime reports it done) or
	// ctx ends, and returns its exit code. Errors as Execer.Exec's.
	ExecStream(ctx context.Context, id string, cmd []string, s ExecStreams) (int, error)
}
