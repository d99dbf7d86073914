package actors

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cenkalti/backoff/v4"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/actorlet/actorlet/internal/metrics"
	"github.com/actorlet/actorlet/internal/pleg"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// relistActor is the PLEG. It lists this node's managed containers (off
// its mailbox), diffs them against the last snapshot with the generic
// PLEG's transition table (internal/pleg), sends the transitions batched
// per pod UID to the router, and hands the node the snapshot for orphan
// detection. A failed list produces no transitions and is reported to the
// node; the snapshot stays as it was, and lists are retried with
// exponential backoff (from the relist period up to 30 s, never giving up).
// While lists fail only that backoff lists: an event, a resubscription of
// the event stream or a RelistNow marks that a list is wanted, and the
// backoff's next attempt is that list.
//
// When the runtime streams events (runtimeadapter.EventSource: Docker), a
// container's start, death, OOM or removal triggers a relist at once, so a
// death reaches its pod actor in milliseconds; the periodic relist stays as
// the safety net, every EventRelistPeriod (5 s) while the stream flows and
// every RelistPeriod (1 s) while it is broken. The stream is resubscribed
// with backoff, and every (re)subscription is followed by a relist: events
// missed in a gap are found by listing, never assumed.
//
// The containers events name are inspected after the list (see
// inspectTouched), at most touchedInspectParallel at a time, each within
// touchedInspectTimeout (2 s) and half of what is left of ListTimeout: a
// hung inspect delays the relist, and fails nothing.
type relistActor struct {
	cfg      Config
	router   *actor.PID
	node     *actor.PID
	log      *zap.Logger
	relister *pleg.Relister

	inFlight bool
	again    bool            // a list was wanted after the one in flight began
	touched  map[string]bool // containers named by events since the last list
	started  time.Time
	timer    clock.Timer
	gen      uint64
	failures *backoff.ExponentialBackOff
	failing  bool

	eventsUp     bool
	cancelEvents context.CancelFunc
}

type (
	relistTick   struct{ gen uint64 }
	relistResult struct {
		res   runtimeadapter.ListResult
		err   error
		until time.Time // when the List (and its inspections) returned
	}
	runtimeEvent struct{ ev runtimeadapter.Event }
	eventsState  struct {
		up  bool
		err error
	}
)

// maxRelistRetry caps the delay between failed lists.
const maxRelistRetry = 30 * time.Second

// touchedInspectTimeout bounds each inspect of a container named by an
// event (2 s; never more than half of what is left of the relist's
// ListTimeout), and touchedInspectParallel how many run at once.
const (
	touchedInspectTimeout  = 2 * time.Second
	touchedInspectParallel = 4
)

func newRelistProps(cfg Config, router, node *actor.PID) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return &relistActor{cfg: cfg, router: router, node: node, log: cfg.Logger.Named("pleg"), relister: pleg.New()}
	}, cfg.mailbox(metrics.KindRelist)...)
}

