package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
	"go.uber.org/zap"

	"github.com/actorlet/actorlet/runtimeadapter"
)

var _ runtimeadapter.Execer = (*Runtime)(nil)

// Timing of Exec's bookkeeping.
const (
	// execPollMin and execPollMax bound the interval at which Exec asks
	// the daemon whether a command whose output has ended has exited.
	execPollMin = 5 * time.Millisecond
	execPollMax = 100 * time.Millisecond
	// execKillTimeout bounds the exec inspects that find the PID of a
	// command to kill, even when the caller's ctx has ended.
	execKillTimeout = 5 * time.Second
	// maxKillTree caps how many processes one kill sends SIGKILL to.
	maxKillTree = 1024
)

// Exec runs cmd in the running container id (ID or name) and returns its
// exit code and output (stdout and stderr interleaved, at most
// runtimeadapter.MaxExecOutput bytes); it implements
// runtimeadapter.Execer. The timeout counts from the command's start;
// creating the exec and reading its exit code are bounded by ctx.
//
// A command that outlives its timeout (or ctx) is killed by PID, since
// Docker cannot kill an exec: Exec asks the daemon for the command's host
// PID and, when that process is visible here and belongs to the container
// (its /proc/<pid>/cgroup names the container's ID, so an unrelated process
// that happens to have the PID in another PID namespace is never hit),
// freezes it and its descendants (SIGSTOP, walking
// /proc/<pid>/task/*/children) and sends them SIGKILL. That needs actorlet
// to run as root in the host's PID namespace. Otherwise (EPERM, or the
// process is not visible) the command keeps running until it ends by
// itself; Exec logs a warning and its error says so, while still wrapping
// runtimeadapter.ErrExecTimeout.
//
// Errors: runtimeadapter.ErrNotFound when the container does not exist,
// runtimeadapter.ErrNotRunning when it is not running (created, exited,
// paused, restarting), runtimeadapter.ErrExecTimeout on timeout, ctx's
// error when ctx ends first, runtimeadapter.ErrUnavailable when the daemon
// cannot be reached; an empty cmd is an error. A command that Docker
// cannot start (e.g. a missing executable) is not an error: Docker reports
// it as exit code 126 or 127, with its message in the output.
func (r *Runtime) Exec(ctx context.Context, id string, cmd []string, timeout time.Duration) (runtimeadapter.ExecResult, error) {
	res := runtimeadapter.ExecResult{ExitCode: -1}
	what := fmt.Sprintf("exec %q in container %s", cmd, id)
	if len(cmd) == 0 {
		return res, fmt.Errorf("docker: %s: empty command", what)
	}
	cli, err := r.api(ctx)
	if err != nil {
		return res, wrapExec(err, what)
	}
	created, err := cli.ContainerExecCreate(ctx, id, container.ExecOptions{
		Cmd: cmd, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return res, wrapExec(err, what)
	}
	execID := created.ID

	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()

	// Attaching starts the command and hands over the hijacked connection.
	stream, err := cli.ContainerExecAttach(runCtx, execID, container.ExecAttachOptions{})
	if err != nil {
		if runCtx.Err() != nil {
			// The command may have started before the attach gave up.
			return res, r.execAbandoned(ctx, execID, id, what, timeout)
		}
		return res, wrapExec(err, what)
	}
	out := &limitedBuffer{max: runtimeadapter.MaxExecOutput}
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(out, out, stream.Reader)
		copied <- err
	}()
	var copyErr error
	select {
	case copyErr = <-copied:
		stream.Close()
	case <-runCtx.Done():
		stream.Close() // ends the copy
		<-copied
		res.Output = out.bytes()
		return res, r.execAbandoned(ctx, execID, id, what, timeout)
	}
	res.Output = out.bytes()

	// The output ends when the command's stdout and stderr close, which is
	// usually, but not always, when it exits.
	for delay := execPollMin; ; delay = min(2*delay, execPollMax) {
		in, err := cli.ContainerExecInspect(runCtx, execID)
		switch {
		case err == nil && !in.Running:
			if copyErr != nil {
				r.log.Debug("docker: exec output stream broke", zap.String("exec", what), zap.Error(copyErr))
			}
			res.ExitCode = in.ExitCode
			return res, nil
		case runCtx.Err() != nil:
			return res, r.execAbandoned(ctx, execID, id, what, timeout)
		case err != nil:
			return res, wrapExec(err, what)
		}
		t := time.NewTimer(delay)
		select {
		case <-runCtx.Done():
			t.Stop()
			return res, r.execAbandoned(ctx, execID, id, what, timeout)
		case <-t.C:
		}
	}
}

