// Package kubeapi makes actorlet's HTTP API a small Kubernetes API server
// for one node, so kubectl and client-go work against it: discovery
// (/api, /api/v1, /apis, /version, /openapi/v3), pods (list, get, watch,
// and the server-side Table form kubectl prints), this node, its events,
// and pods' logs.
//
// The node has no resourceVersions; a store (store.go) gives them: every
// refresh reads the node's pods, events and node object, diffs them with
// the last ones and records ADDED, MODIFIED and DELETED changes under one
// counter, which watches follow. A refresh runs on every list, on every
// nudge from the node (a pod's status changed) and every Resync.
package kubeapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/actorlet/actorlet/internal/api"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/sources/apipods"
)

// Backend is what the Kubernetes API serves: the node's pods, events,
// health and logs (as internal/api's Backend) and this node as a v1.Node.
type Backend interface {
	api.Backend
	// Node returns this node: name, addresses, capacity, allocatable and
	// node info. The API adds the Ready condition from Health.
	Node(ctx context.Context) (*v1.Node, error)
}

// Defaults of Options.
const (
	DefaultResync           = time.Second
	DefaultBookmarkInterval = 30 * time.Second
	DefaultHistory          = 1000
)

// Options configure the Kubernetes API.
type Options struct {
	// NodeName is this node's name.
	NodeName string
	// Nudges, when set, tells the API the node changed (a pod's status):
	// it refreshes at once rather than at the next Resync.
	Nudges <-chan struct{}
	// Resync is how often Run refreshes without a nudge (default 1 s).
	Resync time.Duration
	// BookmarkInterval is how often a watch that allows bookmarks gets one
	// (default 30 s).
	BookmarkInterval time.Duration
	// History is how many changes are kept for watches that resume from a
	// resourceVersion (default 1000); older ones are answered 410 Expired.
	History int
	// Pushed, when set, keeps the pods created through the API (create,
	// replace, patch, delete); without it pods are read-only.
	Pushed *apipods.Source
	// Logger receives the API's own messages; nil discards them.
	Logger *zap.Logger
	// Context, when set, ends every watch and log follow when done (the
	// agent stopping).
	Context context.Context
	// Now is the clock (default time.Now): ages, sinceSeconds.
	Now func() time.Time
}

// Handler serves the Kubernetes API. Create it with New; Run keeps its
// view fresh between requests.
type Handler struct {
	b     Backend
	opts  Options
	log   *zap.Logger
	now   func() time.Time
	store *store

	// refreshMu makes refreshes one at a time, so an older read never
	// lands after a newer one.
	refreshMu sync.Mutex
	// streams ends long requests (watches, log follows) when done.
	streams context.Context
}

// New returns the API over b.
func New(b Backend, opts Options) *Handler {
	if opts.Resync <= 0 {
		opts.Resync = DefaultResync
	}
	if opts.BookmarkInterval <= 0 {
		opts.BookmarkInterval = DefaultBookmarkInterval
	}
	if opts.History <= 0 {
		opts.History = DefaultHistory
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	streams := opts.Context
	if streams == nil {
		streams = context.Background()
	}
	return &Handler{
		b: b, opts: opts, log: log, now: now,
		store:   newStore(opts.History, uint64(now().UnixMicro())),
		streams: streams,
	}
}

// Run refreshes the API's view on every nudge and every Resync until ctx
// ends, and ends the watches then.
func (h *Handler) Run(ctx context.Context) {
	t := time.NewTicker(h.opts.Resync)
	defer t.Stop()
	for {
		if err := h.refresh(ctx); err != nil && ctx.Err() == nil {
			h.log.Debug("Kubernetes API refresh failed", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-h.opts.Nudges:
		}
	}
}

// writes says whether pods can be created, changed and deleted.
func (h *Handler) writes() bool { return h.opts.Pushed != nil }

// refresh reads the node's pods, events and node and records what changed.
func (h *Handler) refresh(ctx context.Context) error {
	h.refreshMu.Lock()
	defer h.refreshMu.Unlock()
	pods, err := h.b.Pods(ctx)
	if err != nil {
		return fmt.Errorf("pods: %w", err)
	}
	objs := make([]runtime.Object, 0, len(pods))
	for _, p := range pods {
		if p == nil {
			continue
		}
		c := p.DeepCopy()
		c.TypeMeta = metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}
		c.ResourceVersion = ""
		c.SelfLink = ""
		c.ManagedFields = nil
		objs = append(objs, c)
	}
	h.store.sync(resPods, objs)

	evs, err := h.b.Events(ctx)
	if err != nil {
		return fmt.Errorf("events: %w", err)
	}
	h.store.sync(resEvents, eventObjects(evs))

	n, err := h.b.Node(ctx)
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	n = n.DeepCopy()
	n.TypeMeta = metav1.TypeMeta{Kind: "Node", APIVersion: "v1"}
	n.Status.Conditions = append(n.Status.Conditions, readyCondition(h.b.Health(ctx), n.CreationTimestamp))
	h.store.sync(resNodes, []runtime.Object{n})
	return nil
}

func eventObjects(evs []messages.Event) []runtime.Object {
	list := api.EventList(evs)
	out := make([]runtime.Object, 0, len(list.Items))
	for i := range list.Items {
		e := list.Items[i]
		e.TypeMeta = metav1.TypeMeta{Kind: "Event", APIVersion: "v1"}
		e.ReportingInstance = ""
		out = append(out, &e)
	}
	return out
}

// readyCondition is the node's Ready condition from its health checks:
// True when every check passes, else False naming the failing checks.
func readyCondition(health api.Health, since metav1.Time) v1.NodeCondition {
	c := v1.NodeCondition{
		Type: v1.NodeReady, Status: v1.ConditionTrue,
		Reason: "KubeletReady", Message: "actorlet is posting ready status",
		LastTransitionTime: since,
	}
	if !health.OK {
		var failing []string
		for _, ch := range health.Checks {
			if !ch.OK {
				s := ch.Name
				if ch.Pod != "" {
					s += " (" + ch.Pod + ")"
				}
				if ch.Message != "" {
					s += ": " + ch.Message
				}
				failing = append(failing, s)
			}
		}
		c.Status, c.Reason = v1.ConditionFalse, "KubeletNotReady"
		c.Message = strings.Join(failing, "; ")
	}
	return c
}

// ServeHTTP serves one request of the Kubernetes API.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	if h.discovery(w, r, path) {
		return
	}
	if path == "/apis" || strings.HasPrefix(path, "/apis/") || strings.HasPrefix(path, "/openapi/") {
		writeStatus(w, errNoResource())
		return
	}
	rest, ok := strings.CutPrefix(path, "/api/v1/")
	if !ok {
		writeStatus(w, errNoResource())
		return
	}
	if err := h.route(w, r, strings.Split(rest, "/")); err != nil {
		h.fail(w, r, err)
	}
}

