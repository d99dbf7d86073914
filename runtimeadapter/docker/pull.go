package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/docker/docker/api/types/image"
	"go.uber.org/zap"

	"github.com/actorlet/actorlet/runtimeadapter"
)

var _ runtimeadapter.ImageService = (*Runtime)(nil)

// ImagePresent reports whether image ref (a reference or ID) is present
// locally; see ImageExists. It implements runtimeadapter.ImageService.
func (r *Runtime) ImagePresent(ctx context.Context, ref string) (bool, error) {
	return r.ImageExists(ctx, ref)
}

// PullImage pulls ref anonymously (a reference without tag or digest means
// ":latest"; registries on 127.0.0.0/8 are reached over plain HTTP by the
// daemon's default) and reads Docker's whole progress stream, passing each
// message to progress when it is not nil. It implements
// runtimeadapter.ImageService.
//
// The error names the image. It wraps runtimeadapter.ErrNotFound when the
// repository, tag or digest does not exist, runtimeadapter.ErrUnavailable
// when the daemon cannot be reached or ctx ends (with ctx's error), and
// otherwise carries the registry's or daemon's message (an unreachable
// registry, a refused login, a broken stream).
func (r *Runtime) PullImage(ctx context.Context, ref string, progress func(runtimeadapter.PullProgress)) error {
	start := time.Now()
	r.log.Info("docker: pulling image", zap.String("image", ref))
	cli, err := r.api(ctx)
	if err != nil {
		r.log.Info("docker: pull failed", zap.String("image", ref), zap.Error(err))
		return fmt.Errorf("docker: pull image %s: %w", ref, err)
	}
	rc, err := cli.ImagePull(ctx, ref, image.PullOptions{})
	if err != nil {
		return r.pullFailed(ctx, ref, err, false)
	}
	defer rc.Close()
	if err := readPullStream(rc, progress); err != nil {
		return r.pullFailed(ctx, ref, err, true)
	}
	r.log.Info("docker: pulled image", zap.String("image", ref), zap.Duration("took", time.Since(start)))
	return nil
}

// pullFailed logs a failed pull of ref and returns its error, naming ref
// and wrapping the sentinel that applies: ErrUnavailable with ctx's error
// when ctx has ended, else as wrap does for an HTTP error (inStream false)
// or, for an error reported in the progress stream, ErrNotFound when its
// message says so.
func (r *Runtime) pullFailed(ctx context.Context, ref string, err error, inStream bool) error {
	switch {
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		err = fmt.Errorf("docker: pull image %s: %w: %w", ref, runtimeadapter.ErrUnavailable, err)
	case ctx.Err() != nil:
		err = fmt.Errorf("docker: pull image %s: %w: %w: %w", ref, runtimeadapter.ErrUnavailable, ctx.Err(), err)
	case !inStream:
		err = wrap(err, "pull image %s", ref)
	case isNotFoundMessage(err.Error()):
		err = fmt.Errorf("docker: pull image %s: %w: %w", ref, runtimeadapter.ErrNotFound, err)
	default:
		err = fmt.Errorf("docker: pull image %s: %w", ref, err)
	}
	r.log.Info("docker: pull failed", zap.String("image", ref), zap.Error(err))
	return err
}

// isNotFoundMessage reports whether a pull error that Docker sent in its
// progress stream (which carries no status code) means that the image does
// not exist. Errors that Docker returns as an HTTP status are classified by
// wrap instead.
func isNotFoundMessage(msg string) bool {
	msg = strings.ToLower(msg)
	return strings.Contains(msg, "manifest unknown") ||
		strings.Contains(msg, "not found") ||
		strings.Contains(msg, "name unknown")
}

// pullMessage is one message of Docker's JSON pull progress stream (the
// jsonmessage format).
type pullMessage struct {
	ID             string `json:"id"`
	Status         string `json:"status"`
	ProgressDetail struct {
		Current int64 `json:"current"`
		Total   int64 `json:"total"`
	} `json:"progressDetail"`
	Error       string `json:"error"`
	ErrorDetail *struct {
		Message string `json:"message"`
	} `json:"errorDetail"`
}

// readPullStream reads a pull progress stream to its end, passing each
// message with a status to progress (when not nil). It returns the first
// error the stream reports (after which Docker sends nothing more), or the
// read error if the stream breaks.
func readPullStream(r io.Reader, progress func(runtimeadapter.PullProgress)) error {
	dec := json.NewDecoder(r)
	for {
		var m pullMessage
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read pull progress stream: %w", err)
		}
		if m.ErrorDetail != nil && m.ErrorDetail.Message != "" {
			return errors.New(m.ErrorDetail.Message)
		}
		if m.Error != "" {
			return errors.New(m.Error)
		}
		if progress != nil && m.Status != "" {
			layer := m.ID
			if strings.HasPrefix(m.Status, "Pulling from ") {
				layer = "" // Docker puts the tag there
			}
			progress(runtimeadapter.PullProgress{
				Layer:   layer,
				Status:  m.Status,
				Current: m.ProgressDetail.Current,
				Total:   m.ProgressDetail.Total,
			})
		}
	}
}
