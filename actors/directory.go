package actors

import (
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"k8s.io/apimachinery/pkg/types"
)

// podDirectory is the router's pod UID → pod actor PID, readable off any
// actor: the goroutine that follows the runtime's early exits delivers a
// death straight to its pod actor with it, without the two mailboxes
// (relist actor, router) in between. Only the router writes it, as it
// spawns and forgets pod actors; a reader that finds no PID (no actor
// yet, or one stopping) leaves the death to the router's path. A nil
// *podDirectory holds nothing.
type podDirectory struct{ m sync.Map }

func (d *podDirectory) put(uid types.UID, pid *actor.PID) {
	if d != nil {
		d.m.Store(uid, pid)
	}
}

func (d *podDirectory) forget(uid types.UID) {
	if d != nil {
		d.m.Delete(uid)
	}
}

func (d *podDirectory) clear() {
	if d != nil {
		d.m.Clear()
	}
}

// lookup is uid's pod actor, if the router has one running.
func (d *podDirectory) lookup(uid types.UID) (*actor.PID, bool) {
	if d == nil {
		return nil, false
	}
	v, ok := d.m.Load(uid)
	if !ok {
		return nil, false
	}
	return v.(*actor.PID), true
}
