package kubeapi

import (
	"reflect"
	"sort"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// resource names a kind the store keeps: "pods", "events", "nodes".
type resource string

const (
	resPods   resource = "pods"
	resEvents resource = "events"
	resNodes  resource = "nodes"
)

// change is one entry of the store's history: an object of res added,
// modified or deleted at resourceVersion rv. obj carries that
// resourceVersion in its metadata (for a deletion, the last state with the
// deletion's resourceVersion, as the API server sends it).
type change struct {
	res resource
	typ watch.EventType
	key string // namespace/name
	obj runtime.Object
	// prev is the state before the change of a modified or deleted
	// object (with its own resourceVersion).
	prev runtime.Object
	rv   uint64
}

// entry is an object as the store holds it, with the version it got when it
// last changed.
type entry struct {
	obj runtime.Object
	rv  uint64
}

// store is the API's versioned view of what the node serves. The node has
// no resourceVersions: the store gives them. Each sync diffs a resource's
// complete current set against the last one by namespace/name and records
// ADDED, MODIFIED and DELETED changes (an object whose UID changed is a
// deletion then an addition, as a replaced pod is to the API server), each
// with the next version of one counter shared by every resource, as etcd's
// revision. The last historySize changes are kept for watches that resume
// from a version; older ones are answered 410 Expired.
type store struct {
	mu      sync.Mutex
	rv      uint64
	objs    map[resource]map[string]entry
	history []change // oldest first, at most historySize
	size    int
	// oldest is the version before which history is gone: a watch from
	// a version < oldest has missed changes.
	oldest uint64
	// wake is closed (and replaced) on every new change.
	wake chan struct{}
}

// newStore returns an empty store whose versions start after seed. Seeded
// with the clock in microseconds, a restarted agent's versions are all
// above its previous run's, so a client resuming a watch from one of those
// is answered 410 Expired and lists again rather than missing changes.
func newStore(historySize int, seed uint64) *store {
	if historySize <= 0 {
		historySize = 1000
	}
	if seed == 0 {
		seed = 1
	}
	return &store{objs: map[resource]map[string]entry{}, size: historySize, wake: make(chan struct{}), rv: seed, oldest: seed}
}

// keyOf is an object's namespace/name (name alone when cluster-scoped).
func keyOf(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	if m.GetNamespace() == "" {
		return m.GetName()
	}
	return m.GetNamespace() + "/" + m.GetName()
}

// sameObject compares two objects ignoring their resourceVersion.
func sameObject(a, b runtime.Object) bool {
	a, b = a.DeepCopyObject(), b.DeepCopyObject()
	setRV(a, 0)
	setRV(b, 0)
	return reflect.DeepEqual(a, b)
}

func setRV(obj runtime.Object, rv uint64) {
	if m, err := meta.Accessor(obj); err == nil {
		if rv == 0 {
			m.SetResourceVersion("")
		} else {
			m.SetResourceVersion(strconv.FormatUint(rv, 10))
		}
	}
}

func uidOf(obj runtime.Object) string {
	if m, err := meta.Accessor(obj); err == nil {
		return string(m.GetUID())
	}
	return ""
}

// sync replaces res's set with objs (which become the store's: callers
// pass copies) and records what changed. It returns the changes.
func (s *store) sync(res resource, objs []runtime.Object) []change {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.objs[res]
	if cur == nil {
		cur = map[string]entry{}
		s.objs[res] = cur
	}
	next := make(map[string]runtime.Object, len(objs))
	keys := make([]string, 0, len(objs))
	for _, o := range objs {
		k := keyOf(o)
		if _, dup := next[k]; dup || k == "" {
			continue // the first of a namespace/name wins, as among sources
		}
		next[k] = o
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []change
	// Deletions first, in key order, so a replaced object's DELETED comes
	// before its ADDED.
	gone := make([]string, 0)
	for k, e := range cur {
		if o, ok := next[k]; !ok || uidOf(o) != uidOf(e.obj) {
			gone = append(gone, k)
		}
	}
	sort.Strings(gone)
	for _, k := range gone {
		e := cur[k]
		delete(cur, k)
		s.rv++
		last := e.obj.DeepCopyObject()
		setRV(last, s.rv)
		out = append(out, s.record(change{res: res, typ: watch.Deleted, key: k, obj: last, prev: e.obj, rv: s.rv}))
	}
	for _, k := range keys {
		o := next[k]
		e, ok := cur[k]
		if ok && sameObject(e.obj, o) {
			continue
		}
		s.rv++
		setRV(o, s.rv)
		typ, prev := watch.Modified, e.obj
		if !ok {
			typ = watch.Added
		}
		cur[k] = entry{obj: o, rv: s.rv}
		out = append(out, s.record(change{res: res, typ: typ, key: k, obj: o, prev: prev, rv: s.rv}))
	}
	if len(out) > 0 {
		close(s.wake)
		s.wake = make(chan struct{})
	}
	return out
}

// record appends c to the history, dropping the oldest beyond its size.
// Called with mu held.
func (s *store) record(c change) change {
	s.history = append(s.history, c)
	if over := len(s.history) - s.size; over > 0 {
		s.oldest = s.history[over-1].rv
		s.history = append(s.history[:0:0], s.history[over:]...)
	}
	return c
}

// list returns res's objects sorted by key, and the store's version.
func (s *store) list(res resource) ([]runtime.Object, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := make(map[string]runtime.Object, len(s.objs[res]))
	for k, e := range s.objs[res] {
		cur[k] = e.obj
	}
	return sortedByKey(cur), s.rv
}

// listAt returns res's objects as they were at version rv, sorted by key:
// the current set with the later changes undone, newest first (an
// addition removed, a modification or deletion put back to its state
// before). ok is false when changes after rv are no longer kept, or rv is
// not a version the store has reached.
func (s *store) listAt(res resource, rv uint64) (_ []runtime.Object, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rv < s.oldest || rv > s.rv {
		return nil, false
	}
	state := make(map[string]runtime.Object, len(s.objs[res]))
	for k, e := range s.objs[res] {
		state[k] = e.obj
	}
	for i := len(s.history) - 1; i >= 0 && s.history[i].rv > rv; i-- {
		switch c := s.history[i]; {
		case c.res != res:
		case c.typ == watch.Added:
			delete(state, c.key)
		default:
			state[c.key] = c.prev
		}
	}
	return sortedByKey(state), true
}

func sortedByKey(m map[string]runtime.Object) []runtime.Object {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]runtime.Object, 0, len(keys))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

// get returns one object of res.
func (s *store) get(res resource, key string) (runtime.Object, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.objs[res][key]
	return e.obj, ok
}

// version is the store's current resourceVersion.
func (s *store) version() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rv
}

// since returns res's changes after version from (oldest first), the
// store's version, and a channel closed at the next change. expired is
// true when changes after from are no longer kept.
func (s *store) since(res resource, from uint64) (out []change, now uint64, wake <-chan struct{}, expired bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if from < s.oldest {
		return nil, s.rv, s.wake, true
	}
	i := sort.Search(len(s.history), func(i int) bool { return s.history[i].rv > from })
	for _, c := range s.history[i:] {
		if c.res == res {
			out = append(out, c)
		}
	}
	return out, s.rv, s.wake, false
}
