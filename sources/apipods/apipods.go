// Package apipods is the source of pods pushed to the node through its
// Kubernetes API (kubectl create, apply, replace, patch, delete): the
// fourth channel of the kubelet's first design, beside files, a URL and
// etcd. Each pod is kept as one JSON file in a directory (actorlet run
// uses <root-dir>/nodes/<node>.api-pods/), written atomically, so pushed
// pods survive a restart of the agent.
//
// A pod is defaulted and validated as a manifest file is, and gets its
// UID the same way: metadata.uid when given, else a hash of the node, the
// source and namespace/name, and the pod, so a change of content replaces
// the pod and a write that changes nothing restarts nothing.
package apipods

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/actorlet/actorlet/internal/manifest"
	"github.com/actorlet/actorlet/sources"
)

// ConfigSourceAPI is the kubernetes.io/config.source annotation of pushed
// pods, as "file", "http" and "etcd" mark the others.
const ConfigSourceAPI = "api"

// ErrNotFound: no pushed pod of that namespace/name.
var ErrNotFound = errors.New("no such pod pushed through the API")

// ErrExists: a pushed pod of that namespace/name exists already.
var ErrExists = errors.New("pod already exists")

// Source keeps the pods pushed through the API. Create it with New; it is
// safe for concurrent use.
type Source struct {
	dir, node string
	validate  manifest.ValidationOptions
	log       *zap.Logger
	now       func() time.Time

	mu      sync.Mutex
	loaded  bool
	pods    map[string]*v1.Pod // namespace/name → the pod as pushed (defaulted, no status, UID only when given)
	changed chan struct{}      // holds a value when the set changed since Run last sent it
	loadErr error
}

// Option configures a Source.
type Option func(*Source)

// WithValidation sets what the operator allows (privileged, hostPath).
func WithValidation(v sources.Validation) Option {
	return func(s *Source) { s.validate = manifest.ValidationOptions(v) }
}

// WithLogger sets the logger.
func WithLogger(l *zap.Logger) Option { return func(s *Source) { s.log = l } }

// New returns the source keeping its pods in dir (created when missing).
func New(dir, node string, opts ...Option) *Source {
	s := &Source{dir: dir, node: node, log: zap.NewNop(), now: time.Now, pods: map[string]*v1.Pod{}, changed: make(chan struct{}, 1)}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Name is "api:<dir>".
func (s *Source) Name() string { return "api:" + s.dir }

// Dir is where the pods are kept.
func (s *Source) Dir() string { return s.dir }

// fileName is the file of namespace/name: "_" is in neither.
func fileName(ns, name string) string { return ns + "_" + name + ".json" }

// load reads the directory once. A file that does not read or validate is
// a problem (logged, reported) and is left where it is.
func (s *Source) load() []error {
	if s.loaded {
		return nil
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		s.loadErr = fmt.Errorf("api pods directory %s: %w", s.dir, err)
		return nil
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		s.loadErr = fmt.Errorf("api pods directory %s: %w", s.dir, err)
		return nil
	}
	s.loaded, s.loadErr = true, nil
	var problems []error
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(s.dir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			problems = append(problems, fmt.Errorf("api pod file %s: %w", path, err))
			continue
		}
		pod, _, err := s.check(path, data, true)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		s.pods[pod.Namespace+"/"+pod.Name] = pod
	}
	return problems
}

// Run sends the pushed pods, then the whole set again after every change,
// until ctx ends.
func (s *Source) Run(ctx context.Context, sink func(sources.Update)) error {
	for {
		s.mu.Lock()
		problems := s.load()
		err, loaded := s.loadErr, s.loaded
		u := sources.Update{Source: s.Name(), Problems: problems, Err: err}
		if loaded {
			u.Pods = s.runnable()
		}
		s.mu.Unlock()
		for _, p := range problems {
			s.log.Warn("api pod refused", zap.Error(p))
		}
		sink(u)
		var retry <-chan time.Time
		if !loaded {
			retry = time.After(5 * time.Second) // the directory could not be read: try again
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.changed:
		case <-retry:
		}
	}
}

// runnable returns the pods as the node runs them: with their UID and
// source annotations. Called with mu held.
func (s *Source) runnable() []*v1.Pod {
	keys := make([]string, 0, len(s.pods))
	for k := range s.pods {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*v1.Pod, 0, len(keys))
	for _, k := range keys {
		out = append(out, s.withUID(s.pods[k]))
	}
	return out
}

// withUID returns a copy of a pushed pod with its UID and annotations.
func (s *Source) withUID(p *v1.Pod) *v1.Pod {
	c := p.DeepCopy()
	if c.UID == "" {
		c.UID = manifest.StaticPodUID(s.node, s.Name()+"#"+c.Namespace+"/"+c.Name, p)
	}
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[manifest.AnnotationConfigSource] = ConfigSourceAPI
	c.Annotations[manifest.AnnotationConfigHash] = string(c.UID)
	return c
}

