package etcd

import (
	"fmt"
	"strings"
)

// DefaultPrefix is the key prefix of a fleet (--etcd-prefix).
const DefaultPrefix = "/actorlet"

// Keys is the key schema of a fleet under one prefix, a public interface
// (see the README's "Run a fleet"):
//
//	<prefix>/nodes/<node>/pods/<namespace>/<name>       a v1.Pod, YAML or JSON, written by users
//	<prefix>/nodes/<node>/configmaps/<namespace>/<name> a v1.ConfigMap, YAML or JSON, written by users
//	<prefix>/nodes/<node>/secrets/<namespace>/<name>    a v1.Secret, YAML or JSON, written by users
//	<prefix>/nodes/<node>/status/<namespace>/<name>     the pod's status (JSON), written by the node
//	<prefix>/nodes/<node>/heartbeat                     JSON, under the node's lease
//	<prefix>/nodes/<node>/events/<sequence>             recent events (JSON), under a lease, bounded
//
// Create it with NewKeys.
type Keys struct {
	prefix string // without a trailing slash; "" for the root
}

// Parts of the schema after <prefix>/nodes/<node>/.
const (
	KindPods       = "pods"
	KindConfigMaps = "configmaps"
	KindSecrets    = "secrets"
	KindStatus     = "status"
	KindHeartbeat  = "heartbeat"
	KindEvents     = "events"
)

// NewKeys returns the schema under prefix, which must start with "/"
// (a trailing "/" is dropped; "/" alone is the root).
func NewKeys(prefix string) (Keys, error) {
	if !strings.HasPrefix(prefix, "/") {
		return Keys{}, fmt.Errorf("etcd prefix %q: must start with /", prefix)
	}
	if strings.Contains(prefix, "//") {
		return Keys{}, fmt.Errorf("etcd prefix %q: has an empty segment (//)", prefix)
	}
	return Keys{prefix: strings.TrimSuffix(prefix, "/")}, nil
}

// Prefix returns the prefix as given to NewKeys, without a trailing "/"
// ("/" for the root).
func (k Keys) Prefix() string {
	if k.prefix == "" {
		return "/"
	}
	return k.prefix
}

// Nodes is the prefix of every node's keys: "<prefix>/nodes/".
func (k Keys) Nodes() string { return k.prefix + "/nodes/" }

// Node is the prefix of node's keys: "<prefix>/nodes/<node>/".
func (k Keys) Node(node string) string { return k.Nodes() + node + "/" }

// Pods is the prefix of node's desired pods: "<prefix>/nodes/<node>/pods/".
func (k Keys) Pods(node string) string { return k.Node(node) + KindPods + "/" }

// ConfigMap is the key of one ConfigMap of node's pods.
func (k Keys) ConfigMap(node, namespace, name string) string {
	return k.Node(node) + KindConfigMaps + "/" + namespace + "/" + name
}

// Secret is the key of one Secret of node's pods.
func (k Keys) Secret(node, namespace, name string) string {
	return k.Node(node) + KindSecrets + "/" + namespace + "/" + name
}

// Desired is the key range [start, end) that holds node's desired
// objects, its pods, configmaps and secrets keys: the keys between
// "<prefix>/nodes/<node>/configmaps/" and ".../secrets/" included. It also
// holds the node's heartbeat and events keys (which sort between them),
// but not its status keys, the ones the node writes most.
func (k Keys) Desired(node string) (start, end string) {
	return k.Node(node) + KindConfigMaps + "/", k.Node(node) + KindSecrets + "0" // '0' follows '/'
}

// Pod is the key of one desired pod.
func (k Keys) Pod(node, namespace, name string) string {
	return k.Pods(node) + namespace + "/" + name
}

// Statuses is the prefix of node's pod statuses.
func (k Keys) Statuses(node string) string { return k.Node(node) + KindStatus + "/" }

// Status is the key of one pod's status.
func (k Keys) Status(node, namespace, name string) string {
	return k.Statuses(node) + namespace + "/" + name
}

// Heartbeat is node's heartbeat key.
func (k Keys) Heartbeat(node string) string { return k.Node(node) + KindHeartbeat }

// Events is the prefix of node's recent events.
func (k Keys) Events(node string) string { return k.Node(node) + KindEvents + "/" }

// Key is a parsed key of the schema.
type Key struct {
	Node string
	// Kind is KindPods, KindConfigMaps, KindSecrets, KindStatus,
	// KindHeartbeat or KindEvents.
	Kind string
	// Namespace and Name are set for pods, configmaps, secrets and status
	// keys.
	Namespace, Name string
	// Rest is what follows "<kind>/" (e.g. an event's sequence, or a pod
	// key's "<namespace>/<name>").
	Rest string
}

// Parse splits a key under Nodes(). ok is false when the key is not one
// of the schema's: outside the prefix, an unknown kind, a pods,
// configmaps, secrets or status key that is not exactly <namespace>/<name> (both non-empty), or a
// heartbeat key with a suffix.
func (k Keys) Parse(key string) (Key, bool) {
	rest, ok := strings.CutPrefix(key, k.Nodes())
	if !ok {
		return Key{}, false
	}
	node, rest, ok := strings.Cut(rest, "/")
	if !ok || node == "" {
		return Key{}, false
	}
	if rest == KindHeartbeat {
		return Key{Node: node, Kind: KindHeartbeat}, true
	}
	kind, rest, ok := strings.Cut(rest, "/")
	if !ok {
		return Key{}, false
	}
	out := Key{Node: node, Kind: kind, Rest: rest}
	switch kind {
	case KindPods, KindConfigMaps, KindSecrets, KindStatus:
		ns, name, ok := strings.Cut(rest, "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			return Key{}, false
		}
		out.Namespace, out.Name = ns, name
	case KindEvents:
		if rest == "" {
			return Key{}, false
		}
	default:
		return Key{}, false
	}
	return out, true
}

// ValidNodeName checks that node can be a segment of the schema: not
// empty, no "/", no whitespace or control characters.
func ValidNodeName(node string) error {
	if node == "" {
		return fmt.Errorf("node name is empty")
	}
	for _, r := range node {
		if r == '/' || r <= ' ' || r == 0x7f {
			return fmt.Errorf("node name %q: may not contain %q (it is a segment of etcd keys)", node, r)
		}
	}
	return nil
}