func (r *relistActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		r.failures = backoff.NewExponentialBackOff(
			backoff.WithInitialInterval(r.cfg.RelistPeriod), backoff.WithMaxInterval(maxRelistRetry),
			backoff.WithRandomizationFactor(0), backoff.WithMultiplier(2), backoff.WithMaxElapsedTime(0))
		r.subscribe(ctx)
		r.list(ctx)
	case *actor.Stopping, *actor.Restarting:
		r.stopTimer()
		if r.cancelEvents != nil {
			r.cancelEvents()
		}
	case *relistTick:
		if m.gen == r.gen {
			r.list(ctx)
		}
	case *messages.RelistNow:
		r.want(ctx)
	case *runtimeEvent:
		r.log.Debug("runtime event", zap.String("kind", string(m.ev.Kind)), zap.String("id", short(m.ev.ContainerID)))
		if m.ev.ContainerID != "" {
			if r.touched == nil {
				r.touched = map[string]bool{}
			}
			r.touched[m.ev.ContainerID] = true
		}
		if uid := m.ev.Labels[runtimeadapter.LabelPodUID]; m.ev.Kind == runtimeadapter.EventDie && uid != "" && m.ev.ContainerID != "" {
			// The pod actor needs no list to act on a death.
			ctx.Send(r.router, &messages.ContainerExited{UID: types.UID(uid), ContainerID: m.ev.ContainerID, ExitCode: m.ev.ExitCode, At: m.ev.Time})
		}
		r.want(ctx)
	case *eventsState:
		if m.up != r.eventsUp {
			if m.up {
				r.log.Info("runtime event stream up; relisting every " + r.cfg.EventRelistPeriod.String() + " as a safety net")
			} else {
				r.log.Warn("runtime event stream broken; relisting every "+r.cfg.RelistPeriod.String(), zap.Error(m.err))
			}
		}
		r.eventsUp = m.up
		r.want(ctx) // a (re)subscription or a gap: list to catch up
	case *relistResult:
		r.inFlight = false
		r.cfg.Metrics.ObserveRelist(r.started, r.cfg.Clock.Since(r.started), m.err)
		next := r.period()
		if m.err != nil {
			if !r.failing {
				r.failures.Reset()
				ctx.Send(r.router, &messages.RuntimeState{Healthy: false, Err: m.err})
			}
			r.failing = true
			next = r.failures.NextBackOff()
			r.log.Warn("relist failed; no transitions this round", zap.Error(m.err), zap.Duration("retryIn", next))
			ctx.Send(r.node, &messages.RelistFailed{Err: m.err, At: r.cfg.Clock.Now()})
		} else {
			if r.failing {
				r.log.Info("runtime answers again; converging")
				ctx.Send(r.router, &messages.RuntimeState{Healthy: true})
			}
			r.failing = false
			for _, batch := range r.relister.Relist(m.res) {
				batch.ListedFrom, batch.ListedUntil = r.started, m.until
				ctx.Send(r.router, &batch)
			}
			ctx.Send(r.node, &messages.RelistSnapshot{Containers: m.res.Containers, ObservedAt: m.res.ObservedAt})
		}
		if r.again && m.err == nil {
			r.again = false
			r.list(ctx)
			return
		}
		r.schedule(ctx, next)
	}
}

// period is the relist period now: longer while events flow.
func (r *relistActor) period() time.Duration {
	if r.eventsUp && r.cfg.EventRelistPeriod > 0 {
		return r.cfg.EventRelistPeriod
	}
	return r.cfg.RelistPeriod
}

func (r *relistActor) schedule(ctx actor.Context, d time.Duration) {
	r.stopTimer()
	r.gen++
	gen, self, sys := r.gen, ctx.Self(), ctx.ActorSystem()
	r.timer = r.cfg.Clock.AfterFunc(d, func() { sys.Root.Send(self, &relistTick{gen: gen}) })
}

func (r *relistActor) stopTimer() {
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
}

// want asks for a list now, except while lists fail: then the list the
// failure backoff has scheduled is the one (see relistActor).
func (r *relistActor) want(ctx actor.Context) {
	if r.failing && !r.inFlight {
		return // a list is scheduled (r.timer); it starts after this wish
	}
	r.list(ctx)
}

// list starts a list, or, while one is in flight, marks that another is
// wanted once it ends.
func (r *relistActor) list(ctx actor.Context) {
	if r.inFlight {
		r.again = true
		return
	}
	r.stopTimer()
	r.inFlight = true
	r.again = false // this list sees everything that happened before it
	r.started = r.cfg.Clock.Now()
	self, sys := ctx.Self(), ctx.ActorSystem()
	rt, node, timeout, clk := r.cfg.Runtime, r.cfg.NodeName, r.cfg.ListTimeout, r.cfg.Clock
	touched := r.touched
	r.touched = nil
	go func() {
		out := &relistResult{}
		defer func() {
			if p := recover(); p != nil {
				out.err = fmt.Errorf("relist panicked: %v", p)
			}
			out.until = clk.Now()
			sys.Root.Send(self, out)
		}()
		c, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		out.res, out.err = rt.List(c, runtimeadapter.ListOptions{Node: node, All: true})
		if out.err != nil {
			out.err = fmt.Errorf("list containers of node %s: %w", node, out.err)
			return
		}
		if len(touched) > 0 {
			var corrected bool
			out.res.Containers, corrected = inspectTouched(c, rt, node, out.res.Containers, touched)
			if corrected {
				// The listing now holds news newer than its start and its
				// version: date it after the inspections, so a pod actor
				// does not discard it as older than its own listing, and
				// drop the version, which no longer orders it (a tie is
				// settled by listing again; deterministic names make a
				// re-create of a container this listing missed an adoption).
				out.res.Version = 0
				out.res.ObservedAt = clk.Now()
			}
		}
	}()
}

