package cri

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// timestampFormat is how Logs prints a line's time with Timestamps, as
// Docker's (RFC 3339, nanoseconds, fixed width).
const timestampFormat = "2006-01-02T15:04:05.000000000Z07:00"

// logEntry is one line of a CRI log file:
// "<RFC 3339 time> <stdout|stderr> <P|F> <content>". A partial line (P)
// continues in the next entry of its stream.
type logEntry struct {
	time    time.Time
	stream  string
	partial bool
	content []byte
}

// parseLogLine parses one line of a CRI log file (without its newline).
func parseLogLine(line []byte) (logEntry, error) {
	ts, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok {
		return logEntry{}, fmt.Errorf("log line %q: no timestamp", line)
	}
	t, err := time.Parse(time.RFC3339Nano, string(ts))
	if err != nil {
		return logEntry{}, fmt.Errorf("log line %q: timestamp: %w", line, err)
	}
	stream, rest, ok := bytes.Cut(rest, []byte{' '})
	if !ok || (string(stream) != "stdout" && string(stream) != "stderr") {
		return logEntry{}, fmt.Errorf("log line %q: no stream", line)
	}
	e := logEntry{time: t, stream: string(stream)}
	// The tag is absent in the oldest format: the rest is the content.
	if tag, content, ok := bytes.Cut(rest, []byte{' '}); ok && (string(tag) == "P" || string(tag) == "F") {
		e.partial, e.content = string(tag) == "P", content
	} else if string(rest) == "P" || string(rest) == "F" {
		e.partial = string(rest) == "P"
	} else {
		e.content = rest
	}
	return e, nil
}

// logLine is one whole line: partial entries joined.
type logLine struct {
	time    time.Time
	content []byte
}

// joiner joins partial entries into lines, per stream.
type joiner struct {
	pending map[string]*logLine
}

func (j *joiner) add(e logEntry) (logLine, bool) {
	if j.pending == nil {
		j.pending = map[string]*logLine{}
	}
	p := j.pending[e.stream]
	if p == nil {
		p = &logLine{time: e.time}
		j.pending[e.stream] = p
	}
	p.content = append(p.content, e.content...)
	if e.partial {
		return logLine{}, false
	}
	delete(j.pending, e.stream)
	return *p, true
}

// render prints l as Logs does: its content and a newline, prefixed with
// its time when timestamps is set.
func render(w *bytes.Buffer, l logLine, timestamps bool) {
	if timestamps {
		w.WriteString(l.time.UTC().Format(timestampFormat))
		w.WriteByte(' ')
	}
	w.Write(l.content)
	w.WriteByte('\n')
}

// selectLines returns what opts selects of a log's whole lines: those not
// before Since, the last TailLines of them.
func selectLines(lines []logLine, opts runtimeadapter.LogOptions) []logLine {
	if !opts.Since.IsZero() {
		kept := lines[:0:0]
		for _, l := range lines {
			if !l.time.Before(opts.Since) {
				kept = append(kept, l)
			}
		}
		lines = kept
	}
	if opts.TailLines > 0 && len(lines) > opts.TailLines {
		lines = lines[len(lines)-opts.TailLines:]
	}
	return lines
}

// readLines reads the whole lines of a CRI log from r; a last line without
// its newline (being written) is left, and its offset returned.
func readLines(r io.Reader, j *joiner) ([]logLine, int64, error) {
	var out []logLine
	br := bufio.NewReaderSize(r, 64<<10)
	var read int64
	for {
		b, err := br.ReadBytes('\n')
		if err == io.EOF {
			return out, read, nil // b, without its newline, is read again later
		}
		if err != nil {
			return out, read, err
		}
		read += int64(len(b))
		e, perr := parseLogLine(bytes.TrimSuffix(b, []byte{'\n'}))
		if perr != nil {
			continue // not a CRI log line: skipped, as the kubelet
		}
		if l, ok := j.add(e); ok {
			out = append(out, l)
		}
	}
}

// followPoll is how often a followed log is read again.
const followPoll = 100 * time.Millisecond

