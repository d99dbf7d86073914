// Package objstore merges the ConfigMaps and Secrets of a node's sources
// into one set, as the node merges their pods: of two definitions of one
// kind and namespace/name, the source first by name wins (within a
// source, each source already keeps one per namespace/name). An object
// set immutable keeps its data until it is deleted. A pod sees
// only the objects of its own namespace it refers to (ObjectsFor). It is
// pure: no I/O, no clock; the node actor holds one Store.
package objstore

import (
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/actorlet/actorlet/internal/podsync"
)

// Set is one source's ConfigMaps and Secrets.
type Set struct {
	ConfigMaps []*v1.ConfigMap
	Secrets    []*v1.Secret
}

// Duplicate is an object two sources define; IgnoredSource's loses.
type Duplicate struct {
	Kind, Name    string // Name is namespace/name
	IgnoredSource string
}

// Store is the merged set.
type Store struct {
	sets       map[string]Set
	configMaps map[string]map[string]*v1.ConfigMap // namespace → name → object
	secrets    map[string]map[string]*v1.Secret
	dups       []Duplicate // the last merge's
	imm        []Immutable // the last merge's
}

// New returns an empty store.
func New() *Store { return &Store{sets: map[string]Set{}} }

// Immutable is an object set `immutable: true` whose data a source
// changed: the node keeps the version it has, as the API server refuses
// such an update, until the object is deleted (from every source) and
// defined anew.
type Immutable struct {
	Kind, Name string // Name is namespace/name
}

// Put replaces source's set and merges again. It returns the duplicates
// and the refused changes of immutable objects that are new since the
// last merge (to warn about once each).
func (s *Store) Put(source string, set Set) ([]Duplicate, []Immutable) {
	s.sets[source] = set
	return s.merge()
}

func (s *Store) merge() ([]Duplicate, []Immutable) {
	cms := map[string]map[string]*v1.ConfigMap{}
	secrets := map[string]map[string]*v1.Secret{}
	var dups []Duplicate
	for _, src := range slices.Sorted(maps.Keys(s.sets)) {
		for _, cm := range s.sets[src].ConfigMaps {
			if put(cms, cm.Namespace, cm.Name, cm) {
				dups = append(dups, Duplicate{Kind: "ConfigMap", Name: cm.Namespace + "/" + cm.Name, IgnoredSource: src})
			}
		}
		for _, sec := range s.sets[src].Secrets {
			if put(secrets, sec.Namespace, sec.Name, sec) {
				dups = append(dups, Duplicate{Kind: "Secret", Name: sec.Namespace + "/" + sec.Name, IgnoredSource: src})
			}
		}
	}
	var imm []Immutable
	for ns, byName := range cms {
		for name, cm := range byName {
			old := s.configMaps[ns][name]
			if old != nil && isTrue(old.Immutable) && !(equality.Semantic.DeepEqual(old.Data, cm.Data) && equality.Semantic.DeepEqual(old.BinaryData, cm.BinaryData)) {
				byName[name] = old
				imm = append(imm, Immutable{Kind: "ConfigMap", Name: ns + "/" + name})
			}
		}
	}
	for ns, byName := range secrets {
		for name, sec := range byName {
			old := s.secrets[ns][name]
			if old != nil && isTrue(old.Immutable) && !equality.Semantic.DeepEqual(old.Data, sec.Data) {
				byName[name] = old
				imm = append(imm, Immutable{Kind: "Secret", Name: ns + "/" + name})
			}
		}
	}
	slices.SortFunc(imm, func(a, b Immutable) int { return strings.Compare(a.Kind+" "+a.Name, b.Kind+" "+b.Name) })
	var fresh []Duplicate
	for _, d := range dups {
		if !slices.Contains(s.dups, d) {
			fresh = append(fresh, d)
		}
	}
	var freshImm []Immutable
	for _, i := range imm {
		if !slices.Contains(s.imm, i) {
			freshImm = append(freshImm, i)
		}
	}
	s.configMaps, s.secrets, s.dups, s.imm = cms, secrets, dups, imm
	return fresh, freshImm
}

func isTrue(b *bool) bool { return b != nil && *b }

// put adds obj unless the namespace/name is taken, and reports whether it
// was.
func put[T any](m map[string]map[string]T, ns, name string, obj T) bool {
	if m[ns] == nil {
		m[ns] = map[string]T{}
	}
	if _, ok := m[ns][name]; ok {
		return true
	}
	m[ns][name] = obj
	return false
}

// ObjectsFor is what pod sees: the objects of its namespace it refers to.
func (s *Store) ObjectsFor(pod *v1.Pod) podsync.Objects {
	return podsync.ObjectsFor(pod, s.configMaps[pod.Namespace], s.secrets[pod.Namespace])
}

// ConfigMap returns the ConfigMap namespace/name (nil: none).
func (s *Store) ConfigMap(namespace, name string) *v1.ConfigMap { return s.configMaps[namespace][name] }

// Secret returns the Secret namespace/name (nil: none).
func (s *Store) Secret(namespace, name string) *v1.Secret { return s.secrets[namespace][name] }
