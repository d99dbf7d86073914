package podsync

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Field paths an env var's valueFrom.fieldRef may name (besides the
// subscripted metadata.labels['<key>'] and metadata.annotations['<key>']).
const (
	FieldPodName            = "metadata.name"
	FieldPodNamespace       = "metadata.namespace"
	FieldPodUID             = "metadata.uid"
	FieldNodeName           = "spec.nodeName"
	FieldServiceAccountName = "spec.serviceAccountName"
)

// Subscripted field paths: prefix, key, then "']".
const (
	fieldLabelsPrefix      = "metadata.labels['"
	fieldAnnotationsPrefix = "metadata.annotations['"
	fieldSubscriptEnd      = "']"
)

// Status field paths a fieldRef may name: the pod's and the node's
// addresses.
const (
	FieldPodIP   = "status.podIP"
	FieldPodIPs  = "status.podIPs"
	FieldHostIP  = "status.hostIP"
	FieldHostIPs = "status.hostIPs"
)

// Downward is what the downward API (env fieldRef and resourceFieldRef,
// downwardAPI volumes) resolves beyond the pod's own spec: where the pod
// runs and the addresses it has there.
type Downward struct {
	// NodeName is spec.nodeName: a static pod runs where it is read.
	NodeName string
	// HostIPs are the node's addresses (status.hostIP is the first);
	// empty: unknown.
	HostIPs []string
	// PodIPs are the addresses of the pod's running sandbox (status.podIP
	// is the first); empty: not known yet. For a hostNetwork pod the
	// kubelet gives the host's addresses: use PodIPsFor.
	PodIPs []string
	// Allocatable is the node's allocatable resources: a resourceFieldRef
	// to a limit the container does not set resolves to it, as the
	// kubelet does.
	Allocatable v1.ResourceList
	// Objects are the ConfigMaps and Secrets of the pod's namespace the pod
	// refers to: env valueFrom.configMapKeyRef and secretKeyRef, envFrom,
	// and configMap, secret and projected volumes resolve them.
	Objects Objects
	// RootDir and ReadVolumeFile: an env valueFrom.fileKeyRef reads its
	// file in the pod's emptyDir (see SpecOptions.ReadVolumeFile).
	RootDir        string
	ReadVolumeFile func(dir, name string) ([]byte, error)
}

// NeedsPodIP reports whether c's env names the pod's address
// (status.podIP or status.podIPs): its spec needs the sandbox's address.
func NeedsPodIP(c *v1.Container) bool {
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			if p := e.ValueFrom.FieldRef.FieldPath; p == FieldPodIP || p == FieldPodIPs {
				return true
			}
		}
	}
	return false
}

// FieldRefValue resolves an env var's valueFrom.fieldRef.fieldPath for pod
// on node, knowing nothing of the pod's or node's addresses (see
// Downward.FieldRef).
func FieldRefValue(node string, pod *v1.Pod, path string) (string, error) {
	return Downward{NodeName: node}.FieldRef(pod, path)
}

// FieldRef resolves a fieldRef.fieldPath for pod as the kubelet does:
// metadata.name, metadata.namespace, metadata.uid,
// metadata.labels['<key>'] and metadata.annotations['<key>'] (empty when
// the key is absent), spec.nodeName, spec.serviceAccountName,
// status.podIP (the first of d.PodIPs, empty when not known),
// status.podIPs (d.PodIPs joined by ","), status.hostIP (the first of
// d.HostIPs: an error when there is none) and status.hostIPs (joined by
// ","). Any other path is an error.
func (d Downward) FieldRef(pod *v1.Pod, path string) (string, error) {
	switch path {
	case FieldPodName:
		return pod.Name, nil
	case FieldPodNamespace:
		return pod.Namespace, nil
	case FieldPodUID:
		return string(pod.UID), nil
	case FieldNodeName:
		return d.NodeName, nil
	case FieldServiceAccountName:
		return pod.Spec.ServiceAccountName, nil
	case FieldPodIP:
		if len(d.PodIPs) == 0 {
			return "", nil
		}
		return d.PodIPs[0], nil
	case FieldPodIPs:
		return strings.Join(d.PodIPs, ","), nil
	case FieldHostIP, FieldHostIPs:
		if len(d.HostIPs) == 0 {
			return "", fmt.Errorf("fieldPath %q: the node's address is not known", path)
		}
		if path == FieldHostIP {
			return d.HostIPs[0], nil
		}
		return strings.Join(d.HostIPs, ","), nil
	}
	if key, ok := subscript(path, fieldLabelsPrefix); ok {
		return pod.Labels[key], nil
	}
	if key, ok := subscript(path, fieldAnnotationsPrefix); ok {
		return pod.Annotations[key], nil
	}
	return "", fmt.Errorf("fieldPath %q is not supported by actorlet", path)
}

