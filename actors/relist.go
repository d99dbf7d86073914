package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	"k8s.io/utils/clock"

	"github.com/actorlet/actorlet/internal/metrics"
	"github.com/actorlet/actorlet/internal/pleg"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// relistActor is the PLEG: every relist period it lists this node's
// managed containers (off its mailbox), diffs them against the last
// snapshot with the generic PLEG's transition table (internal/pleg), sends
// the transitions batched per pod UID to the router, and hands the node the
// snapshot for orphan detection. A failed list produces no transitions and
// is reported to the node; the snapshot stays as it was.
type relistActor struct {
	cfg      Config
	router   *actor.PID
	node     *actor.PID
	log      *zap.Logger
	relister *pleg.Relister
	inFlight bool
	timer    clock.Timer
	started  time.Time // of the list in flight
}

type (
	relistTick   struct{}
	relistResult struct {
		res runtimeadapter.ListResult
		err error
	}
)

func newRelistProps(cfg Config, router, node *actor.PID) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return &relistActor{cfg: cfg, router: router, node: node, log: cfg.Logger.Named("pleg"), relister: pleg.New()}
	}, cfg.mailbox(metrics.KindRelist)...)
}

func (r *relistActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		r.list(ctx)
	case *actor.Stopping:
		if r.timer != nil {
			r.timer.Stop()
		}
	case *relistTick:
		r.list(ctx)
	case *relistResult:
		r.inFlight = false
		r.cfg.Metrics.ObserveRelist(r.started, r.cfg.Clock.Since(r.started), m.err)
		if m.err != nil {
			r.log.Warn("relist failed; no transitions this round", zap.Error(m.err))
			ctx.Send(r.node, &messages.RelistFailed{Err: m.err, At: r.cfg.Clock.Now()})
		} else {
			for _, batch := range r.relister.Relist(m.res) {
				ctx.Send(r.router, &batch)
			}
			ctx.Send(r.node, &messages.RelistSnapshot{Containers: m.res.Containers, ObservedAt: m.res.ObservedAt})
		}
		self, sys := ctx.Self(), ctx.ActorSystem()
		r.timer = r.cfg.Clock.AfterFunc(r.cfg.RelistPeriod, func() { sys.Root.Send(self, &relistTick{}) })
	}
}

func (r *relistActor) list(ctx actor.Context) {
	if r.inFlight {
		return
	}
	r.inFlight = true
	r.started = r.cfg.Clock.Now()
	self, sys := ctx.Self(), ctx.ActorSystem()
	rt, node, timeout := r.cfg.Runtime, r.cfg.NodeName, r.cfg.ListTimeout
	go func() {
		out := &relistResult{}
		defer func() {
			if p := recover(); p != nil {
				out.err = fmt.Errorf("relist panicked: %v", p)
			}
			sys.Root.Send(self, out)
		}()
		c, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		out.res, out.err = rt.List(c, runtimeadapter.ListOptions{Node: node, All: true})
		if out.err != nil {
			out.err = fmt.Errorf("list containers of node %s: %w", node, out.err)
		}
	}()
}
