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

	"github.com/actorlet/actorlet/internal/nodestate"
	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/runtimeadapter"
)

type orphanDone struct {
	uid types.UID
	err error
	at  time.Time // when the work ended
}

// removeAbandoned removes the containers of a pod whose pod actor failed
// while removing it, in the pod's order, off the mailbox, and reports with
// an orphanDone (see nodestate's Abandoned phase).
func (n *nodeActor) removeAbandoned(ctx actor.Context, e nodestate.RemoveContainers) {
	self, sys := ctx.Self(), ctx.ActorSystem()
	uid := e.UID
	plan := podsync.Compute(podsync.Input{Node: n.cfg.NodeName, Containers: e.Containers, Now: n.cfg.Clock.Now()})
	rt, timeout, clk := n.cfg.Runtime, n.cfg.RuntimeTimeout, n.cfg.Clock
	log := n.log.With(zap.String("pod", e.Name), zap.String("podUID", string(uid)))
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