// subscript returns key when path is prefix + key + "']" with a non-empty
// key.
func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix)
	if !ok {
		return "", false
	}
	key, ok := strings.CutSuffix(rest, fieldSubscriptEnd)
	return key, ok && key != ""
}

// containerEnv returns c's environment as KEY=VALUE and the variables by
// name for expanding command and args, as the kubelet makes it: first
// envFrom, each source's keys (sorted) with its prefix, a later source
// overriding an earlier one, keys that are no valid variable name skipped
// (see EnvFromSkipped); then env in spec order, each replacing a variable
// of the same name. A value has $(VAR) references to variables defined
// before it (envFrom's included) expanded; a valueFrom.fieldRef is
// resolved by Downward.FieldRef, a valueFrom.resourceFieldRef by
// Downward.ResourceFieldRef, a configMapKeyRef or secretKeyRef from
// d.Objects, a fileKeyRef from its file (fileKeyValue; none expanded). A ConfigMap, Secret or key that is missing
// and not optional is an *ObjectError with the kubelet's words; an
// optional one leaves the variable out (envFrom: the source).
func containerEnv(d Downward, pod *v1.Pod, c *v1.Container) ([]string, map[string]string, error) {
	if len(c.Env) == 0 && len(c.EnvFrom) == 0 {
		return nil, nil, nil
	}
	var names []string
	vars := make(map[string]string, len(c.Env))
	set := func(name, val string) {
		if _, ok := vars[name]; !ok {
			names = append(names, name)
		}
		vars[name] = val
	}
	for i, ef := range c.EnvFrom {
		data, _, err := envFromData(d.Objects, pod, ef)
		if err != nil {
			return nil, nil, fmt.Errorf("envFrom[%d]: %w", i, err)
		}
		for _, k := range slices.Sorted(maps.Keys(data)) {
			if len(validation.IsRelaxedEnvVarName(ef.Prefix+k)) == 0 {
				set(ef.Prefix+k, data[k])
			}
		}
	}
	for i, e := range c.Env {
		val := e.Value
		switch {
		case e.ValueFrom == nil:
			val = expand(val, vars)
		case e.ValueFrom.FieldRef != nil:
			v, err := d.FieldRef(pod, e.ValueFrom.FieldRef.FieldPath)
			if err != nil {
				return nil, nil, fmt.Errorf("env[%d].valueFrom.fieldRef: %w", i, err)
			}
			val = v
		case e.ValueFrom.ResourceFieldRef != nil:
			v, err := d.ResourceFieldRef(pod, c, e.ValueFrom.ResourceFieldRef)
			if err != nil {
				return nil, nil, fmt.Errorf("env[%d].valueFrom.resourceFieldRef: %w", i, err)
			}
			val = v
		case e.ValueFrom.ConfigMapKeyRef != nil:
			v, ok, err := configMapKeyValue(d.Objects, pod, e.ValueFrom.ConfigMapKeyRef)
			if err != nil {
				return nil, nil, fmt.Errorf("env[%d].valueFrom.configMapKeyRef: %w", i, err)
			}
			if !ok {
				continue // optional and missing: no variable
			}
			val = v
		case e.ValueFrom.SecretKeyRef != nil:
			v, ok, err := secretKeyValue(d.Objects, pod, e.ValueFrom.SecretKeyRef)
			if err != nil {
				return nil, nil, fmt.Errorf("env[%d].valueFrom.secretKeyRef: %w", i, err)
			}
			if !ok {
				continue
			}
			val = v
		case e.ValueFrom.FileKeyRef != nil:
			v, ok, err := fileKeyValue(d, pod, e.ValueFrom.FileKeyRef)
			if err != nil {
				return nil, nil, fmt.Errorf("env[%d].valueFrom.fileKeyRef: %w", i, err)
			}
			if !ok {
				continue
			}
			val = v
		default:
			return nil, nil, fmt.Errorf("env[%d].valueFrom: only fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef and fileKeyRef are supported by actorlet", i)
		}
		set(e.Name, val)
	}
	env := make([]string, 0, len(names))
	for _, n := range names {
		env = append(env, n+"="+vars[n])
	}
	return env, vars, nil
}

