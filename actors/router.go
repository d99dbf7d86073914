package actors

import (
	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/internal/dispatch"
	"github.com/actorlet/actorlet/internal/metrics"
	"github.com/actorlet/actorlet/internal/protocol"
	"github.com/actorlet/actorlet/supervision"
)

// router keeps pod UID → pod actor PID. It spawns a pod actor on the first
// spec or removal for a UID, forwards specs, removals and PLEG batches by UID, and
// forgets the PID when the pod actor reports Terminated. Its props carry
// the pod actors' supervisor strategy (bounded restarts, never escalating).
type router struct {
	cfg      Config
	node     *actor.PID
	log      *zap.Logger
	podProps *actor.Props   // every pod actor's
	pool     *dispatch.Pool // the goroutines their mailboxes run on
	stopping bool           // the router itself is stopping: its children end with it
	// retiring: pod actors told to stop (PID id → UID), until their
	// Terminated; their names stay taken until then. respawn: a spec for
	// such a UID, sent to a new pod actor once the old one is gone.
	retiring map[string]types.UID
	respawn  map[types.UID]any      // *protocol.PodSpec or *protocol.PodRemoved
	down     *protocol.RuntimeState // the runtime is failing (nil: healthy)
	// dir is pod UID → pod actor (see podDirectory), the router's table
	// and the one the relist's exit follower reads: a UID is in it from
	// its actor's spawn until the router forgets the actor.
	dir *podDirectory
}

func newRouterProps(cfg Config, node *actor.PID, dir *podDirectory) *actor.Props {
	if dir == nil {
		dir = &podDirectory{}
	}
	return actor.PropsFromProducer(func() actor.Actor {
		return &router{cfg: cfg, node: node, log: cfg.Logger.Named("router"), dir: dir}
	}, append(cfg.mailbox(metrics.KindRouter), actor.WithSupervisor(supervision.PodStrategy(cfg.MaxPodRestarts, cfg.PodRestartWindow)))...)
}

// closePool ends the goroutines of the pod actors' mailboxes (late
// messages still run, each on a goroutine of its own).
func (r *router) closePool() {
	if r.pool != nil {
		r.pool.Close()
	}
}

func (r *router) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		r.stopping = false
		r.dir.setClosed(false)
		ctx.Send(ctx.Parent(), &protocol.RouterStarted{})
	case *actor.Stopping:
		r.stopping = true
		r.dir.setClosed(true)
	case *actor.Restarting:
		r.stopping = true
		r.dir.clear()
		r.closePool()
	case *actor.Stopped:
		r.closePool()
		// Every pod actor has stopped: the records they kept reach the
		// state file before the node is gone (an agent restarted next
		// reads them).
		if r.cfg.History != nil {
			r.cfg.History.Flush()
		}
	case *protocol.PodSpec:
		r.deliver(ctx, m.Pod.UID, m)
	case *protocol.PodRemoved:
		// With no actor for the UID (an orphan pod found in the runtime,
		// a pod whose actor failed, or one lost with a restart of this
		// router) one is spawned to remove it: only it can say, by
		// listing, that the pod's containers are gone (Terminated).
		r.deliver(ctx, m.UID, m)
	case *protocol.RelistTransitions:
		// One relist's batches in one message: one receive here per
		// relist, not per pod, and each pod's batch goes on in the order
		// the relist made them (this mailbox is the one path from the
		// relist to the pod actors, so no batch overtakes an earlier one
		// for its pod).
		for i := range m.Pods {
			if e, ok := r.dir.get(m.Pods[i].UID); ok {
				ctx.Send(e.pid, &m.Pods[i])
			}
		}
	case *protocol.PodTransitions:
		if e, ok := r.dir.get(m.UID); ok {
			ctx.Send(e.pid, m)
		}
	case *protocol.ContainerExited:
		if e, ok := r.dir.get(m.UID); ok {
			ctx.Send(e.pid, m)
		}
		// A batch for a UID without an actor is a pod that is not desired:
		// the node sees the same containers in the snapshot and kills them
		// as orphans once every source has synced.
	case *protocol.RuntimeState:
		if m.Healthy {
			r.down = nil
		} else {
			r.down = m
		}
		for _, e := range r.dir.m {
			ctx.Send(e.pid, m)
		}
	case *protocol.SpecRequest:
		if e, ok := r.dir.get(m.UID); ok && e.last != nil {
			ctx.Respond(e.last)
		}
	case *protocol.Terminated:
		if e, ok := r.dir.get(m.UID); ok {
			r.dir.forget(m.UID)
			if r.retiring == nil {
				r.retiring = map[string]types.UID{}
			}
			r.retiring[e.pid.Id] = m.UID
			ctx.Stop(e.pid)
			r.cfg.Metrics.SetPodActors(r.dir.len())
		}
		ctx.Send(r.node, m)
	case *actor.Terminated:
		if uid, ok := r.retiring[m.Who.Id]; ok {
			delete(r.retiring, m.Who.Id)
			if spec := r.respawn[uid]; spec != nil && !r.stopping {
				delete(r.respawn, uid)
				r.deliver(ctx, uid, spec)
			}
			return
		}
		// A pod actor stopped by its supervisor (past its restart limit).
		uid := podUIDOf(m.Who, ctx.Self())
		if e, ok := r.dir.get(uid); ok && e.pid.Id == m.Who.Id && !r.stopping {
			r.dir.forget(uid)
			r.log.Error("pod actor stopped after too many restarts", zap.String("podUID", string(uid)))
			ctx.Send(r.node, &protocol.PodActorFailed{UID: uid})
		}
	}
}

// deliver sends m (a *protocol.PodSpec or *protocol.PodRemoved) to uid's
// pod actor, spawning one if need be; while the UID's previous actor is
// still stopping (its name taken), m waits for it (the latest message
// wins).
func (r *router) deliver(ctx actor.Context, uid types.UID, m any) {
	e, ok := r.dir.get(uid)
	if !ok {
		for _, u := range r.retiring {
			if u == uid {
				if r.respawn == nil {
					r.respawn = map[types.UID]any{}
				}
				r.respawn[uid] = m
				return
			}
		}
		if r.podProps == nil {
			r.pool = dispatch.New(mailboxThroughput)
			r.podProps = newPodProps(r.cfg, r.node, r.pool)
		}
		pid, err := ctx.SpawnNamed(r.podProps, podActorName(uid))
		if err != nil {
			r.log.Error("spawn pod actor", zap.String("podUID", string(uid)), zap.Error(err))
			return
		}
		e = podEntry{pid: pid, last: m}
		r.dir.put(uid, e)
		if r.down != nil {
			ctx.Send(pid, r.down)
		}
		r.cfg.Metrics.SetPodActors(r.dir.len())
	} else {
		r.dir.setLast(uid, m)
	}
	ctx.Send(e.pid, m)
}
