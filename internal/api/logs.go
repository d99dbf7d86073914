package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/actorlet/actorlet/runtimeadapter"
)

const (
	// logBufferSize is the most read from a log stream before it is
	// written and flushed to the client.
	logBufferSize = 32 << 10
	// logWriteTimeout bounds each write to a log client, so a client that
	// stops reading without disconnecting does not pin the stream forever.
	logWriteTimeout = time.Minute
)

// logQuery is the parsed query of GET /logs/….
type logQuery struct {
	opts     runtimeadapter.LogOptions
	previous bool
}

// logs serves GET /logs/{namespace}/{pod}/{container}, streaming the
// container's log as text/plain and flushing as data arrives. Query:
// follow, timestamps, previous (booleans: true, false, 1, 0, … or empty
// for true), tailLines (integer ≥ 0: the last N lines; 0 shows only lines
// written from now on) and sinceSeconds (integer > 0: lines of the last N
// seconds). Any other parameter, a repeated one or a bad value is a 400.
// The stream ends with the log (without follow), when the client goes, or
// when the server shuts down.
func (h *handler) logs(w http.ResponseWriter, r *http.Request) {
	ns, pod, ctr := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	if err := validateNames(ns, pod, ctr); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	q, err := parseLogQuery(r.URL.RawQuery, h.now())
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(h.streams, cancel)()
	rc, err := h.b.Logs(ctx, ns, pod, ctr, q.previous, q.opts)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	closeOnce := sync.OnceValue(rc.Close)
	defer closeOnce()
	// A Read blocked in the Backend ends when the client goes.
	stop := context.AfterFunc(ctx, func() { _ = closeOnce() })
	defer stop()

	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	rctl := http.NewResponseController(w)
	if !flush(rctl) {
		return
	}
	buf := make([]byte, logBufferSize)
	for {
		n, rerr := rc.Read(buf)
		if n > 0 {
			if err := rctl.SetWriteDeadline(time.Now().Add(logWriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
				return
			}
			if _, err := w.Write(buf[:n]); err != nil {
				return
			}
			if !flush(rctl) {
				return
			}
		}
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) && ctx.Err() == nil {
				h.log.Warn("log stream failed", zap.String("namespace", ns), zap.String("pod", pod),
					zap.String("container", ctr), zap.Error(rerr))
			}
			return
		}
	}
}

// flush sends what was written so far; false when the client is gone.
func flush(rctl *http.ResponseController) bool {
	err := rctl.Flush()
	return err == nil || errors.Is(err, http.ErrNotSupported)
}

// parseLogQuery parses and validates the query of a log request; now is
// the reference time for sinceSeconds and tailLines=0.
func parseLogQuery(rawQuery string, now time.Time) (logQuery, error) {
	var q logQuery
	values, err := url.ParseQuery(rawQuery)
	if err != nil {
		return q, fmt.Errorf("malformed query: %w", err)
	}
	for key, vs := range values {
		if len(vs) != 1 {
			return q, fmt.Errorf("query parameter %q given %d times", key, len(vs))
		}
		v := vs[0]
		switch key {
		case "follow":
			q.opts.Follow, err = parseBool(key, v)
		case "timestamps":
			q.opts.Timestamps, err = parseBool(key, v)
		case "previous":
			q.previous, err = parseBool(key, v)
		case "tailLines":
			var n int64
			n, err = strconv.ParseInt(v, 10, 32)
			switch {
			case err != nil || n < 0:
				err = fmt.Errorf("tailLines %q: want an integer ≥ 0", v)
			case n == 0:
				// The runtime reads TailLines 0 as "all"; Kubernetes'
				// tailLines=0 means no past lines.
				if q.opts.Since.Before(now) {
					q.opts.Since = now
				}
			default:
				q.opts.TailLines = int(n)
			}
		case "sinceSeconds":
			var n int64
			n, err = strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 || n > int64(now.Sub(time.Time{})/time.Second) {
				err = fmt.Errorf("sinceSeconds %q: want an integer > 0", v)
				break
			}
			if since := now.Add(-time.Duration(n) * time.Second); q.opts.Since.Before(since) {
				q.opts.Since = since
			}
		default:
			err = fmt.Errorf("unknown query parameter %q (want follow, tailLines, sinceSeconds, timestamps or previous)", key)
		}
		if err != nil {
			return logQuery{}, err
		}
	}
	return q, nil
}

// parseBool reads a boolean query value; an empty value (?follow) is true.
func parseBool(key, v string) (bool, error) {
	if v == "" {
		return true, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s %q: want true or false", key, v)
	}
	return b, nil
}
