package cri

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// execTail is how long an ExecSync call may last past its timeout (the
// runtime kills the command at the timeout and answers).
const execTail = 10 * time.Second

// Exec runs cmd in the running container ref with ExecSync (see
// runtimeadapter.Execer). The runtime kills the command at its timeout
// (CRI counts whole seconds: timeout is rounded up); the output is stdout
// then stderr (CRI keeps them apart), truncated to MaxExecOutput.
func (r *Runtime) Exec(ctx context.Context, ref string, cmd []string, timeout time.Duration) (runtimeadapter.ExecResult, error) {
	fail := runtimeadapter.ExecResult{ExitCode: -1}
	if len(cmd) == 0 {
		return fail, fmt.Errorf("exec in container %s: empty command", ref)
	}
	o, err := r.resolve(ctx, ref)
	if err != nil {
		return fail, fmt.Errorf("exec: %w", err)
	}
	if o.sandbox != nil || o.container.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return fail, fmt.Errorf("exec in container %s: %w", ref, runtimeadapter.ErrNotRunning)
	}
	secs := int64(0)
	cctx := ctx
	if timeout > 0 {
		secs = int64(math.Ceil(timeout.Seconds()))
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, time.Duration(secs)*time.Second+execTail)
		defer cancel()
	}
	start := time.Now()
	resp, err := r.rs.ExecSync(cctx, &runtimeapi.ExecSyncRequest{ContainerId: o.id(), Cmd: cmd, Timeout: secs})
	if err != nil {
		if timeout > 0 && time.Since(start) >= timeout && ctx.Err() == nil {
			return fail, fmt.Errorf("exec %q in container %s: %w after %v (%v)", strings.Join(cmd, " "), ref, runtimeadapter.ErrExecTimeout, timeout, err)
		}
		if ctx.Err() != nil {
			return fail, fmt.Errorf("exec %q in container %s: %w: %w", strings.Join(cmd, " "), ref, runtimeadapter.ErrUnavailable, ctx.Err())
		}
		if isNotFound(err) {
			return fail, fmt.Errorf("exec: %w", notFound(ref))
		}
		if st, serr := r.rs.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: o.id()}); serr == nil &&
			st.GetStatus().GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
			return fail, fmt.Errorf("exec in container %s: %w (%v)", ref, runtimeadapter.ErrNotRunning, err)
		}
		return fail, wrap(ctx, err, "exec %q in container %s", strings.Join(cmd, " "), ref)
	}
	out := append(append([]byte{}, resp.GetStdout()...), resp.GetStderr()...)
	if len(out) > runtimeadapter.MaxExecOutput {
		out = out[:runtimeadapter.MaxExecOutput]
	}
	return runtimeadapter.ExecResult{ExitCode: int(resp.GetExitCode()), Output: out}, nil
}
