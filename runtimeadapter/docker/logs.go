package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/actorlet/actorlet/runtimeadapter"
)

var _ runtimeadapter.LogSource = (*Runtime)(nil)

// Logs streams the stdout and stderr of container id (ID or name) as one
// plain stream: Docker's multiplexed frames are demultiplexed and written in
// the order they arrive, stdout and stderr interleaved, without headers.
// actorlet never creates TTY containers, so the stream is always
// multiplexed.
//
// opts selects the lines: TailLines > 0 returns only that many last lines
// (default: all); a non-zero Since drops lines logged before it; Timestamps
// prefixes every line with Docker's RFC 3339 timestamp (nanoseconds) and a
// space; Follow keeps the stream open for new lines until the container
// stops, ctx ends or the reader is closed. Without Follow the stream ends
// with io.EOF at the end of the log.
//
// The caller must Close the returned reader: Close stops the copying
// goroutine, closes Docker's response and returns once both are done. When
// ctx ends first, Read returns ctx.Err(); a broken stream returns the error
// naming the container.
//
// Errors: ErrNotFound naming the container when it does not exist,
// ErrUnavailable when the daemon cannot be reached.
func (r *Runtime) Logs(ctx context.Context, id string, opts runtimeadapter.LogOptions) (io.ReadCloser, error) {
	cli, err := r.api(ctx)
	if err != nil {
		return nil, wrap(err, "logs of container %s", id)
	}
	ctx, cancel := context.WithCancel(ctx)
	body, err := cli.ContainerLogs(ctx, id, logsOptions(opts))
	if err != nil {
		cancel()
		return nil, wrap(err, "logs of container %s", id)
	}
	return newLogStream(ctx, cancel, body, id), nil
}

// logsOptions translates opts for the Docker API: both streams, tail "all"
// unless TailLines > 0, and Since as RFC 3339 with nanoseconds (UTC).
func logsOptions(opts runtimeadapter.LogOptions) container.LogsOptions {
	o := container.LogsOptions{
		ShowStdout: true,
		ShowStderr: true,
		Follow:     opts.Follow,
		Timestamps: opts.Timestamps,
		Tail:       "all",
	}
	if opts.TailLines > 0 {
		o.Tail = strconv.Itoa(opts.TailLines)
	}
	if !opts.Since.IsZero() {
		o.Since = opts.Since.UTC().Format(time.RFC3339Nano)
	}
	return o
}

// logStream is the reader Logs returns: the read end of a pipe that one
// goroutine fills by demultiplexing Docker's response body.
type logStream struct {
	pr     *io.PipeReader
	cancel context.CancelFunc
	// done is closed when the copying goroutine has returned and the body
	// is closed.
	done      chan struct{}
	closeOnce sync.Once
}

// newLogStream starts the goroutine demultiplexing body into the returned
// stream. The goroutine ends when body ends or fails, when ctx ends, or
// when the stream is closed; on its way out it closes body. cancel must
// cancel ctx; the stream calls it once the goroutine is done or on Close.
func newLogStream(ctx context.Context, cancel context.CancelFunc, body io.ReadCloser, id string) *logStream {
	pr, pw := io.Pipe()
	s := &logStream{pr: pr, cancel: cancel, done: make(chan struct{})}

	// Ending ctx unblocks the goroutine wherever it waits: a Read of body
	// (closed) or a Write to the pipe nobody reads (closed with ctx.Err()).
	stop := context.AfterFunc(ctx, func() {
		pw.CloseWithError(ctx.Err())
		body.Close()
	})

	go func() {
		defer close(s.done)
		defer cancel()
		var err error
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("docker: logs of container %s: panic: %v", id, p)
			}
			stop()
			body.Close()
			pw.CloseWithError(err) // nil: the reader sees io.EOF
		}()
		_, err = stdcopy.StdCopy(pw, pw, body)
		switch {
		case ctx.Err() != nil:
			err = ctx.Err()
		case errors.Is(err, io.ErrClosedPipe):
			err = nil // the reader closed the stream
		case err != nil:
			err = wrap(err, "logs of container %s", id)
		}
	}()
	return s
}

// Read reads demultiplexed log bytes.
func (s *logStream) Read(p []byte) (int, error) { return s.pr.Read(p) }

// Close ends the stream: it stops the copying goroutine, closes Docker's
// response and waits for both. Reads after Close return io.ErrClosedPipe.
// Close is idempotent and always returns nil.
func (s *logStream) Close() error {
	s.closeOnce.Do(func() {
		s.pr.Close()
		s.cancel()
	})
	<-s.done
	return nil
}