// subscribe follows the runtime's event stream, when it has one, in a
// goroutine that resubscribes with backoff (never giving up) until the
// actor stops. Events and the stream's state come back as messages.
func (r *relistActor) subscribe(ctx actor.Context) {
	es, ok := capability[runtimeadapter.EventSource](r.cfg.Runtime)
	if !ok || r.cfg.EventRelistPeriod < 0 {
		return
	}
	c, cancel := context.WithCancel(context.Background())
	r.cancelEvents = cancel
	self, sys, node, clk := ctx.Self(), ctx.ActorSystem(), r.cfg.NodeName, r.cfg.Clock
	go func() {
		defer func() {
			if p := recover(); p != nil {
				sys.Root.Send(self, &eventsState{err: fmt.Errorf("event stream panicked: %v", p)})
			}
		}()
		bo := backoff.NewExponentialBackOff(backoff.WithInitialInterval(time.Second), backoff.WithMaxInterval(maxRelistRetry),
			backoff.WithMaxElapsedTime(0))
		for c.Err() == nil {
			events, errs := es.Events(c, node)
			up := false
			for ev := range events {
				if !up {
					up = true
					bo.Reset()
				}
				sys.Root.Send(self, &runtimeEvent{ev: ev})
			}
			var err error
			select {
			case err = <-errs:
			default:
			}
			if c.Err() != nil {
				return
			}
			sys.Root.Send(self, &eventsState{up: false, err: err})
			t := clk.NewTimer(bo.NextBackOff())
			select {
			case <-t.C():
			case <-c.Done():
				t.Stop()
				return
			}
			sys.Root.Send(self, &eventsState{up: true})
		}
	}()
	sys.Root.Send(self, &eventsState{up: true})
}

// inspectTouched corrects a listing for the containers events named: a
// runtime may send an event before its list shows it (Docker 20.10 sends
// "die" while its list still says running), so those few containers are
// inspected and the inspection wins. A container inspected as gone is
// dropped; one the list missed is added if it is this node's. A failed
// inspect leaves the listing as it was for that container. Inspects run
// at most touchedInspectParallel at a time, each within
// touchedInspectTimeout and half of what is left of ctx.
func inspectTouched(ctx context.Context, rt runtimeadapter.Runtime, node string, cs []runtimeadapter.Container, touched map[string]bool) ([]runtimeadapter.Container, bool) {
	timeout := touchedInspectTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl)/2)
	}
	type inspection struct {
		c   runtimeadapter.Container
		err error
	}
	ids := slices.Sorted(maps.Keys(touched))
	got := make(map[string]inspection, len(ids))
	var mu sync.Mutex
	sem := make(chan struct{}, touchedInspectParallel)
	var wg sync.WaitGroup
	for _, id := range ids {
		sem <- struct{}{}
		wg.Go(func() {
			var in inspection
			defer func() {
				if p := recover(); p != nil {
					in.err = fmt.Errorf("inspect container %s panicked: %v", id, p)
				}
				mu.Lock()
				got[id] = in
				mu.Unlock()
				<-sem
			}()
			ictx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			in.c, in.err = rt.Inspect(ictx, id)
		})
	}
	wg.Wait()

	out := make([]runtimeadapter.Container, 0, len(cs))
	seen := map[string]bool{}
	corrected := false
	for _, c := range cs {
		if in, ok := got[c.ID]; ok {
			seen[c.ID] = true
			switch {
			case errors.Is(in.err, runtimeadapter.ErrNotFound):
				corrected = true
				continue // gone since the list
			case in.err == nil:
				corrected = corrected || in.c.State != c.State
				c = in.c
			}
		}
		out = append(out, c)
	}
	for _, id := range ids {
		if in := got[id]; !seen[id] && in.err == nil && runtimeadapter.IsManaged(in.c.Labels, node) {
			out = append(out, in.c)
			corrected = true
		}
	}
	return out, corrected
}
