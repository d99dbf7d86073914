package etcd

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/actorlet/actorlet/internal/manifest"
	"github.com/actorlet/actorlet/sources"
)

// KeyError is a problem with one etcd key's value. Its message is
// "etcd key <key>: <cause>", the cause naming the field where it can.
type KeyError struct {
	Key string
	Err error
}

func (e *KeyError) Error() string { return fmt.Sprintf("etcd key %s: %v", e.Key, e.Err) }

// Unwrap returns the cause.
func (e *KeyError) Unwrap() error { return e.Err }

// entry is what the source knows of one key.
type entry struct {
	modRev  int64
	good    *manifest.Object // the last good object of the key; nil if it never had one
	problem error            // the current value's problem, nil when it is good
}

// state is the source's view of its keys. It is used by Run's goroutine
// only.
type state struct {
	src     *Source
	rev     int64 // the revision the set is complete at; 0: read everything
	entries map[string]*entry

	sent    bool   // a successful update has been sent
	sentKey string // summary of the last successful update sent
	failed  bool   // the last update sent carried Err
	lastErr string // its message
}

func newState(s *Source) *state {
	return &state{src: s, entries: map[string]*entry{}}
}

// put takes a key's new value, read at modRev. A key of the range that
// holds no desired object (heartbeat, events) is skipped.
func (st *state) put(key string, value []byte, modRev int64) {
	if k, ok := st.src.keys.Parse(key); ok && k.Kind != KindPods && k.Kind != KindConfigMaps && k.Kind != KindSecrets {
		return
	}
	e := st.entries[key]
	if e != nil && e.modRev == modRev {
		return
	}
	if e == nil {
		e = &entry{}
		st.entries[key] = e
	}
	e.modRev = modRev
	obj, warnings, err := st.src.load(key, value)
	for _, w := range warnings {
		st.src.log.Warn("pod field ignored", zap.String("key", key), zap.String("warning", w))
	}
	if err != nil {
		e.problem = err
		switch {
		case e.good != nil && e.good.Pod != nil:
			st.src.log.Error("pod value rejected; its pod keeps its last good spec", zap.Error(err),
				zap.String("uid", string(e.good.Pod.UID)))
		case e.good != nil:
			st.src.log.Error("value rejected; it keeps its last good version", zap.Error(err), zap.String("object", e.good.What()))
		default:
			st.src.log.Error("value rejected", zap.Error(err))
		}
		return
	}
	e.good, e.problem = &obj, nil
}

// del forgets a deleted key, and its last good pod with it.
func (st *state) del(key string) { delete(st.entries, key) }

// replaceAll makes kvs, a full read, the set. A key whose value did not
// change (same mod revision) is not decoded again, and one that turned bad
// keeps its last good pod.
func (st *state) replaceAll(kvs []*mvccpb.KeyValue) {
	seen := make(map[string]bool, len(kvs))
	for _, kv := range kvs {
		seen[string(kv.Key)] = true
		st.put(string(kv.Key), kv.Value, kv.ModRevision)
	}
	for k := range st.entries {
		if !seen[k] {
			delete(st.entries, k)
		}
	}
}

// update returns the current set, ordered by key, with the problems, and
// a summary that changes whenever either does.
func (st *state) update() (sources.Update, string) {
	keys := make([]string, 0, len(st.entries))
	for k := range st.entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	u := sources.Update{Source: st.src.Name()}
	var set manifest.Objects
	var sum strings.Builder
	byUID := map[types.UID]string{}
	for _, k := range keys {
		e := st.entries[k]
		if e.problem != nil {
			u.Problems = append(u.Problems, e.problem)
			sum.WriteString("problem " + e.problem.Error() + "\n")
		}
		if e.good == nil {
			continue
		}
		if pod := e.good.Pod; pod != nil {
			if first, dup := byUID[pod.UID]; dup {
				err := &KeyError{Key: k, Err: field.Duplicate(field.NewPath("metadata", "uid"),
					fmt.Sprintf("%s (also the UID of key %s, which comes first and wins; this key is ignored)", pod.UID, first))}
				u.Problems = append(u.Problems, err)
				sum.WriteString("problem " + err.Error() + "\n")
				continue
			}
			byUID[pod.UID] = k
		}
		set.Add(*e.good)
		sum.WriteString("object " + k + " " + e.good.Fingerprint + "\n")
	}
	u.Pods, u.ConfigMaps, u.Secrets = set.Pods, set.ConfigMaps, set.Secrets
	return u, sum.String()
}

// succeed sends the set when it is the first, when it changed, or when it
// follows a failure (which clears the node's error).
func (st *state) succeed(sink func(sources.Update)) {
	if st.rev == 0 {
		return // nothing read yet: there is no set to send
	}
	u, key := st.update()
	if st.sent && !st.failed && key == st.sentKey {
		return
	}
	if st.failed {
		st.src.log.Info("etcd answers again; sending the current set", zap.Int("pods", len(u.Pods)))
	}
	st.sent, st.sentKey, st.failed, st.lastErr = true, key, false, ""
	sink(u)
}

