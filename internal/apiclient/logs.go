package apiclient

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// LogParams selects what Logs returns. The zero value is the whole log of
// the current instance, without timestamps, not followed.
type LogParams struct {
	// Follow keeps the stream open for new lines until ctx ends or the
	// agent stops.
	Follow bool
	// Previous selects the container's previous instance (its last state).
	Previous bool
	// Timestamps prefixes every line with its RFC 3339 time.
	Timestamps bool
	// TailLines, when non-nil, asks for the last *TailLines lines only (0:
	// none, then only new lines when following); nil means every line.
	TailLines *int64
	// Since, when positive, asks for the lines of the last Since only,
	// rounded up to whole seconds.
	Since time.Duration
}

// query encodes p as the API's query parameters.
func (p LogParams) query() url.Values {
	q := url.Values{}
	if p.Follow {
		q.Set("follow", "true")
	}
	if p.Previous {
		q.Set("previous", "true")
	}
	if p.Timestamps {
		q.Set("timestamps", "true")
	}
	if p.TailLines != nil {
		q.Set("tailLines", strconv.FormatInt(*p.TailLines, 10))
	}
	if p.Since > 0 {
		secs := int64((p.Since + time.Second - 1) / time.Second)
		q.Set("sinceSeconds", strconv.FormatInt(secs, 10))
	}
	return q
}

// Logs streams one container's log. The caller reads until io.EOF (the end
// of the log, or of the agent) and closes the stream; cancelling ctx ends it
// too. errors.Is(err, ErrNotFound) for an unknown pod or container, or no
// previous instance.
func (c *Client) Logs(ctx context.Context, namespace, pod, container string, p LogParams) (io.ReadCloser, error) {
	if err := checkNames(namespace, pod, container); err != nil {
		return nil, err
	}
	resp, err := c.get(ctx, []string{"logs", namespace, pod, container}, p.query())
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, statusError(resp)
	}
	return resp.Body, nil
}
