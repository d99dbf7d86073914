package actors

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// sweepOrphans finds orphan pods in a listing of the runtime: pods of this
// node (by their containers' labels) that are neither desired nor being
// removed. Each is removed as a pod, by a pod actor in the removed state
// (apps within their grace period first, then the sandbox, then every
// container removed), and counts as terminating under its namespace/name
// until its Terminated, so that a pod of the same name waits for it
// (invariant 6). That happens only once every source has synced (a source
// not yet read is not "empty"); until then the orphan pods linger, and a
// pod of their name waits for them too. Containers without actorlet's
// labels for this node are never touched.
func (n *nodeActor) sweepOrphans(ctx actor.Context, cs []runtimeadapter.Container, observedAt time.Time) {
	for uid, at := range n.gone {
		if observedAt.After(at) {
			delete(n.gone, uid) // this listing is newer than the pod's end: trust it
		}
	}
	orphans := map[types.UID]string{}
	abandoned := map[types.UID][]runtimeadapter.Container{}
	for _, c := range cs {
		meta, err := runtimeadapter.ParseMeta(c.Labels)
		if err != nil || meta.Node != n.cfg.NodeName {
			continue
		}
		uid := types.UID(meta.PodUID)
		if _, ok := n.abandoned[uid]; ok {
			abandoned[uid] = append(abandoned[uid], c)
		}
		if n.desired[uid] != nil || n.terminating[uid] != "" || !n.gone[uid].IsZero() {
			continue
		}
		orphans[uid] = meta.PodNamespace + "/" + meta.PodName
	}
	released := false
	for uid := range n.lingering {
		if _, ok := orphans[uid]; !ok {
			delete(n.lingering, uid) // gone meanwhile (removed from outside)
			released = true
		}
	}
	for uid, name := range orphans {
		if _, ok := n.lingering[uid]; !ok && !n.allSynced() && !n.draining {
			n.log.Info("orphan pod found; it is removed once every source has synced, and a pod of its name waits",
				zap.String("pod", name), zap.String("podUID", string(uid)))
		}
		n.lingering[uid] = name
	}
	if n.allSynced() || n.draining {
		for uid, name := range n.lingering {
			delete(n.lingering, uid)
			n.terminating[uid] = name
			n.log.Info("removing orphan pod", zap.String("pod", name), zap.String("podUID", string(uid)))
			ctx.Send(n.router, removal(uid, name))
		}
	}
	n.sweepAbandoned(ctx, abandoned, observedAt)
	if released {
		n.sendWaiting(ctx)
	}
	n.checkDrained(ctx)
}

// sweepAbandoned removes the containers of the pods whose pod actor failed
// while removing them, in the pod's order, off the mailbox; a pod is
// terminated once a listing taken after the node last acted on it shows
// none of its containers.
func (n *nodeActor) sweepAbandoned(ctx actor.Context, byUID map[types.UID][]runtimeadapter.Container, observedAt time.Time) {
	self, sys := ctx.Self(), ctx.ActorSystem()
	for uid, since := range n.abandoned {
		if n.orphanKills[uid] {
			continue
		}
		cs := byUID[uid]
		if len(cs) == 0 {
			if observedAt.After(since) {
				n.log.Info("abandoned pod's containers are gone", zap.String("pod", n.terminating[uid]), zap.String("podUID", string(uid)))
				n.terminated(ctx, uid)
			}
			continue
		}
		n.orphanKills[uid] = true
		plan := podsync.Compute(podsync.Input{Node: n.cfg.NodeName, Containers: cs, Now: n.cfg.Clock.Now()})
		rt, timeout, clk := n.cfg.Runtime, n.cfg.RuntimeTimeout, n.cfg.Clock
		log := n.log.With(zap.String("pod", n.terminating[uid]), zap.String("podUID", string(uid)))
		go func() {
			done := &orphanDone{uid: uid}
			defer func() {
				if p := recover(); p != nil {
					done.err = fmt.Errorf("pod %s: removing its containers panicked: %v", uid, p)
				}
				done.at = clk.Now()
				sys.Root.Send(self, done)
			}()
			done.err = removeInOrder(rt, plan, timeout, log)
		}()
	}
}

// removeInOrder carries out a removal plan (podsync with no pod): stop the
// app and init containers (in parallel, each within its grace period),
// then the sandboxes, then remove every container. A failed stop ends it:
// the sandbox outlives its apps.
func removeInOrder(rt runtimeadapter.Runtime, plan podsync.Plan, timeout time.Duration, log *zap.Logger) error {
	var apps, sandboxes []podsync.Kill
	for _, k := range plan.Kill {
		if k.Container.Labels[runtimeadapter.LabelContainerType] == string(runtimeadapter.TypeSandbox) {
			sandboxes = append(sandboxes, k)
		} else {
			apps = append(apps, k)
		}
	}
	for _, ks := range [][]podsync.Kill{apps, sandboxes} {
		var wg sync.WaitGroup
		errs := make([]error, len(ks))
		for i, k := range ks {
			wg.Go(func() {
				defer func() {
					if p := recover(); p != nil { // never let a panic here end the process
						errs[i] = fmt.Errorf("stop container %s panicked: %v", k.Container.Name, p)
					}
				}()
				log.Info("killing container", zap.String("container", k.Container.Labels[runtimeadapter.LabelContainerName]),
					zap.String("id", short(k.Container.ID)), zap.String("reason", k.Reason), zap.Duration("grace", k.Grace))
				c, cancel := context.WithTimeout(context.Background(), k.Grace+timeout)
				defer cancel()
				if err := rt.Stop(c, k.Container.ID, k.Grace); err != nil && !errors.Is(err, runtimeadapter.ErrNotFound) {
					errs[i] = fmt.Errorf("stop container %s: %w", k.Container.Name, err)
				}
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	for _, c := range plan.Remove {
		cctx, cancel := context.WithTimeout(context.Background(), timeout)
		err := rt.Remove(cctx, c.ID)
		cancel()
		if err != nil && !errors.Is(err, runtimeadapter.ErrNotFound) {
			return fmt.Errorf("remove container %s: %w", c.Name, err)
		}
	}
	return nil
}
