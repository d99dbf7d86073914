package docker_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/docker"
)

// logWait bounds every wait for log lines or stream ends.
const logWait = 30 * time.Second

// readLogs returns the lines of a non-following Logs call.
func (f *fixture) readLogs(id string, opts runtimeadapter.LogOptions) []string {
	f.t.Helper()
	rc, err := f.rt.Logs(f.ctx, id, opts)
	if err != nil {
		f.t.Fatalf("logs %+v: %v", opts, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		f.t.Fatalf("read logs %+v: %v", opts, err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// waitExited polls until container id has exited.
func (f *fixture) waitExited(id string) runtimeadapter.Container {
	f.t.Helper()
	var c runtimeadapter.Container
	eventually(f.t, logWait, "container exited", func() bool {
		var err error
		c, err = f.rt.Inspect(f.ctx, id)
		return err == nil && c.State == runtimeadapter.StateExited
	})
	return c
}

// lineReader delivers the lines of a log stream on a channel; the channel
// closes at the stream's end and err then holds why (nil for io.EOF).
type lineReader struct {
	lines chan string
	done  chan struct{}
	err   error
}

func readLines(r io.Reader) *lineReader {
	lr := &lineReader{lines: make(chan string, 1024), done: make(chan struct{})}
	go func() {
		defer close(lr.done)
		defer close(lr.lines)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lr.lines <- sc.Text()
		}
		lr.err = sc.Err()
	}()
	return lr
}

// next returns the next line containing substr, failing the test if the
// stream ends or logWait passes first.
func (lr *lineReader) next(t *testing.T, substr string) string {
	t.Helper()
	timeout := time.After(logWait)
	for {
		select {
		case l, ok := <-lr.lines:
			if !ok {
				<-lr.done
				t.Fatalf("log stream ended (%v) before a line with %q", lr.err, substr)
			}
			if strings.Contains(l, substr) {
				return l
			}
		case <-timeout:
			t.Fatalf("timed out after %v waiting for a log line with %q", logWait, substr)
		}
	}
}

// waitDone fails the test unless ch closes within logWait.
func waitDone(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(logWait):
		t.Fatalf("timed out after %v waiting for %s", logWait, what)
	}
}

func TestLogsTailTimestampsSince(t *testing.T) {
	f := newFixture(t)
	id := f.run(f.spec("ticker", "--log-every", "20ms", "--exit-after", "300ms"))
	c := f.waitExited(id)

	all := f.readLogs(id, runtimeadapter.LogOptions{})
	if len(all) < 5 || !strings.HasPrefix(all[0], "testworkload: started") || all[len(all)-1] != "testworkload: exiting 0" {
		t.Fatalf("full log: %q", all)
	}

	if got := f.readLogs(id, runtimeadapter.LogOptions{TailLines: 3}); !slices.Equal(got, all[len(all)-3:]) {
		t.Errorf("tail 3 = %q, want %q", got, all[len(all)-3:])
	}

	stamped := f.readLogs(id, runtimeadapter.LogOptions{Timestamps: true})
	if len(stamped) != len(all) {
		t.Fatalf("timestamped log has %d lines, want %d", len(stamped), len(all))
	}
	times := make([]time.Time, len(stamped))
	for i, l := range stamped {
		ts, text, ok := strings.Cut(l, " ")
		at, err := time.Parse(time.RFC3339Nano, ts)
		if !ok || err != nil || text != all[i] {
			t.Fatalf("line %d = %q, want an RFC 3339 timestamp then %q (%v)", i, l, all[i], err)
		}
		if at.Before(c.CreatedAt.Add(-time.Second)) || at.After(c.FinishedAt.Add(time.Second)) {
			t.Errorf("line %d logged at %v, outside the container's life %v – %v", i, at, c.CreatedAt, c.FinishedAt)
		}
		if i > 0 && at.Before(times[i-1]) {
			t.Errorf("line %d logged at %v, before line %d at %v", i, at, i-1, times[i-1])
		}
		times[i] = at
	}

	// Since the middle line's timestamp: a non-empty proper suffix, every
	// line at or after since.
	mid := len(stamped) / 2
	since := times[mid]
	for mid > 0 && times[mid-1].Equal(since) {
		mid--
	}
	got := f.readLogs(id, runtimeadapter.LogOptions{Since: since, Timestamps: true})
	if len(got) == 0 || len(got) >= len(stamped) || !slices.Equal(got, stamped[len(stamped)-len(got):]) {
		t.Fatalf("since %v: %q, want a proper suffix of %q", since, got, stamped)
	}
	for _, l := range got {
		ts, _, _ := strings.Cut(l, " ")
		if at, _ := time.Parse(time.RFC3339Nano, ts); at.Before(since) {
			t.Errorf("since %v: line %q logged before", since, l)
		}
	}
}

func TestLogsStdoutAndStderrBothPresent(t *testing.T) {
	f := newFixture(t)
	// Prints "started" on stdout, then fails to listen and says so on stderr.
	id := f.run(f.spec("badhttp", "--http", ":99999"))
	if c := f.waitExited(id); c.ExitCode != 2 {
		t.Errorf("exit code %d, want 2", c.ExitCode)
	}
	lines := f.readLogs(id, runtimeadapter.LogOptions{})
	var out, errLine bool
	for _, l := range lines {
		out = out || strings.HasPrefix(l, "testworkload: started")
		errLine = errLine || strings.HasPrefix(l, "testworkload: http:")
	}
	if !out || !errLine {
		t.Errorf("log %q: want the stdout line (%v) and the stderr line (%v), without stream headers", lines, out, errLine)
	}
}

func TestLogsFollowReceivesLaterLinesAndEndsWithContainer(t *testing.T) {
	f := newFixture(t)
	id := f.run(f.spec("quiet"))
	eventually(t, logWait, "start line logged", func() bool {
		return strings.HasPrefix(f.readLogs(id, runtimeadapter.LogOptions{})[0], "testworkload: started")
	})

	rc, err := f.rt.Logs(f.ctx, id, runtimeadapter.LogOptions{Follow: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	lr := readLines(rc)
	lr.next(t, "testworkload: started")

	// SIGTERM makes the workload print a line: logged after Logs was called.
	if err := f.rt.Stop(f.ctx, id, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	lr.next(t, "exiting 0")

	// The container stopped: the followed stream ends with EOF.
	waitDone(t, lr.done, "end of the followed stream")
	if lr.err != nil {
		t.Errorf("followed stream ended with %v, want io.EOF", lr.err)
	}
	waitDone(t, docker.LogsDone(rc), "log goroutine end")
}

func TestLogsCloseStopsFollowingStream(t *testing.T) {
	f := newFixture(t)
	id := f.run(f.spec("chatty", "--log-every", "50ms"))

	rc, err := f.rt.Logs(f.ctx, id, runtimeadapter.LogOptions{Follow: true, TailLines: 1})
	if err != nil {
		t.Fatal(err)
	}
	lr := readLines(rc)
	lr.next(t, "testworkload: alive")
	lr.next(t, "testworkload: alive")

	closed := make(chan struct{})
	go func() {
		_ = rc.Close()
		close(closed)
	}()
	waitDone(t, closed, "Close to return")
	waitDone(t, docker.LogsDone(rc), "log goroutine end after Close")
	waitDone(t, lr.done, "reader to see the end")
	if !errors.Is(lr.err, io.ErrClosedPipe) {
		t.Errorf("read after close: %v, want io.ErrClosedPipe", lr.err)
	}
}

func TestLogsFollowEndsWithContext(t *testing.T) {
	f := newFixture(t)
	id := f.run(f.spec("chatty", "--log-every", "50ms"))

	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	rc, err := f.rt.Logs(ctx, id, runtimeadapter.LogOptions{Follow: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	lr := readLines(rc)
	lr.next(t, "testworkload: alive")

	cancel()
	waitDone(t, docker.LogsDone(rc), "log goroutine end after ctx ended")
	waitDone(t, lr.done, "reader to see the end")
	if !errors.Is(lr.err, context.Canceled) {
		t.Errorf("read after ctx ended: %v, want context.Canceled", lr.err)
	}
}

func TestLogsMissingContainerIsNotFound(t *testing.T) {
	f := newFixture(t)
	const missing = "actorlet-no-such-container"
	rc, err := f.rt.Logs(f.ctx, missing, runtimeadapter.LogOptions{Follow: true})
	if rc != nil {
		rc.Close()
	}
	if !errors.Is(err, runtimeadapter.ErrNotFound) || !strings.Contains(err.Error(), missing) {
		t.Errorf("logs of a missing container: %v, want ErrNotFound naming it", err)
	}
}
