package docker

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	timetypes "github.com/docker/docker/api/types/time"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// waitTimeout bounds every wait in these tests.
const waitTimeout = 10 * time.Second

// trackedBody is a response body that records Close.
type trackedBody struct {
	io.Reader
	once   sync.Once
	closed chan struct{}
	// onClose, if set, runs on the first Close (e.g. to unblock Reader).
	onClose func()
}

func newTrackedBody(r io.Reader, onClose func()) *trackedBody {
	return &trackedBody{Reader: r, closed: make(chan struct{}), onClose: onClose}
}

func (b *trackedBody) Close() error {
	b.once.Do(func() {
		if b.onClose != nil {
			b.onClose()
		}
		close(b.closed)
	})
	return nil
}

// frames multiplexes chunks as Docker does; a chunk starting with "E:" goes
// to stderr (without the prefix), any other to stdout.
func frames(t *testing.T, chunks ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	out, errw := stdcopy.NewStdWriter(&buf, stdcopy.Stdout), stdcopy.NewStdWriter(&buf, stdcopy.Stderr)
	for _, c := range chunks {
		w := out
		if rest, ok := strings.CutPrefix(c, "E:"); ok {
			w, c = errw, rest
		}
		if _, err := w.Write([]byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// startStream starts a logStream over body with a cancellable context.
func startStream(body io.ReadCloser) (*logStream, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	return newLogStream(ctx, cancel, body, "c1"), cancel
}

// waitClosed fails the test unless ch closes within waitTimeout.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitTimeout):
		t.Fatalf("timed out after %v waiting for %s", waitTimeout, what)
	}
}

func TestLogStreamInterleavesStdoutAndStderrInArrivalOrder(t *testing.T) {
	body := newTrackedBody(bytes.NewReader(frames(t, "out 1\n", "E:err 1\n", "out 2\n", "E:err 2\n")), nil)
	s, _ := startStream(body)
	defer s.Close()

	got, err := io.ReadAll(s)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if want := "out 1\nerr 1\nout 2\nerr 2\n"; string(got) != want {
		t.Errorf("stream = %q, want %q", got, want)
	}
	waitClosed(t, s.done, "goroutine end at the end of the source")
	waitClosed(t, body.closed, "body closed at the end of the source")
}

func TestLogStreamCloseStopsGoroutineAndClosesBody(t *testing.T) {
	// A source that never ends, as with Follow: the goroutine is blocked
	// reading it, then (after one chunk nobody reads) writing the pipe.
	src, feed := io.Pipe()
	body := newTrackedBody(src, func() { src.Close() })
	s, _ := startStream(body)

	chunk := frames(t, "line\n")
	go func() { _, _ = feed.Write(chunk) }()
	buf := make([]byte, 5)
	if _, err := io.ReadFull(s, buf); err != nil || string(buf) != "line\n" {
		t.Fatalf("first read: %q, %v", buf, err)
	}

	closed := make(chan struct{})
	go func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		close(closed)
	}()
	waitClosed(t, closed, "Close to return")
	waitClosed(t, s.done, "goroutine end after Close")
	waitClosed(t, body.closed, "body closed after Close")
	if _, err := s.Read(buf); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("read after close: %v, want io.ErrClosedPipe", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}

func TestLogStreamEndsWithContextEvenWhenNobodyReads(t *testing.T) {
	src, feed := io.Pipe()
	body := newTrackedBody(src, func() { src.Close() })
	s, cancel := startStream(body)
	defer s.Close()

	// The goroutine blocks writing this chunk into the pipe: nobody reads.
	chunk := frames(t, "unread\n")
	wrote := make(chan struct{})
	go func() {
		_, _ = feed.Write(chunk)
		close(wrote)
	}()
	waitClosed(t, wrote, "the source to be consumed")
	cancel()
	waitClosed(t, s.done, "goroutine end after ctx ended")
	waitClosed(t, body.closed, "body closed after ctx ended")
	if _, err := io.ReadAll(s); !errors.Is(err, context.Canceled) {
		t.Errorf("read after ctx ended: %v, want context.Canceled", err)
	}
}

// panicReader panics on Read.
type panicReader struct{}

func (panicReader) Read([]byte) (int, error) { panic("boom") }

func TestLogStreamRecoversPanics(t *testing.T) {
	body := newTrackedBody(panicReader{}, nil)
	s, _ := startStream(body)
	defer s.Close()
	_, err := io.ReadAll(s)
	if err == nil || !strings.Contains(err.Error(), "panic: boom") || !strings.Contains(err.Error(), "c1") {
		t.Errorf("read: %v, want the panic naming the container", err)
	}
	waitClosed(t, s.done, "goroutine end after a panic")
	waitClosed(t, body.closed, "body closed after a panic")
}

func TestLogStreamReportsBrokenSource(t *testing.T) {
	broken := errors.New("connection reset")
	src := io.MultiReader(bytes.NewReader(frames(t, "before\n")), &errReader{broken})
	s, _ := startStream(newTrackedBody(src, nil))
	defer s.Close()
	got, err := io.ReadAll(s)
	if string(got) != "before\n" {
		t.Errorf("data before the break = %q", got)
	}
	if !errors.Is(err, broken) || !strings.Contains(err.Error(), "c1") {
		t.Errorf("read: %v, want the source's error naming the container", err)
	}
}

func TestLogStreamReportsDaemonErrorFrame(t *testing.T) {
	var buf bytes.Buffer
	_, _ = stdcopy.NewStdWriter(&buf, stdcopy.Systemerr).Write([]byte("log file vanished"))
	s, _ := startStream(newTrackedBody(&buf, nil))
	defer s.Close()
	if _, err := io.ReadAll(s); err == nil || !strings.Contains(err.Error(), "log file vanished") {
		t.Errorf("read: %v, want the daemon's error", err)
	}
}

type errReader struct{ err error }

func (r *errReader) Read([]byte) (int, error) { return 0, r.err }

func TestLogsOptions(t *testing.T) {
	o := logsOptions(runtimeadapter.LogOptions{})
	if !o.ShowStdout || !o.ShowStderr || o.Tail != "all" || o.Since != "" || o.Follow || o.Timestamps {
		t.Errorf("defaults: %+v", o)
	}
	if o := logsOptions(runtimeadapter.LogOptions{TailLines: -3}); o.Tail != "all" {
		t.Errorf("negative tail: %q, want all", o.Tail)
	}

	since := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.FixedZone("x", 3600))
	o = logsOptions(runtimeadapter.LogOptions{Follow: true, TailLines: 7, Since: since, Timestamps: true})
	if !o.Follow || !o.Timestamps || o.Tail != "7" {
		t.Errorf("options: %+v", o)
	}
	// The Docker client turns Since into "seconds.nanoseconds": it must be
	// the same instant.
	ts, err := timetypes.GetTimestamp(o.Since, time.Now())
	if err != nil {
		t.Fatalf("since %q: %v", o.Since, err)
	}
	sec, nsec, err := timetypes.ParseTimestamps(ts, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := time.Unix(sec, nsec); !got.Equal(since) {
		t.Errorf("since %q → %v, want %v", o.Since, got, since)
	}
}
