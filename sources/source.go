// Package sources defines Source, the one interface through which desired
// pods reach actorlet's node actor. The static-pod directory
// (sources/dir) implements it; so can a URL or etcd watcher, or a service
// that embeds actorlet and wants to feed it pods of its own.
package sources

import (
	"context"

	v1 "k8s.io/api/core/v1"
)

// Update is a source's complete desired set at one moment. It is never a
// delta: the node replaces the source's previous set with Pods.
//
// A source sends an Update when its set or its Problems change, and at
// least once, after its first successful read (even when the set is empty:
// that is how the node learns the source has synced).
//
// Pods and everything they point to belong to the receiver once sent: the
// source never mutates them afterwards, and the receiver must not mutate
// them either (they may be shared with the source's later updates), so
// DeepCopy before changing one.
type Update struct {
	// Source is the sending source's Name(), e.g. "file:/etc/actorlet/manifests".
	Source string
	// Pods is the complete set, each pod with a non-empty UID, defaulted and
	// validated. It is ignored when Err != nil.
	Pods []*v1.Pod
	// ConfigMaps and Secrets are the complete sets of the ConfigMaps and
	// Secrets the source defines (e.g. documents of those kinds in a
	// manifest file), each defaulted and validated, a Secret's stringData
	// merged into its data, each in its own metadata.namespace, one per
	// namespace/name. The node merges them across sources (the source
	// first by name wins) and gives each pod those of its namespace it
	// refers to (volumes, env). Like Pods they belong to the receiver
	// once sent; a Secret's data must never be logged. Ignored when
	// Err != nil.
	ConfigMaps []*v1.ConfigMap
	Secrets    []*v1.Secret
	// Problems are this round's per-item problems (e.g. a manifest that does
	// not parse), one error per item, each naming the item and, where it
	// can, the field. A problem item's last good pod, if it had one, is
	// still in Pods; the source keeps it until the item is fixed or removed.
	Problems []error
	// Err means the source as a whole failed (e.g. its directory cannot be
	// read). The receiver keeps the source's last set and must never treat
	// a failed source as empty.
	Err error
}

// Source produces desired pods.
type Source interface {
	// Name identifies the source in updates, logs and status, e.g.
	// "file:/etc/actorlet/manifests". It is unique among a node's sources
	// and stable for the source's life.
	Name() string

	// Run delivers updates to sink until ctx ends, then returns nil. It
	// returns an error early only when the source cannot work at all (a
	// bad configuration); failures to read are reported as Update.Err and
	// retried.
	//
	// sink is called from one goroutine at a time, in order. It must not
	// block for long (hand the update to a channel or an actor) and must
	// not call back into the source. The first update with a nil Err marks
	// the source as synced.
	//
	// Run is called at most once per Source value.
	Run(ctx context.Context, sink func(Update)) error
}
