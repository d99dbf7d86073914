package probe

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// Exec runs the exec probe a in container containerID through ex and
// waits for it at most timeout (see runtimeadapter.Execer for the kill of
// a command that outlives it). It returns the result, the command's
// output (for events; at most runtimeadapter.MaxExecOutput bytes) and,
// for Unknown only, the error:
//
//   - exit code 0: Success;
//   - any other exit code: Failure;
//   - a timeout (runtimeadapter.ErrExecTimeout): Failure, as the kubelet
//     counts a hung exec as failed at the timeout;
//   - any other error (no Execer, empty command, container gone or not
//     running, runtime unavailable, ctx ended): Unknown.
func Exec(ctx context.Context, ex runtimeadapter.Execer, containerID string, a *v1.ExecAction, timeout time.Duration) (Result, string, error) {
	switch {
	case ex == nil:
		return Unknown, "", errors.New("exec probe: the runtime cannot run commands in containers")
	case a == nil || len(a.Command) == 0:
		return Unknown, "", errors.New("exec probe: no command")
	}
	res, err := ex.Exec(ctx, containerID, a.Command, timeout)
	out := string(res.Output)
	switch {
	case errors.Is(err, runtimeadapter.ErrExecTimeout):
		return Failure, fmt.Sprintf("command %q timed out after %v", a.Command, timeout), nil
	case err != nil:
		return Unknown, out, fmt.Errorf("exec probe %q: %w", a.Command, err)
	case res.ExitCode == 0:
		return Success, out, nil
	case out == "":
		return Failure, fmt.Sprintf("command %q exited with %d", a.Command, res.ExitCode), nil
	default:
		return Failure, out, nil
	}
}