// check decodes, defaults and validates a pod as a manifest file is
// (strict: an unknown field is an error; else it is a warning), and
// returns it without status. what names it in errors.
func (s *Source) check(what string, data []byte, strict bool) (*v1.Pod, []string, error) {
	docs, err := manifest.DecodeDocuments(what, data, manifest.DecodeOptions{Strict: strict})
	if err != nil {
		return nil, nil, err
	}
	if len(docs) != 1 {
		return nil, nil, fmt.Errorf("%s: want one pod, found %d documents", what, len(docs))
	}
	d := docs[0]
	if d.Err != nil {
		return nil, d.Warnings, d.Err
	}
	if d.Pod == nil {
		return nil, d.Warnings, fmt.Errorf("%s: kind %q: only a v1 Pod can be pushed", what, d.Kind)
	}
	return s.checkPod(what, d.Pod, d.Warnings)
}

// checkPod defaults and validates a decoded pod.
func (s *Source) checkPod(what string, pod *v1.Pod, warnings []string) (*v1.Pod, []string, error) {
	pod = pod.DeepCopy()
	pod.TypeMeta = metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}
	pod.Status = v1.PodStatus{}
	pod.ResourceVersion, pod.SelfLink, pod.ManagedFields, pod.Generation = "", "", nil, 0
	pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = nil, nil
	pod.Spec.NodeName = ""
	if pod.Annotations != nil {
		delete(pod.Annotations, manifest.AnnotationConfigSource)
		delete(pod.Annotations, manifest.AnnotationConfigHash)
		if len(pod.Annotations) == 0 {
			pod.Annotations = nil
		}
	}
	manifest.SetDefaults(pod)
	w, err := manifest.ValidateWith(pod, s.validate)
	warnings = append(warnings, w...)
	if err != nil {
		return nil, warnings, &manifest.FileError{Path: what, Err: err}
	}
	if errs := validation.IsDNS1123Subdomain(pod.Name); len(errs) > 0 {
		return nil, warnings, fmt.Errorf("%s: metadata.name %q: %s", what, pod.Name, strings.Join(errs, "; "))
	}
	return pod, warnings, nil
}

// Get returns the pushed pod namespace/name with its UID, or false.
func (s *Source) Get(ns, name string) (*v1.Pod, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.load()
	p, ok := s.pods[ns+"/"+name]
	if !ok {
		return nil, false
	}
	return s.withUID(p), true
}

// Stored returns the pushed pod as written (defaulted, no UID unless
// given), the base of a patch.
func (s *Source) Stored(ns, name string) (*v1.Pod, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.load()
	p, ok := s.pods[ns+"/"+name]
	if !ok {
		return nil, false
	}
	return p.DeepCopy(), true
}

// PutOptions say how Put treats the pod.
type PutOptions struct {
	// Create refuses a pod that exists (ErrExists); otherwise one that
	// does not exist is refused (ErrNotFound).
	Create bool
	// DryRun checks and answers without storing.
	DryRun bool
}

// Put checks a decoded pod (its namespace and name set) and stores it,
// replacing the pushed pod of its namespace/name. It returns the pod as
// the node runs it (with its UID), and warnings.
func (s *Source) Put(pod *v1.Pod, opts PutOptions) (*v1.Pod, []string, error) {
	what := fmt.Sprintf("pod %s/%s", pod.Namespace, pod.Name)
	checked, warnings, err := s.checkPod(what, pod, nil)
	if err != nil {
		return nil, warnings, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.load()
	if s.loadErr != nil {
		return nil, warnings, s.loadErr
	}
	key := checked.Namespace + "/" + checked.Name
	old, exists := s.pods[key]
	switch {
	case opts.Create && exists:
		return nil, warnings, fmt.Errorf("%s: %w", what, ErrExists)
	case !opts.Create && !exists:
		return nil, warnings, fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	if exists {
		checked.CreationTimestamp = old.CreationTimestamp
	} else {
		checked.CreationTimestamp = metav1.NewTime(s.now().Truncate(time.Second))
	}
	if opts.DryRun {
		return s.withUID(checked), warnings, nil
	}
	data, err := json.MarshalIndent(checked, "", "  ")
	if err != nil {
		return nil, warnings, fmt.Errorf("%s: encoding: %w", what, err)
	}
	if err := writeAtomic(filepath.Join(s.dir, fileName(checked.Namespace, checked.Name)), data); err != nil {
		return nil, warnings, fmt.Errorf("%s: %w", what, err)
	}
	s.pods[key] = checked
	s.notify()
	return s.withUID(checked), warnings, nil
}

// Delete removes the pushed pod namespace/name and returns it.
func (s *Source) Delete(ns, name string, dryRun bool) (*v1.Pod, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.load()
	key := ns + "/" + name
	p, ok := s.pods[key]
	if !ok {
		return nil, fmt.Errorf("pod %s: %w", key, ErrNotFound)
	}
	out := s.withUID(p)
	if dryRun {
		return out, nil
	}
	if err := os.Remove(filepath.Join(s.dir, fileName(ns, name))); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("pod %s: %w", key, err)
	}
	delete(s.pods, key)
	s.notify()
	return out, nil
}

func (s *Source) notify() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// writeAtomic writes data to path through a temporary file and a rename,
// so a crash leaves the old file or the new one.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
