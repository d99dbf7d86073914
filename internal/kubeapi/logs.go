package kubeapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// logQuery is a parsed pods/log query.
type logQuery struct {
	container  string
	previous   bool
	opts       runtimeadapter.LogOptions
	limitBytes int64
}

// parseLogQuery reads container, follow, previous, tailLines,
// sinceSeconds, sinceTime, timestamps and limitBytes (the API server's
// PodLogOptions; insecureSkipTLSVerifyBackend is accepted and
// meaningless here).
func parseLogQuery(v url.Values, now time.Time) (logQuery, error) {
	var q logQuery
	var err error
	q.container = v.Get("container")
	if q.opts.Follow, err = boolParam(v, "follow"); err != nil {
		return q, err
	}
	if q.previous, err = boolParam(v, "previous"); err != nil {
		return q, err
	}
	if q.opts.Timestamps, err = boolParam(v, "timestamps"); err != nil {
		return q, err
	}
	if s := v.Get("tailLines"); s != "" {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil || n < 0 {
			return q, errBadRequest("invalid tailLines %q: want an integer ≥ 0", s)
		}
		if n == 0 {
			q.opts.Since = now // no past lines; the runtime reads 0 as all
		} else {
			q.opts.TailLines = int(n)
		}
	}
	since := func(t time.Time) {
		if q.opts.Since.Before(t) {
			q.opts.Since = t
		}
	}
	if s := v.Get("sinceSeconds"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 || n > int64(now.Sub(time.Time{})/time.Second) {
			return q, errBadRequest("invalid sinceSeconds %q: want an integer > 0", s)
		}
		since(now.Add(-time.Duration(n) * time.Second))
	}
	if s := v.Get("sinceTime"); s != "" {
		if v.Get("sinceSeconds") != "" {
			return q, errBadRequest("at most one of sinceTime or sinceSeconds may be specified")
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return q, errBadRequest("invalid sinceTime %q: want RFC 3339", s)
		}
		since(t)
	}
	if s := v.Get("limitBytes"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return q, errBadRequest("invalid limitBytes %q: want an integer > 0", s)
		}
		q.limitBytes = n
	}
	return q, nil
}

// podLog serves GET …/pods/{name}/log over the node's log backend.
func (h *Handler) podLog(w http.ResponseWriter, r *http.Request, ns, name string) error {
	q, err := parseLogQuery(r.URL.Query(), h.now())
	if err != nil {
		return err
	}
	container, err := h.podContainer(r.Context(), ns, name, q.container)
	if err != nil {
		return err
	}
	q.container = container
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(h.streams, cancel)()
	rc, err := h.b.Logs(ctx, ns, name, q.container, q.previous, q.opts)
	if err != nil {
		return errBadRequest("%s", err.Error())
	}
	closeOnce := sync.OnceValue(rc.Close)
	defer closeOnce()
	defer context.AfterFunc(ctx, func() { _ = closeOnce() })()
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	// The headers go at once, as /logs sends them: a follow of a quiet
	// container is answered, not left waiting for its first line.
	if err := http.NewResponseController(w).Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return nil // the client has gone
	}
	var src io.Reader = rc
	if q.limitBytes > 0 {
		src = io.LimitReader(rc, q.limitBytes)
	}
	if err := copyStream(w, src); err != nil && ctx.Err() == nil {
		h.log.Debug("pod log stream ended", zap.String("pod", ns+"/"+name), zap.String("container", q.container), zap.Error(err))
	}
	return nil
}

func hasContainer(p *v1.Pod, name string) bool {
	for _, c := range p.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range p.Spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// podContainer finds pod ns/name and names the container a pods/log or
// pods/exec request names: container, or the pod's only container when
// it names none (the API server's rule and wording).
func (h *Handler) podContainer(ctx context.Context, ns, name, container string) (string, error) {
	if err := h.refresh(ctx); err != nil {
		return "", err
	}
	obj, ok := h.store.get(resPods, ns+"/"+name)
	if !ok {
		return "", errNotFound("pods", name)
	}
	pod := obj.(*v1.Pod)
	if container == "" {
		if len(pod.Spec.Containers) != 1 {
			names := make([]string, 0, len(pod.Spec.Containers))
			for _, c := range pod.Spec.Containers {
				names = append(names, c.Name)
			}
			return "", errBadRequest("a container name must be specified for pod %s, choose one of: %v", name, names)
		}
		container = pod.Spec.Containers[0].Name
	}
	if !hasContainer(pod, container) {
		return "", errBadRequest("container %s is not valid for pod %s", container, name)
	}
	return container, nil
}
