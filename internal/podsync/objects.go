package podsync

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// Objects are the ConfigMaps and Secrets of a pod's namespace that the pod
// refers to and that exist, by name: what its configMap and secret
// volumes (and projected sources) and its env valueFrom and envFrom
// resolve. A name the pod refers to that is not here does not exist (yet).
// The maps and objects are read only.
//
// A Secret's data never leaves through String or JSON: both give names
// only, so an Objects value that reaches a log (a dead letter, a %v) shows
// no secret.
type Objects struct {
	ConfigMaps map[string]*v1.ConfigMap
	Secrets    map[string]*v1.Secret
}

// Equal reports whether o and p hold the same objects (names and
// content).
func (o Objects) Equal(p Objects) bool {
	if len(o.ConfigMaps) != len(p.ConfigMaps) || len(o.Secrets) != len(p.Secrets) {
		return false
	}
	for name, cm := range o.ConfigMaps {
		other, ok := p.ConfigMaps[name]
		if !ok || !(cm == other || equality.Semantic.DeepEqual(cm.Data, other.Data) && equality.Semantic.DeepEqual(cm.BinaryData, other.BinaryData)) {
			return false
		}
	}
	for name, s := range o.Secrets {
		other, ok := p.Secrets[name]
		if !ok || !(s == other || equality.Semantic.DeepEqual(s.Data, other.Data)) {
			return false
		}
	}
	return true
}

// String names the objects, never their data.
func (o Objects) String() string {
	return fmt.Sprintf("configMaps %v secrets %v", slices.Sorted(maps.Keys(o.ConfigMaps)), slices.Sorted(maps.Keys(o.Secrets)))
}

// MarshalJSON names the objects, never their data.
func (o Objects) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string][]string{
		"configMaps": slices.Sorted(maps.Keys(o.ConfigMaps)),
		"secrets":    slices.Sorted(maps.Keys(o.Secrets)),
	})
}

// References lists, sorted and without repeats, the names of the
// ConfigMaps and Secrets of its namespace pod refers to: configMap and
// secret volumes, projected volumes' configMap and secret sources, and
// every init and app container's env valueFrom.configMapKeyRef and
// secretKeyRef and envFrom.
func References(pod *v1.Pod) (configMaps, secrets []string) {
	if pod == nil {
		return nil, nil
	}
	cms, ss := map[string]bool{}, map[string]bool{}
	for _, vol := range pod.Spec.Volumes {
		switch {
		case vol.ConfigMap != nil:
			cms[vol.ConfigMap.Name] = true
		case vol.Secret != nil:
			ss[vol.Secret.SecretName] = true
		case vol.Projected != nil:
			for _, src := range vol.Projected.Sources {
				if src.ConfigMap != nil {
					cms[src.ConfigMap.Name] = true
				}
				if src.Secret != nil {
					ss[src.Secret.Name] = true
				}
			}
		}
	}
	for _, c := range allContainers(pod) {
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				cms[r.Name] = true
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				ss[r.Name] = true
			}
		}
		for _, ef := range c.EnvFrom {
			if ef.ConfigMapRef != nil {
				cms[ef.ConfigMapRef.Name] = true
			}
			if ef.SecretRef != nil {
				ss[ef.SecretRef.Name] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(cms)), slices.Sorted(maps.Keys(ss))
}

// ObjectsFor picks, from the ConfigMaps and Secrets of pod's namespace
// (by name), those pod refers to (see References).
func ObjectsFor(pod *v1.Pod, configMaps map[string]*v1.ConfigMap, secrets map[string]*v1.Secret) Objects {
	var o Objects
	cms, ss := References(pod)
	for _, name := range cms {
		if cm, ok := configMaps[name]; ok {
			if o.ConfigMaps == nil {
				o.ConfigMaps = map[string]*v1.ConfigMap{}
			}
			o.ConfigMaps[name] = cm
		}
	}
	for _, name := range ss {
		if s, ok := secrets[name]; ok {
			if o.Secrets == nil {
				o.Secrets = map[string]*v1.Secret{}
			}
			o.Secrets[name] = s
		}
	}
	return o
}

// ObjectError is a ConfigMap or Secret (or one of its keys) a pod needs
// and the node does not have. Msg is the kubelet's wording (`configmap
// "app" not found`, `couldn't find key url in ConfigMap default/app`,
// `configmap references non-existent config key: url`); it names objects
// and keys, never a value.
type ObjectError struct {
	Msg string
}

func (e *ObjectError) Error() string { return e.Msg }

// Kinds as the kubelet's not-found errors name them.
const (
	kindConfigMap = "configmap"
	kindSecret    = "secret"
)

func notFound(kind, name string) *ObjectError {
	return &ObjectError{Msg: fmt.Sprintf("%s %q not found", kind, name)}
}

// isOptional reads an optional field.
func isOptional(b *bool) bool { return b != nil && *b }

// objectData is a ConfigMap's data and binaryData, or a Secret's data, as
// bytes by key.
func configMapData(cm *v1.ConfigMap) map[string][]byte {
	out := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.Data {
		out[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		out[k] = v
	}
	return out
}

// secretName is "namespace/name", as the kubelet's messages write it.
func qualified(pod *v1.Pod, name string) string {
	return pod.Namespace + "/" + name
}

// hasObjectVolume reports whether pod has a configMap or secret volume, or
// a projected volume with such a source: volumes a change of its objects
// rewrites.
func hasObjectVolume(pod *v1.Pod) bool {
	for _, vol := range pod.Spec.Volumes {
		if vol.ConfigMap != nil || vol.Secret != nil {
			return true
		}
		if vol.Projected != nil {
			for _, src := range vol.Projected.Sources {
				if src.ConfigMap != nil || src.Secret != nil {
					return true
				}
			}
		}
	}
	return false
}

// HasObjectVolume reports whether pod has volumes whose files come from
// ConfigMaps or Secrets (configMap, secret, projected sources of those
// kinds): a change of those objects is written into them while the pod
// runs.
func HasObjectVolume(pod *v1.Pod) bool { return pod != nil && hasObjectVolume(pod) }

// joinSorted joins keys sorted with ", ".
func joinSorted(keys []string) string {
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}
