package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/actorlet/actorlet/runtimeadapter"
)

var _ runtimeadapter.StreamExecer = (*Runtime)(nil)

// ExecStream runs an interactive command (kubectl exec): stdin, stdout and
// stderr attached, a TTY when asked, resized on each TermSize. It returns
// the command's exit code once its output has ended and Docker reports it
// finished; when ctx ends first the attachment is closed (Docker has no
// way to kill an exec: a command that ignores its closed input may run
// on) and ctx's error returned.
func (r *Runtime) ExecStream(ctx context.Context, id string, cmd []string, s runtimeadapter.ExecStreams) (int, error) {
	what := fmt.Sprintf("exec %q in container %s", cmd, id)
	if len(cmd) == 0 {
		return -1, fmt.Errorf("docker: %s: empty command", what)
	}
	cli, err := r.api(ctx)
	if err != nil {
		return -1, wrapExec(err, what)
	}
	created, err := cli.ContainerExecCreate(ctx, id, container.ExecOptions{
		Cmd: cmd, Tty: s.TTY, AttachStdin: s.Stdin != nil, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return -1, wrapExec(err, what)
	}
	stream, err := cli.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{Tty: s.TTY})
	if err != nil {
		return -1, wrapExec(err, what)
	}
	defer stream.Close()
	stop := context.AfterFunc(ctx, func() { stream.Close() })
	defer stop()
	if s.Stdin != nil {
		go func() {
			_, _ = io.Copy(stream.Conn, s.Stdin)
			_ = stream.CloseWrite()
		}()
	}
	if s.Resize != nil {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case sz, ok := <-s.Resize:
					if !ok {
						return
					}
					_ = cli.ContainerExecResize(ctx, created.ID, container.ResizeOptions{Width: uint(sz.Width), Height: uint(sz.Height)})
				}
			}
		}()
	}
	stdout, stderr := s.Stdout, s.Stderr
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	if s.TTY {
		_, err = io.Copy(stdout, stream.Reader)
	} else {
		_, err = stdcopy.StdCopy(stdout, stderr, stream.Reader)
	}
	if ctx.Err() != nil {
		return -1, fmt.Errorf("docker: %s: %w", what, ctx.Err())
	}
	if err != nil && !errors.Is(err, io.EOF) {
		r.log.Debug("docker: exec stream broke")
	}
	for delay := execPollMin; ; delay = min(2*delay, execPollMax) {
		in, err := cli.ContainerExecInspect(ctx, created.ID)
		switch {
		case err == nil && !in.Running:
			return in.ExitCode, nil
		case err != nil:
			return -1, wrapExec(err, what)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return -1, fmt.Errorf("docker: %s: %w", what, ctx.Err())
		case <-t.C:
		}
	}
}