// wrapExec is wrap for the exec calls, adding runtimeadapter.ErrNotRunning
// for Docker's conflict errors (container not running, paused or
// restarting).
func wrapExec(err error, what string) error {
	if cerrdefs.IsConflict(err) {
		return fmt.Errorf("docker: %s: %w: %w", what, runtimeadapter.ErrNotRunning, err)
	}
	return wrap(err, "%s", what)
}

// execAbandoned kills the command of exec execID in container id, whose
// caller stopped waiting because the timeout passed or ctx ended, and
// returns the error Exec reports: ErrExecTimeout or ctx's error, saying
// whether the command could not be killed.
func (r *Runtime) execAbandoned(ctx context.Context, execID, id, what string, timeout time.Duration) error {
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), execKillTimeout)
	defer cancel()
	killErr := r.killExec(kctx, execID)
	if killErr != nil {
		r.log.Warn("docker: could not kill timed-out exec; it may still be running",
			zap.String("exec", what), zap.Error(killErr))
	}
	var err error
	if ctx.Err() != nil {
		err = fmt.Errorf("docker: %s: %w", what, ctx.Err())
	} else {
		err = fmt.Errorf("docker: %s: %w after %v", what, runtimeadapter.ErrExecTimeout, timeout)
	}
	if killErr != nil {
		err = fmt.Errorf("%w; the command may still be running: %v", err, killErr)
	}
	return err
}

// killExec kills the process of exec execID and its descendants, if it
// still runs. See Exec for the conditions.
//
// The daemon marks an exec running before it records its PID, so a
// running exec without a PID is inspected again until ctx ends.
func (r *Runtime) killExec(ctx context.Context, execID string) error {
	cli, err := r.api(ctx)
	if err != nil {
		return fmt.Errorf("inspect exec %s for its PID: %w", execID, err)
	}
	for delay := execPollMin; ; delay = min(2*delay, execPollMax) {
		in, err := cli.ContainerExecInspect(ctx, execID)
		switch {
		case err != nil:
			return fmt.Errorf("inspect exec %s for its PID: %w", execID, err)
		case !in.Running:
			return nil // it ended meanwhile
		case in.Pid > 0:
			return killProcessTree(in.Pid, in.ContainerID)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("exec %s: Docker reports no PID", execID)
		case <-t.C:
		}
	}
}

// killProcessTree sends SIGKILL to pid and its descendants after checking
// that pid belongs to the container containerID. Processes that are gone
// already are no error.
func killProcessTree(pid int, containerID string) error {
	cg, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("process %d is not visible in actorlet's PID namespace", pid)
	case err != nil:
		return fmt.Errorf("process %d: %w", pid, err)
	case containerID == "" || !strings.Contains(string(cg), containerID):
		return fmt.Errorf("process %d here is not container %s's (different PID namespace?)", pid, containerID)
	}
	// Freeze each process before reading its children, so that it forks
	// no more while the tree is walked.
	tree := []int{pid}
	for i := 0; i < len(tree) && len(tree) < maxKillTree; i++ {
		if err := syscall.Kill(tree[i], syscall.SIGSTOP); err != nil && i == 0 {
			if errors.Is(err, syscall.ESRCH) {
				return nil
			}
			return fmt.Errorf("stop process %d: %w", pid, err)
		}
		tree = append(tree, childrenOf(tree[i])...)
	}
	for i, p := range tree {
		if err := syscall.Kill(p, syscall.SIGKILL); err != nil && i == 0 && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("kill process %d: %w", pid, err)
		}
	}
	return nil
}

// childrenOf returns the PIDs of pid's children from
// /proc/<pid>/task/*/children (a kernel with CONFIG_PROC_CHILDREN; none
// otherwise).
func childrenOf(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// limitedBuffer keeps the first max bytes written to it and discards the
// rest; Write never fails, so a copy into it drains its source.
type limitedBuffer struct {
	max int
	buf []byte
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (b *limitedBuffer) bytes() []byte { return b.buf }
