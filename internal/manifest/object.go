package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	v1 "k8s.io/api/core/v1"
)

// Object is a source's good object, a Pod, ConfigMap or Secret (one of
// the three set), with a fingerprint to see changes. Every source keys
// its objects by Key and applies the one-winner rule on it.
type Object struct {
	Pod       *v1.Pod
	ConfigMap *v1.ConfigMap
	Secret    *v1.Secret
	// Fingerprint identifies the object's kind, name (a pod's UID) and
	// full content. It never shows a Secret's value.
	Fingerprint string
}

// NewObject returns d's object, loaded (a Pod with its UID), with its
// fingerprint.
func NewObject(d Document) Object {
	o := Object{Pod: d.Pod, ConfigMap: d.ConfigMap, Secret: d.Secret}
	var obj any = d.Pod
	id := ""
	switch {
	case d.Pod != nil:
		id = string(d.Pod.UID)
	case d.ConfigMap != nil:
		obj, id = d.ConfigMap, o.Key()
	case d.Secret != nil:
		obj, id = d.Secret, o.Key()
	}
	data, _ := json.Marshal(obj) // API objects always marshal
	sum := sha256.Sum256(data)
	o.Fingerprint = id + "/" + hex.EncodeToString(sum[:])
	return o
}

// Kind is the object's kind.
func (o Object) Kind() string {
	switch {
	case o.ConfigMap != nil:
		return ConfigMapKind
	case o.Secret != nil:
		return SecretKind
	}
	return PodKind
}

// Name is the object's namespace/name.
func (o Object) Name() string {
	switch {
	case o.ConfigMap != nil:
		return o.ConfigMap.Namespace + "/" + o.ConfigMap.Name
	case o.Secret != nil:
		return o.Secret.Namespace + "/" + o.Secret.Name
	}
	return o.Pod.Namespace + "/" + o.Pod.Name
}

// Key identifies the object among a source's: its kind and
// namespace/name, e.g. "ConfigMap default/conf".
func (o Object) Key() string { return ObjectKey(o.Kind(), o.Name()) }

// ObjectKey is the Key of an object of kind (Pod when it is neither
// ConfigMap nor Secret, e.g. unreadable) and namespace/name.
func ObjectKey(kind, name string) string {
	if kind != ConfigMapKind && kind != SecretKind {
		kind = PodKind
	}
	return kind + " " + name
}

// What names the object in messages: "pod default/web", "ConfigMap
// default/conf".
func (o Object) What() string {
	if o.Pod != nil {
		return "pod " + o.Name()
	}
	return o.Key()
}

// Objects is a source's set of objects by kind, as sources.Update holds
// them.
type Objects struct {
	Pods       []*v1.Pod
	ConfigMaps []*v1.ConfigMap
	Secrets    []*v1.Secret
}

// Add appends o to the set of its kind.
func (s *Objects) Add(o Object) {
	switch {
	case o.Pod != nil:
		s.Pods = append(s.Pods, o.Pod)
	case o.ConfigMap != nil:
		s.ConfigMaps = append(s.ConfigMaps, o.ConfigMap)
	case o.Secret != nil:
		s.Secrets = append(s.Secrets, o.Secret)
	}
}