// envFromData is the data an envFrom source gives (nil for an optional
// source that is missing), and its kind and name for messages.
func envFromData(objs Objects, pod *v1.Pod, ef v1.EnvFromSource) (map[string]string, string, error) {
	switch {
	case ef.ConfigMapRef != nil:
		name := ef.ConfigMapRef.Name
		cm, ok := objs.ConfigMaps[name]
		if !ok {
			if isOptional(ef.ConfigMapRef.Optional) {
				return nil, "configMap " + qualified(pod, name), nil
			}
			return nil, "", fmt.Errorf("configMapRef: %w", notFound(kindConfigMap, name))
		}
		return cm.Data, "configMap " + qualified(pod, name), nil
	case ef.SecretRef != nil:
		name := ef.SecretRef.Name
		s, ok := objs.Secrets[name]
		if !ok {
			if isOptional(ef.SecretRef.Optional) {
				return nil, "secret " + qualified(pod, name), nil
			}
			return nil, "", fmt.Errorf("secretRef: %w", notFound(kindSecret, name))
		}
		out := make(map[string]string, len(s.Data))
		for k, v := range s.Data {
			out[k] = string(v)
		}
		return out, "secret " + qualified(pod, name), nil
	}
	return nil, "", fmt.Errorf("one of configMapRef and secretRef is required")
}

// EnvFromSkipped returns, for c's envFrom sources that give keys which are
// no valid environment variable name (with the prefix), the kubelet's
// InvalidEnvironmentVariableNames event message, one per source. Missing
// sources give none.
func EnvFromSkipped(objs Objects, pod *v1.Pod, c *v1.Container) []string {
	var out []string
	for _, ef := range c.EnvFrom {
		data, what, err := envFromData(objs, pod, ef)
		if err != nil || data == nil {
			continue
		}
		var bad []string
		for k := range data {
			if len(validation.IsRelaxedEnvVarName(ef.Prefix+k)) != 0 {
				bad = append(bad, ef.Prefix+k)
			}
		}
		if len(bad) > 0 {
			out = append(out, fmt.Sprintf("Keys [%s] from the EnvFrom %s were skipped since they are considered invalid environment variable names.", joinSorted(bad), what))
		}
	}
	return out
}

// configMapKeyValue resolves a configMapKeyRef; ok is false for an
// optional reference whose ConfigMap or key is missing.
func configMapKeyValue(objs Objects, pod *v1.Pod, r *v1.ConfigMapKeySelector) (string, bool, error) {
	cm, ok := objs.ConfigMaps[r.Name]
	if !ok {
		if isOptional(r.Optional) {
			return "", false, nil
		}
		return "", false, notFound(kindConfigMap, r.Name)
	}
	v, ok := cm.Data[r.Key]
	if !ok {
		if isOptional(r.Optional) {
			return "", false, nil
		}
		return "", false, &ObjectError{Msg: fmt.Sprintf("couldn't find key %s in ConfigMap %s", r.Key, qualified(pod, r.Name))}
	}
	return v, true, nil
}

// secretKeyValue resolves a secretKeyRef (see configMapKeyValue).
func secretKeyValue(objs Objects, pod *v1.Pod, r *v1.SecretKeySelector) (string, bool, error) {
	s, ok := objs.Secrets[r.Name]
	if !ok {
		if isOptional(r.Optional) {
			return "", false, nil
		}
		return "", false, notFound(kindSecret, r.Name)
	}
	v, ok := s.Data[r.Key]
	if !ok {
		if isOptional(r.Optional) {
			return "", false, nil
		}
		return "", false, &ObjectError{Msg: fmt.Sprintf("couldn't find key %s in Secret %s", r.Key, qualified(pod, r.Name))}
	}
	return string(v), true, nil
}

// expandAll expands every string of in (see expand); nil stays nil.
func expandAll(in []string, vars map[string]string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = expand(s, vars)
	}
	return out
}

// expand replaces $(NAME) in s by vars[NAME], as Kubernetes expands env
// values, command and args: "$$" is an escaped "$"; a reference to an
// undefined variable, an unterminated "$(" and a "$" before anything else
// stay as written (what follows an unterminated "$(" is still expanded).
func expand(s string, vars map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 { // unterminated: "$(" is literal
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := vars[name]; ok && name != "" {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}
