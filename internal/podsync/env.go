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

// FieldRefValue resolves an env var's valueFrom.fieldRef.fieldPath for pod
// on node, as the kubelet does for the paths it knows before the pod's
// sandbox starts: metadata.name, metadata.namespace, metadata.uid,
// metadata.labels['<key>'] and metadata.annotations['<key>'] (empty when
// the key is absent), spec.nodeName (node: a static pod runs where it is
// read) and spec.serviceAccountName. Any other path is an error;
// status.podIP(s) and status.hostIP(s) are not known when a container's
// spec is built.
func FieldRefValue(node string, pod *v1.Pod, path string) (string, error) {
	switch path {
	case FieldPodName:
		return pod.Name, nil
	case FieldPodNamespace:
		return pod.Namespace, nil
	case FieldPodUID:
		return string(pod.UID), nil
	case FieldNodeName:
		return node, nil
	case FieldServiceAccountName:
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP", "status.podIPs", "status.hostIP", "status.hostIPs":
		return "", fmt.Errorf("fieldPath %q is not supported by actorlet: it is not known before the pod's sandbox starts", path)
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
// valueFrom.fieldRef is resolved by FieldRefValue (not expanded). Other
// valueFrom sources are errors.
func containerEnv(node string, pod *v1.Pod, c *v1.Container) ([]string, map[string]string, error) {
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
			v, err := FieldRefValue(node, pod, e.ValueFrom.FieldRef.FieldPath)
			if err != nil {
				return nil, nil, fmt.Errorf("env[%d].valueFrom.fieldRef: %w", i, err)
			}
			val = v
		default:
			return nil, nil, fmt.Errorf("env[%d].valueFrom: only fieldRef is supported by actorlet", i)
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