// Logs returns what container ref printed, read from its CRI log file (see
// runtimeadapter.LogSource). A sandbox has no log: an empty one. Follow
// reads on until the container stops (and its log is read to the end),
// ctx ends or the reader is closed; a log rotated meanwhile is followed
// into its new file.
func (r *Runtime) Logs(ctx context.Context, ref string, opts runtimeadapter.LogOptions) (io.ReadCloser, error) {
	o, err := r.resolve(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("logs: %w", err)
	}
	if o.sandbox != nil || o.container.GetLogPath() == "" {
		return io.NopCloser(bytes.NewReader(nil)), nil
	}
	path := o.container.GetLogPath()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		if !opts.Follow {
			return io.NopCloser(bytes.NewReader(nil)), nil
		}
	} else if err != nil {
		return nil, fmt.Errorf("logs of container %s: %w", ref, err)
	}
	var j joiner
	var lines []logLine
	var offset int64
	if f != nil {
		lines, offset, err = readLines(f, &j)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("logs of container %s: %s: %w", ref, path, err)
		}
	}
	var buf bytes.Buffer
	for _, l := range selectLines(lines, opts) {
		render(&buf, l, opts.Timestamps)
	}
	if !opts.Follow {
		if f != nil {
			f.Close()
		}
		return io.NopCloser(&buf), nil
	}
	pr, pw := io.Pipe()
	fctx, cancel := context.WithCancel(ctx)
	fl := &follower{r: r, id: o.id(), path: path, f: f, offset: offset, j: j, opts: opts}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := pw.Write(buf.Bytes()); err != nil {
			fl.close()
			return
		}
		pw.CloseWithError(fl.run(fctx, pw))
	}()
	return &followReader{PipeReader: pr, cancel: cancel, done: done}, nil
}

// followReader stops its follower on Close and waits for it.
type followReader struct {
	*io.PipeReader
	cancel context.CancelFunc
	done   chan struct{}
}

func (f *followReader) Close() error {
	f.cancel()
	err := f.PipeReader.Close()
	<-f.done
	return err
}

// follower reads a log file as it grows.
type follower struct {
	r      *Runtime
	id     string
	path   string
	f      *os.File
	offset int64
	j      joiner
	opts   runtimeadapter.LogOptions
}

func (fl *follower) close() {
	if fl.f != nil {
		fl.f.Close()
		fl.f = nil
	}
}

// run copies new lines to w until the container stops and its log is
// read, or ctx ends (nil: the stream ends cleanly; ctx's error otherwise).
func (fl *follower) run(ctx context.Context, w io.Writer) error {
	defer fl.close()
	for {
		if err := fl.readNew(w); err != nil {
			return err
		}
		running := true
		if st, err := fl.r.rs.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: fl.id}); err == nil {
			running = st.GetStatus().GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING
		} else if isNotFound(err) {
			running = false
		}
		if !running {
			return fl.readNew(w) // what it printed last
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(followPoll):
		}
	}
}

// readNew copies the lines written since the last read; when the file was
// rotated (another file at path), it reads the old one to its end first.
func (fl *follower) readNew(w io.Writer) error {
	if fl.f == nil {
		f, err := os.Open(fl.path)
		if err != nil {
			return nil // not there yet
		}
		fl.f, fl.offset = f, 0
	}
	for {
		if err := fl.copyFrom(w); err != nil {
			return err
		}
		cur, err1 := fl.f.Stat()
		now, err2 := os.Stat(fl.path)
		if err1 != nil || err2 != nil || os.SameFile(cur, now) {
			return nil
		}
		f, err := os.Open(fl.path)
		if err != nil {
			return nil
		}
		fl.f.Close()
		fl.f, fl.offset = f, 0
	}
}

func (fl *follower) copyFrom(w io.Writer) error {
	if _, err := fl.f.Seek(fl.offset, io.SeekStart); err != nil {
		return fmt.Errorf("logs of container %s: %w", fl.id, err)
	}
	lines, n, err := readLines(fl.f, &fl.j)
	fl.offset += n
	if err != nil {
		return fmt.Errorf("logs of container %s: %w", fl.id, err)
	}
	var buf bytes.Buffer
	for _, l := range lines {
		if !fl.opts.Since.IsZero() && l.time.Before(fl.opts.Since) {
			continue
		}
		render(&buf, l, fl.opts.Timestamps)
	}
	if buf.Len() > 0 {
		if _, err := w.Write(buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}