// fail sends err as the source's failure, once per distinct error.
func (st *state) fail(err error, sink func(sources.Update)) {
	if st.failed && err.Error() == st.lastErr {
		return
	}
	st.src.log.Error("etcd source failing; the node keeps the last set of pods", zap.Error(err))
	st.failed, st.lastErr = true, err.Error()
	sink(sources.Update{Source: st.src.Name(), Err: err})
}

// load decodes, defaults and validates one key's value, an object of the
// key's kind, and gives a pod its UID and annotations. Errors are
// *KeyError naming the key and the field, never a Secret's value.
func (s *Source) load(key string, value []byte) (manifest.Object, []string, error) {
	k, ok := s.keys.Parse(key)
	if !ok || k.Node != s.node || k.Kind != KindPods && k.Kind != KindConfigMaps && k.Kind != KindSecrets {
		return manifest.Object{}, nil, &KeyError{Key: key, Err: fmt.Errorf("not a pod key: want %s<namespace>/<name>", s.prefix)}
	}
	if k.Kind != KindPods {
		return s.loadConfigData(k, key, value)
	}
	pod, err := manifest.Decode(key, value)
	if err != nil {
		return manifest.Object{}, nil, keyError(key, err)
	}
	if err := nameFromKey(&pod.ObjectMeta, k); err != nil {
		return manifest.Object{}, nil, &KeyError{Key: key, Err: err}
	}
	manifest.SetDefaults(pod)
	warnings, err := manifest.ValidateWith(pod, s.validate)
	if err != nil {
		return manifest.Object{}, warnings, &KeyError{Key: key, Err: err}
	}
	pod.UID = manifest.StaticPodUID(s.node, "etcd:"+key, pod)
	if pod.Annotations == nil {
		pod.Annotations = make(map[string]string, 3)
	}
	pod.Annotations[manifest.AnnotationConfigSource] = ConfigSourceEtcd
	pod.Annotations[manifest.AnnotationConfigHash] = string(pod.UID)
	pod.Annotations[AnnotationSourceKey] = key
	return manifest.NewObject(manifest.Document{Pod: pod}), warnings, nil
}

// loadConfigData loads the value of a configmaps or secrets key: one
// ConfigMap or Secret, read as every source reads them
// (manifest.Document.LoadConfigData).
func (s *Source) loadConfigData(k Key, key string, value []byte) (manifest.Object, []string, error) {
	want := manifest.ConfigMapKind
	if k.Kind == KindSecrets {
		want = manifest.SecretKind
	}
	docs, err := manifest.DecodeDocuments(key, value, manifest.DecodeOptions{Strict: true})
	switch {
	case err != nil:
		return manifest.Object{}, nil, keyError(key, err)
	case len(docs) != 1:
		return manifest.Object{}, nil, &KeyError{Key: key, Err: fmt.Errorf("found %d YAML documents: want one %s", len(docs), want)}
	}
	d := &docs[0]
	if d.Err != nil {
		return manifest.Object{}, nil, keyError(key, d.Err)
	}
	if d.Kind != want {
		return manifest.Object{}, nil, &KeyError{Key: key, Err: field.NotSupported(field.NewPath("kind"), d.Kind, []string{want})}
	}
	var meta *metav1.ObjectMeta
	if d.ConfigMap != nil {
		meta = &d.ConfigMap.ObjectMeta
	} else {
		meta = &d.Secret.ObjectMeta
	}
	if err := nameFromKey(meta, k); err != nil {
		return manifest.Object{}, nil, &KeyError{Key: key, Err: err}
	}
	if d.LoadConfigData(key, false, AnnotationSourceKey, key); d.Err != nil {
		return manifest.Object{}, nil, keyError(key, d.Err)
	}
	return manifest.NewObject(*d), nil, nil
}

// keyError is err, a manifest error naming key as its path, as a
// *KeyError naming the key once.
func keyError(key string, err error) error {
	var fe *manifest.FileError
	if errors.As(err, &fe) {
		err = fe.Err // named with the key below
	}
	return &KeyError{Key: key, Err: err}
}

// nameFromKey fills an object's metadata.namespace and metadata.name from
// its key k when they are left out, and requires them to match it when
// given.
func nameFromKey(meta *metav1.ObjectMeta, k Key) error {
	path := field.NewPath("metadata")
	var errs field.ErrorList
	if meta.Namespace == "" {
		meta.Namespace = k.Namespace
	} else if meta.Namespace != k.Namespace {
		errs = append(errs, field.Invalid(path.Child("namespace"), meta.Namespace,
			fmt.Sprintf("must be the key's namespace %q", k.Namespace)))
	}
	if meta.Name == "" {
		meta.Name = k.Name
	} else if meta.Name != k.Name {
		errs = append(errs, field.Invalid(path.Child("name"), meta.Name, fmt.Sprintf("must be the key's name %q", k.Name)))
	}
	return errs.ToAggregate()
}