// fail answers err: a statusError as it is, a Backend's not-found as 404,
// anything else as 500 (nothing when the client has gone).
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	var se *statusError
	switch {
	case errors.As(err, &se):
		writeStatus(w, se)
	case errors.Is(err, api.ErrNotFound), errors.Is(err, runtimeadapter.ErrNotFound), errors.Is(err, messages.ErrPodNotFound):
		writeStatus(w, newStatus(http.StatusNotFound, metav1.StatusReasonNotFound, nil, "%s", err.Error()))
	case r.Context().Err() != nil:
	default:
		h.log.Warn("Kubernetes API request failed", zap.String("method", r.Method), zap.String("path", r.URL.Path), zap.Error(err))
		writeStatus(w, errInternal(err))
	}
}

// route dispatches /api/v1/<segs>.
func (h *Handler) route(w http.ResponseWriter, r *http.Request, segs []string) error {
	switch {
	case len(segs) == 1 && segs[0] == "pods":
		return h.collection(w, r, resPods, "")
	case len(segs) == 1 && segs[0] == "events":
		return h.collection(w, r, resEvents, "")
	case len(segs) == 1 && segs[0] == "nodes":
		return h.collection(w, r, resNodes, "")
	case len(segs) == 2 && segs[0] == "nodes":
		return h.item(w, r, resNodes, "", segs[1])
	case len(segs) >= 3 && segs[0] == "namespaces":
		ns := segs[1]
		if err := validName(nsName, ns); err != nil {
			return err
		}
		res := resource(segs[2])
		if res != resPods && res != resEvents {
			return errNoResource()
		}
		switch len(segs) {
		case 3:
			return h.collection(w, r, res, ns)
		case 4:
			return h.item(w, r, res, ns, segs[3])
		case 5:
			if res == resPods {
				return h.subresource(w, r, ns, segs[3], segs[4])
			}
		}
	}
	return errNoResource()
}

// collection serves a list, a watch, or a create.
func (h *Handler) collection(w http.ResponseWriter, r *http.Request, res resource, ns string) error {
	switch r.Method {
	case http.MethodGet:
		q, err := parseListQuery(r.URL.Query(), res)
		if err != nil {
			return err
		}
		q.namespace = ns
		if q.watch {
			return h.watch(w, r, res, q)
		}
		return h.list(w, r, res, q)
	case http.MethodPost:
		if res == resPods && ns != "" && h.writes() {
			return h.create(w, r, ns)
		}
		return errMethod("create", string(res))
	case http.MethodDelete:
		return errMethod("deletecollection", string(res))
	default:
		return errMethod(strings.ToLower(r.Method), string(res))
	}
}

// item serves one object: get, or a write.
func (h *Handler) item(w http.ResponseWriter, r *http.Request, res resource, ns, name string) error {
	kind := nameOf
	if res == resPods {
		kind = podNameOf
	}
	if err := validName(kind, name); err != nil {
		return err
	}
	switch r.Method {
	case http.MethodGet:
		return h.get(w, r, res, ns, name)
	case http.MethodPut, http.MethodPatch, http.MethodDelete:
		if res == resPods && h.writes() {
			return h.write(w, r, ns, name)
		}
		verb := map[string]string{http.MethodPut: "update", http.MethodPatch: "patch", http.MethodDelete: "delete"}[r.Method]
		return errMethod(verb, string(res))
	default:
		return errMethod(strings.ToLower(r.Method), string(res))
	}
}

