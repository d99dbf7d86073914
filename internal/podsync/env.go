package podsync

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
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

// containerEnv returns c's environment as KEY=VALUE, in spec order, and
// the variables by name for expanding command and args. As the kubelet: a
// value has $(VAR) references to variables defined before it expanded; a
// valueFrom.fieldRef is resolved by Downward.FieldRef and a
// valueFrom.resourceFieldRef by Downward.ResourceFieldRef (neither
// expanded). Other valueFrom sources are errors.
func containerEnv(d Downward, pod *v1.Pod, c *v1.Container) ([]string, map[string]string, error) {
	if len(c.Env) == 0 {
		return nil, nil, nil
	}
	env := make([]string, 0, len(c.Env))
	vars := make(map[string]string, len(c.Env))
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
		default:
			return nil, nil, fmt.Errorf("env[%d].valueFrom: only fieldRef and resourceFieldRef are supported by actorlet", i)
		}
		vars[e.Name] = val
		env = append(env, e.Name+"="+val)
	}
	return env, vars, nil
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
