package actors

import (
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"k8s.io/apimachinery/pkg/types"
)

// podDirectory is the router's pod UID → pod actor, readable off any
// actor: the goroutine that follows the runtime's early exits delivers a
// death straight to its pod actor with it, without the two mailboxes
// (relist actor, router) in between. It is also the router's own table
// (one map per node, not a map for the router and a copy for the
// readers): only the router writes it, as it spawns and forgets pod
// actors, so the router reads it without the lock (a reader never races
// a writer that is itself) and every other reader takes it. A reader that
// finds no PID (no actor yet, one stopping, or the router stopping)
// leaves the death to the router's path. A nil *podDirectory holds
// nothing (lookup only).
type podDirectory struct {
	mu     sync.RWMutex
	m      map[types.UID]podEntry
	closed bool // the router is stopping: lookup finds nothing
}

type podEntry struct {
	pid  *actor.PID
	last any // *protocol.PodSpec or *protocol.PodRemoved, for SpecRequest
}

// get is uid's entry: for the router only (no lock; see podDirectory).
func (d *podDirectory) get(uid types.UID) (podEntry, bool) {
	e, ok := d.m[uid]
	return e, ok
}

// put sets uid's entry (router only).
func (d *podDirectory) put(uid types.UID, e podEntry) {
	d.mu.Lock()
	if d.m == nil {
		d.m = map[types.UID]podEntry{}
	}
	d.m[uid] = e
	d.mu.Unlock()
}

// setLast records the last spec or removal sent to uid's actor (router
// only; readers never read it, but the map's value is written).
func (d *podDirectory) setLast(uid types.UID, last any) {
	d.mu.Lock()
	if e, ok := d.m[uid]; ok {
		e.last = last
		d.m[uid] = e
	}
	d.mu.Unlock()
}

func (d *podDirectory) forget(uid types.UID) {
	d.mu.Lock()
	delete(d.m, uid)
	d.mu.Unlock()
}

// clear forgets every pod (a restarting router starts with none).
func (d *podDirectory) clear() {
	d.mu.Lock()
	d.m = nil
	d.mu.Unlock()
}

// setClosed makes lookup find nothing (closed), or the entries again.
func (d *podDirectory) setClosed(closed bool) {
	d.mu.Lock()
	d.closed = closed
	d.mu.Unlock()
}

// len is how many pod actors the router has (router only).
func (d *podDirectory) len() int { return len(d.m) }

// lookup is uid's pod actor, if the router has one running; safe off the
// router.
func (d *podDirectory) lookup(uid types.UID) (*actor.PID, bool) {
	if d == nil {
		return nil, false
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return nil, false
	}
	e, ok := d.m[uid]
	return e.pid, ok
}
