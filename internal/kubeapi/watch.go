package kubeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// initialEventsEnd is the annotation of the bookmark that ends a watch's
// initial events (sendInitialEvents=true).
const initialEventsEnd = "k8s.io/initial-events-end"

// kindOf is the Kind of res's objects.
func kindOf(res resource) string {
	switch res {
	case resPods:
		return "Pod"
	case resEvents:
		return "Event"
	default:
		return "Node"
	}
}

// watchEvent is one event to send: what the client sees after selection.
type watchEvent struct {
	typ watch.EventType
	obj runtime.Object
}

// filter turns a change into what a watch with q sees: an object that
// comes into the selection is ADDED, one that leaves it DELETED, as the
// API server does.
func (q listQuery) filter(res resource, c change) (watchEvent, bool) {
	now := q.matches(res, c.obj)
	switch c.typ {
	case watch.Modified:
		was := c.prev != nil && q.matches(res, c.prev)
		switch {
		case now && was:
			return watchEvent{watch.Modified, c.obj}, true
		case now:
			return watchEvent{watch.Added, c.obj}, true
		case was:
			return watchEvent{watch.Deleted, c.obj}, true
		}
		return watchEvent{}, false
	default:
		return watchEvent{c.typ, c.obj}, now
	}
}

// watch streams res's changes after the request's resourceVersion (none or
// "0": the current objects as ADDED first), filtered by q, as a stream of
// metav1.WatchEvent. A resourceVersion older than the history kept is
// answered 410 Expired; a client that falls that far behind gets an ERROR
// event with the same Status and the stream ends.
func (h *Handler) watch(w http.ResponseWriter, r *http.Request, res resource, q listQuery) error {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(h.streams, cancel)()
	if q.timeout > 0 {
		var c2 context.CancelFunc
		ctx, c2 = context.WithTimeout(ctx, q.timeout)
		defer c2()
	}
	asTable := wantsTable(r)
	includeObject := r.URL.Query().Get("includeObject")
	if _, err := h.table(res, nil, includeObject); err != nil {
		return err
	}
	var from uint64
	var initial []watchEvent
	if q.resourceVersion == "" || q.resourceVersion == "0" || q.initialEvents {
		if err := h.refresh(ctx); err != nil {
			return err
		}
		objs, rv := h.store.list(res)
		for _, o := range objs {
			if q.matches(res, o) {
				initial = append(initial, watchEvent{watch.Added, o})
			}
		}
		from = rv
	} else {
		from, _ = strconv.ParseUint(q.resourceVersion, 10, 64)
		if _, _, _, expired := h.store.since(res, from); expired {
			return errExpired(from)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	rctl := http.NewResponseController(w)
	first := true
	send := func(ev watchEvent) error {
		obj := ev.obj
		if asTable && ev.typ != watch.Bookmark && ev.typ != watch.Error {
			t, err := h.table(res, []runtime.Object{obj}, includeObject)
			if err != nil {
				return err
			}
			if !first {
				t.ColumnDefinitions = nil
			}
			first = false
			t.ResourceVersion = metaOf(obj).GetResourceVersion()
			obj = t
		}
		raw, err := json.Marshal(obj)
		if err != nil {
			return fmt.Errorf("encoding a watch event: %w", err)
		}
		data, err := json.Marshal(&metav1.WatchEvent{Type: string(ev.typ), Object: runtime.RawExtension{Raw: raw}})
		if err != nil {
			return fmt.Errorf("encoding a watch event: %w", err)
		}
		_ = rctl.SetWriteDeadline(time.Now().Add(time.Minute))
		if _, err := w.Write(append(data, '\n')); err != nil {
			return err
		}
		return nil
	}
	flushed := func() error {
		if err := rctl.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		return nil
	}
	bookmark := func(rv uint64, annotations map[string]string) watchEvent {
		return watchEvent{watch.Bookmark, bookmarkObject(res, rv, annotations)}
	}
	for _, ev := range initial {
		if err := send(ev); err != nil {
			return nil
		}
	}
	if q.initialEvents && q.bookmarks {
		if err := send(bookmark(from, map[string]string{initialEventsEnd: "true"})); err != nil {
			return nil
		}
	}
	if flushed() != nil {
		return nil
	}
	tick := time.NewTicker(h.opts.BookmarkInterval)
	defer tick.Stop()
	for {
		changes, now, wake, expired := h.store.since(res, from)
		if expired {
			e := errExpired(from)
			_ = send(watchEvent{watch.Error, &e.st})
			_ = flushed()
			return nil
		}
		for _, c := range changes {
			if ev, ok := q.filter(res, c); ok {
				if err := send(ev); err != nil {
					return nil
				}
			}
		}
		from = now
		if len(changes) > 0 && flushed() != nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-tick.C:
			if q.bookmarks {
				if send(bookmark(from, nil)) != nil || flushed() != nil {
					return nil
				}
			}
		}
	}
}

// bookmarkObject is the object of a BOOKMARK event: only its kind and the
// resourceVersion the client has seen everything up to.
func bookmarkObject(res resource, rv uint64, annotations map[string]string) runtime.Object {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{Kind: kindOf(res), APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{ResourceVersion: strconv.FormatUint(rv, 10), Annotations: annotations},
	}
}

// errExpired is the API server's 410 for a resourceVersion whose changes
// are no longer kept.
func errExpired(rv uint64) *statusError {
	return newStatus(http.StatusGone, metav1.StatusReasonExpired, nil,
		"too old resource version: %d", rv)
}