// subresource serves pods/log and pods/exec.
func (h *Handler) subresource(w http.ResponseWriter, r *http.Request, ns, name, sub string) error {
	if err := validName(podNameOf, name); err != nil {
		return err
	}
	switch sub {
	case "log":
		if r.Method != http.MethodGet {
			return errMethod(strings.ToLower(r.Method), "pods/log")
		}
		return h.podLog(w, r, ns, name)
	case "exec":
		if h.exec() {
			return h.podExec(w, r, ns, name)
		}
	}
	return errNoResource()
}

// get serves one object.
func (h *Handler) get(w http.ResponseWriter, r *http.Request, res resource, ns, name string) error {
	if err := h.refresh(r.Context()); err != nil {
		return err
	}
	key := name
	if ns != "" {
		key = ns + "/" + name
	}
	obj, ok := h.store.get(res, key)
	if !ok {
		return errNotFound(string(res), name)
	}
	if wantsTable(r) {
		t, err := h.table(res, []runtime.Object{obj}, r.URL.Query().Get("includeObject"))
		if err != nil {
			return err
		}
		t.ResourceVersion = metaOf(obj).GetResourceVersion()
		writeTable(w, t)
		return nil
	}
	writeObject(w, http.StatusOK, obj)
	return nil
}

// list serves a list, or its Table, whole or a page of it: with limit,
// at most that many objects and a continue token when more are left;
// with continue, the next page of the same list (the objects as they were
// at its resourceVersion, rebuilt from the store's history; 410 Expired
// once that history is gone), as the API server pages from etcd.
func (h *Handler) list(w http.ResponseWriter, r *http.Request, res resource, q listQuery) error {
	var objs []runtime.Object
	var rv uint64
	if q.cont.RV != 0 {
		var ok bool
		if objs, ok = h.store.listAt(res, q.cont.RV); !ok {
			return errContinueExpired()
		}
		rv = q.cont.RV
	} else {
		if err := h.refresh(r.Context()); err != nil {
			return err
		}
		objs, rv = h.store.list(res)
	}
	matched := make([]runtime.Object, 0, len(objs))
	for _, o := range objs {
		if (q.cont.RV == 0 || keyOf(o) > q.cont.Start) && q.matches(res, o) {
			matched = append(matched, o)
		}
	}
	lm := metav1.ListMeta{ResourceVersion: fmt.Sprint(rv)}
	if q.limit > 0 && int64(len(matched)) > q.limit {
		rest := int64(len(matched)) - q.limit
		matched = matched[:q.limit]
		lm.Continue = continueToken{RV: rv, Start: keyOf(matched[len(matched)-1])}.encode()
		lm.RemainingItemCount = &rest
	}
	if wantsTable(r) {
		t, err := h.table(res, matched, r.URL.Query().Get("includeObject"))
		if err != nil {
			return err
		}
		t.ListMeta = lm
		writeTable(w, t)
		return nil
	}
	writeObject(w, http.StatusOK, listObject(res, matched, lm))
	return nil
}

// listObject builds a PodList, EventList or NodeList.
func listObject(res resource, objs []runtime.Object, lm metav1.ListMeta) runtime.Object {
	switch res {
	case resPods:
		l := &v1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, ListMeta: lm, Items: make([]v1.Pod, 0, len(objs))}
		for _, o := range objs {
			item := *o.(*v1.Pod)
			item.TypeMeta = metav1.TypeMeta{} // as the API server: the list's kind says it
			l.Items = append(l.Items, item)
		}
		return l
	case resEvents:
		l := &v1.EventList{TypeMeta: metav1.TypeMeta{Kind: "EventList", APIVersion: "v1"}, ListMeta: lm, Items: make([]v1.Event, 0, len(objs))}
		for _, o := range objs {
			item := *o.(*v1.Event)
			item.TypeMeta = metav1.TypeMeta{} // as the API server: the list's kind says it
			l.Items = append(l.Items, item)
		}
		return l
	default:
		l := &v1.NodeList{TypeMeta: metav1.TypeMeta{Kind: "NodeList", APIVersion: "v1"}, ListMeta: lm, Items: make([]v1.Node, 0, len(objs))}
		for _, o := range objs {
			item := *o.(*v1.Node)
			item.TypeMeta = metav1.TypeMeta{} // as the API server: the list's kind says it
			l.Items = append(l.Items, item)
		}
		return l
	}
}

// copyStream copies a plain stream to the client, flushing as data comes.
func copyStream(w http.ResponseWriter, rc io.Reader) error {
	rctl := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, rerr := rc.Read(buf)
		if n > 0 {
			_ = rctl.SetWriteDeadline(time.Now().Add(time.Minute))
			if _, err := w.Write(buf[:n]); err != nil {
				return err
			}
			if err := rctl.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
				return err
			}
		}
		if rerr != nil {
			if errors.Is(rerr, io.EOF) {
				return nil
			}
			return rerr
		}
	}
}
