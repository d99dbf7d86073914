package docker

import (
	"context"
	"errors"
	"fmt"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/client"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// wrap prefixes err with "docker: " and the formatted description of the
// operation (which must name the object), and adds the matching
// runtimeadapter sentinel: ErrNotFound for a 404, ErrUnavailable when the
// daemon cannot be reached or ctx's deadline passed (unless err says so
// already: a failed negotiation, see api). The original error stays in
// the chain.
func wrap(err error, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	switch {
	case errors.Is(err, runtimeadapter.ErrUnavailable):
		return fmt.Errorf("docker: %s: %w", what, err)
	case isUnavailable(err):
		return fmt.Errorf("docker: %s: %w: %w", what, runtimeadapter.ErrUnavailable, err)
	case cerrdefs.IsNotFound(err):
		return fmt.Errorf("docker: %s: %w: %w", what, runtimeadapter.ErrNotFound, err)
	default:
		return fmt.Errorf("docker: %s: %w", what, err)
	}
}

// isUnavailable reports whether err means the daemon could not be reached
// or did not answer in time.
func isUnavailable(err error) bool {
	return client.IsErrConnectionFailed(err) || errors.Is(err, context.DeadlineExceeded)
}
