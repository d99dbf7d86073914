package actors

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cenkalti/backoff/v4"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/actorlet/actorlet/internal/metrics"
	"github.com/actorlet/actorlet/internal/pleg"
	"github.com/actorlet/actorlet/internal/protocol"
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
// the safety net, every EventRelistPeriod (5 s) while the stream is
// healthy and every RelistPeriod (1 s) otherwise. A broken stream (or one
// that does not open within ListTimeout) is resubscribed with backoff
// (1 s doubling to 30 s), and every (re)subscription is followed by a
// relist: events missed in a gap are found by listing, never assumed.
//
// A stream can also stay open and deliver nothing; Docker's has no
// heartbeat, so the evidence is a relist that finds a change (a start, a
// death, a removal) the stream never reported. internal/pleg's StreamWatch
// decides, from the events (their container, kind and arrival time) and
// the relists' changes, whether the stream is healthy, silent or being
// confirmed; the rules and their boundaries are its doc. In short: a
// change counts once the stream has been open since grace (2 s) before the
// listing preceding the one that found it, and it is missed when no event
// of its container and kind arrived by the end of that listing plus the
// grace. A missed change makes the stream silent: this actor ends it and
// subscribes again at once, relists every RelistPeriod meanwhile, and
// goes back to EventRelistPeriod once the new stream has reported a change
// that a relist confirms (in either order). The node shows the stream's
// state as the "event stream" check of /healthz (and
// actorlet_pleg_event_stream_state); it fails while the stream is down,
// silent or not yet confirmed.
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

	// The runtime's event stream, when followed (following): its state,
	// how to end the open stream (a resubscription follows at once), the
	// timer of the watch's next Check, and how to stop following.
	following    bool
	watch        *pleg.StreamWatch
	endStream    context.CancelFunc
	check        clock.Timer
	checkAt      time.Time
	checkGen     uint64
	reported     *protocol.EventStreamState // last sent to the node
	cancelEvents context.CancelFunc

	// The runtime's early exits (runtimeadapter.ExitSource: Docker's
	// containerd), when followed: whether a stream is open, why the last
	// one ended, and the path last reported to the node.
	exitSource  string // its ExitPath; "": none followed
	exitsOpen   bool
	exitsErr    error
	exitPath    *protocol.ExitPathState
	cancelExits context.CancelFunc
	// dir: the router's pod actors, to which the exit follower delivers
	// a death directly (see podDirectory).
	dir *podDirectory
}

type (
	relistTick   struct{ gen uint64 }
	relistResult struct {
		res   runtimeadapter.ListResult
		err   error
		until time.Time // when the List (and its inspections) returned
	}
	// runtimeEvent is an event of stream number stream, received at at.
	runtimeEvent struct {
		ev     runtimeadapter.Event
		stream uint64
		at     time.Time
	}
	// streamOpened: stream number stream opened at at; end ends it.
	streamOpened struct {
		stream uint64
		end    context.CancelFunc
		at     time.Time
	}
	// streamEnded: stream number stream broke, or failed to open, with err.
	streamEnded struct {
		stream uint64
		err    error
	}
	streamCheck struct{ gen uint64 }
	// runtimeExit is a death the runtime reported ahead of its events;
	// delivered: the follower already sent it to the pod actor.
	runtimeExit struct {
		x         runtimeadapter.Exit
		delivered bool
	}
	exitsOpened struct{}
	exitsEnded  struct{ err error }
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

func newRelistProps(cfg Config, router, node *actor.PID, dir *podDirectory) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return &relistActor{cfg: cfg, router: router, node: node, dir: dir, log: cfg.Logger.Named("pleg"), relister: pleg.New(),
			watch: pleg.NewStreamWatch(pleg.DefaultStreamGrace)}
	}, cfg.mailbox(metrics.KindRelist)...)
}

func (r *relistActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		r.failures = backoff.NewExponentialBackOff(
			backoff.WithInitialInterval(r.cfg.RelistPeriod), backoff.WithMaxInterval(maxRelistRetry),
			backoff.WithRandomizationFactor(0), backoff.WithMultiplier(2), backoff.WithMaxElapsedTime(0))
		r.subscribe(ctx)
		r.subscribeExits(ctx)
		r.reportExitPath(ctx)
		r.list(ctx)
	case *actor.Stopping, *actor.Restarting:
		r.stopTimer()
		r.stopCheck()
		if r.cancelEvents != nil {
			r.cancelEvents()
		}
		if r.cancelExits != nil {
			r.cancelExits()
		}
	case *runtimeExit:
		// The runtime's containerd saw the death before the runtime did:
		// the pod actor acts on it as on a die event (the follower has
		// sent it there already when the pod actor was known, else the
		// router does), and the relist it triggers sees the container
		// exited (the runtime adapter corrects what the runtime still
		// says).
		x := m.x
		if r.log.Core().Enabled(zap.DebugLevel) {
			r.log.Debug("runtime exit", zap.String("id", short(x.ContainerID)), zap.Int("exitCode", x.ExitCode), zap.Time("exitedAt", x.ExitedAt),
				zap.Time("publishedAt", x.Published), zap.Time("receivedAt", x.Received), zap.Bool("delivered", m.delivered))
		}
		r.cfg.Metrics.IncTaskExits()
		if r.touched == nil {
			r.touched = map[string]bool{}
		}
		r.touched[x.ContainerID] = true
		if !m.delivered {
			ctx.Send(r.router, earlyExit(x))
		}
		if r.following {
			// The relist this triggers finds the death before Docker's
			// die event, which under load comes seconds later: the death
			// counts as reported, so that lag is never taken for a silent
			// stream. As stream 0, which is no stream's, it confirms none;
			// starts and removals still check the stream.
			before := r.watch.State()
			r.watch.Event(0, x.ContainerID, runtimeadapter.EventDie, r.cfg.Clock.Now())
			r.streamChanged(ctx, before)
		}
		r.want(ctx)
	case *exitsOpened:
		r.exitsOpen, r.exitsErr = true, nil
		r.log.Info("container exits: following " + r.exitSource + "; a death reaches its pod at once, ahead of the runtime's own events and the relist")
		r.reportExitPath(ctx)
	case *exitsEnded:
		if r.exitsOpen || r.exitsErr == nil {
			r.log.Warn("container exits: "+r.exitSource+" not followed; the runtime's die events and the relist meanwhile; resubscribing with backoff", zap.Error(m.err))
		}
		r.exitsOpen, r.exitsErr = false, m.err
		r.reportExitPath(ctx)
	case *relistTick:
		if m.gen == r.gen {
			r.list(ctx)
		}
	case *protocol.RelistNow:
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
			ctx.Send(r.router, &protocol.ContainerExited{UID: types.UID(uid), ContainerID: m.ev.ContainerID, ExitCode: m.ev.ExitCode, At: m.ev.Time})
		}
		before := r.watch.State()
		r.watch.Event(m.stream, m.ev.ContainerID, m.ev.Kind, m.at)
		r.streamChanged(ctx, before)
		r.want(ctx)
	case *streamOpened:
		before := r.watch.State()
		r.endStream = m.end
		r.watch.Opened(m.stream, m.at)
		r.streamChanged(ctx, before)
		r.want(ctx) // a (re)subscription: list to catch up
	case *streamEnded:
		before := r.watch.State()
		r.watch.Broken(m.err)
		r.streamChanged(ctx, before)
		r.want(ctx) // a gap: list to catch up
	case *streamCheck:
		if m.gen == r.checkGen {
			r.check = nil
			before := r.watch.State()
			r.watch.Check(r.cfg.Clock.Now())
			r.streamChanged(ctx, before)
		}
	case *relistResult:
		r.inFlight = false
		r.cfg.Metrics.ObserveRelist(r.started, r.cfg.Clock.Since(r.started), m.err)
		var next time.Duration
		if m.err != nil {
			if !r.failing {
				r.failures.Reset()
				ctx.Send(r.router, &protocol.RuntimeState{Healthy: false, Err: m.err})
			}
			r.failing = true
			next = r.failures.NextBackOff()
			r.log.Warn("relist failed; no transitions this round", zap.Error(m.err), zap.Duration("retryIn", next))
			ctx.Send(r.node, &protocol.RelistFailed{Err: m.err, At: r.cfg.Clock.Now()})
		} else {
			if r.failing {
				r.log.Info("runtime answers again; converging")
				ctx.Send(r.router, &protocol.RuntimeState{Healthy: true})
			}
			r.failing = false
			batches := r.relister.Relist(m.res)
			if len(batches) > 0 {
				for i := range batches {
					batches[i].ListedFrom, batches[i].ListedUntil = r.started, m.until
				}
				// One message for the whole relist: the router passes
				// each pod its element.
				ctx.Send(r.router, &protocol.RelistTransitions{Pods: batches})
			}
			ctx.Send(r.node, &protocol.RelistSnapshot{Containers: m.res.Containers, ObservedAt: m.res.ObservedAt})
			if r.following {
				before := r.watch.State()
				r.watch.Relisted(r.started, m.until, pleg.ChangesOf(batches))
				r.streamChanged(ctx, before)
			}
			next = r.period()
		}
		if r.again && m.err == nil {
			r.again = false
			r.list(ctx)
			return
		}
		r.schedule(ctx, next)
	}
}

// period is the relist period now: longer while the event stream is
// healthy.
func (r *relistActor) period() time.Duration {
	if r.following && r.watch.State() == pleg.StreamHealthy && r.cfg.EventRelistPeriod > 0 {
		return r.cfg.EventRelistPeriod
	}
	return r.cfg.RelistPeriod
}

// streamChanged carries out what the watch decided since it was in state
// before: the timer of its next Check, and on a change of state the log,
// the metric, the node's health check, the relist period, and, when the
// stream turned silent, its end (the subscribing goroutine opens a new one
// at once).
func (r *relistActor) streamChanged(ctx actor.Context, before pleg.StreamState) {
	r.armCheck(ctx)
	now := r.watch.State()
	if now == before {
		if now == pleg.StreamDown {
			r.reportStream(ctx) // why it is down may have changed
		}
		return
	}
	every := zap.Duration("relistEvery", r.period())
	switch now {
	case pleg.StreamHealthy:
		if before == pleg.StreamConfirming {
			r.log.Info("runtime event stream confirmed: it reported a change a relist found; relisting as a safety net", every)
		} else {
			r.log.Info("runtime event stream up; relisting as a safety net", every)
		}
	case pleg.StreamDown:
		r.log.Warn("runtime event stream broken; resubscribing with backoff", every, zap.Error(r.watch.Err()))
	case pleg.StreamSilent:
		r.log.Warn("runtime event stream silent; resubscribing", every, zap.String("evidence", r.watch.Missed().String()))
		r.cfg.Metrics.IncEventStreamSilences()
		if r.endStream != nil {
			r.endStream()
		}
	case pleg.StreamConfirming:
		r.log.Info("runtime event stream resubscribed; relisting often until it reports a change a relist confirms", every)
	}
	r.reportStream(ctx)
	r.reportExitPath(ctx)
	if !r.inFlight && !r.failing {
		r.schedule(ctx, r.period())
	}
}

// reportExitPath tells the node (and the metrics) the fastest path a
// death reaches its pod actor by now, when it or what it says changed.
func (r *relistActor) reportExitPath(ctx actor.Context) {
	st := &protocol.ExitPathState{Path: "relist", Message: fmt.Sprintf("deaths are found by relisting every %s", r.period())}
	switch {
	case r.exitsOpen:
		st.Path, st.Message = "containerd", r.exitSource+"; the runtime's die events and the relist as fallbacks"
	case r.following && r.watch.State() == pleg.StreamHealthy:
		st.Path, st.Message = "runtime-events", "the runtime's die events"
	}
	if !r.exitsOpen {
		switch {
		case r.exitSource == "":
			st.Message += " (no containerd followed)"
		case r.exitsErr != nil:
			st.Message += " (" + r.exitSource + " down: " + r.exitsErr.Error() + ")"
		default:
			st.Message += " (" + r.exitSource + " not open yet)"
		}
	}
	if r.exitPath != nil && r.exitPath.Path == st.Path && r.exitPath.Message == st.Message {
		return
	}
	st.Since = r.cfg.Clock.Now()
	if r.exitPath != nil && r.exitPath.Path == st.Path {
		st.Since = r.exitPath.Since
	}
	r.exitPath = st
	r.cfg.Metrics.SetExitPath(st.Path)
	ctx.Send(r.node, st)
}

// subscribeExits follows the runtime's early exits, when it reports them
// (runtimeadapter.ExitSource with a path), in a goroutine that opens one
// stream at a time until the actor stops; a stream that breaks or fails
// to open is followed by a new one after a backoff (1 s doubling to 30 s,
// reset by an exit). Missed exits are the die events' and the relist's.
func (r *relistActor) subscribeExits(ctx actor.Context) {
	xs, ok := capability[runtimeadapter.ExitSource](r.cfg.Runtime)
	if !ok || xs.ExitPath() == "" || r.cfg.EventRelistPeriod < 0 {
		return
	}
	r.exitSource = xs.ExitPath()
	c, cancel := context.WithCancel(context.Background())
	r.cancelExits = cancel
	self, sys, node, clk, dir := ctx.Self(), ctx.ActorSystem(), r.cfg.NodeName, r.cfg.Clock, r.dir
	go func() {
		defer func() {
			if p := recover(); p != nil {
				sys.Root.Send(self, &exitsEnded{err: fmt.Errorf("exit stream panicked: %v", p)})
			}
		}()
		bo := backoff.NewExponentialBackOff(backoff.WithInitialInterval(time.Second), backoff.WithMaxInterval(maxRelistRetry),
			backoff.WithMaxElapsedTime(0))
		// The death goes straight to its pod actor from the goroutine
		// that reads the runtime's stream (sources that take the hook),
		// else from this one; then to this actor for the relist.
		deliver := func(x runtimeadapter.Exit) bool {
			pid, ok := dir.lookup(types.UID(x.PodUID))
			if ok {
				sys.Root.Send(pid, earlyExit(x))
			}
			return ok
		}
		hooked := runtimeadapter.WithExitHook(c, deliver)
		for c.Err() == nil {
			exits, errs := xs.Exits(hooked, node)
			var err error
			select {
			case err = <-errs: // failed at once
			default:
				sys.Root.Send(self, &exitsOpened{})
			}
			for x := range exits {
				bo.Reset()
				delivered := x.Handled || deliver(x)
				sys.Root.Send(self, &runtimeExit{x: x, delivered: delivered})
			}
			if err == nil {
				err = <-errs
			}
			if c.Err() != nil {
				return
			}
			sys.Root.Send(self, &exitsEnded{err: err})
			wait := clk.NewTimer(bo.NextBackOff())
			select {
			case <-wait.C():
			case <-c.Done():
				wait.Stop()
				return
			}
		}
	}()
}

// earlyExit is the pod actor's message of an early exit.
func earlyExit(x runtimeadapter.Exit) *protocol.ContainerExited {
	return &protocol.ContainerExited{UID: types.UID(x.PodUID), ContainerID: x.ContainerID, ExitCode: x.ExitCode, At: x.ExitedAt}
}

// reportStream tells the node (and the metrics) the stream's state, when
// it or what it says changed.
func (r *relistActor) reportStream(ctx actor.Context) {
	st := r.watch.State()
	msg := fmt.Sprintf("events flow; safety-net relist every %s", r.period())
	if st != pleg.StreamHealthy {
		msg = fmt.Sprintf("%s; relisting every %s", r.watch.Reason(), r.period())
	}
	if r.reported != nil && r.reported.State == st.String() && r.reported.Message == msg {
		return
	}
	since := r.cfg.Clock.Now()
	if r.reported != nil && r.reported.State == st.String() {
		since = r.reported.Since
	}
	r.reported = &protocol.EventStreamState{State: st.String(), OK: st == pleg.StreamHealthy, Message: msg, Since: since}
	r.cfg.Metrics.SetEventStreamState(st.String())
	ctx.Send(r.node, r.reported)
}

// armCheck keeps a timer for the watch's next Check.
func (r *relistActor) armCheck(ctx actor.Context) {
	at, ok := r.watch.Deadline()
	if ok && r.check != nil && at.Equal(r.checkAt) {
		return
	}
	r.stopCheck()
	if !ok {
		return
	}
	r.checkGen++
	gen, self, sys := r.checkGen, ctx.Self(), ctx.ActorSystem()
	r.checkAt = at
	r.check = r.cfg.Clock.AfterFunc(max(at.Sub(r.cfg.Clock.Now()), 0), func() { sys.Root.Send(self, &streamCheck{gen: gen}) })
}

func (r *relistActor) stopCheck() {
	if r.check != nil {
		r.check.Stop()
		r.check = nil
	}
	r.checkGen++
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
// goroutine that opens one stream at a time until the actor stops: a
// stream that breaks, or does not open within ListTimeout, is followed by
// a new one after a backoff (1 s doubling to 30 s, reset by an event); a
// stream the actor ends (it was silent) by a new one at once. Events and
// the streams' openings and ends come back as messages, each event
// stamped with the time it was read.
func (r *relistActor) subscribe(ctx actor.Context) {
	es, ok := capability[runtimeadapter.EventSource](r.cfg.Runtime)
	if !ok || r.cfg.EventRelistPeriod < 0 {
		return
	}
	r.following = true
	r.reportStream(ctx) // down: not open yet
	c, cancel := context.WithCancel(context.Background())
	r.cancelEvents = cancel
	self, sys, node, clk, openWithin := ctx.Self(), ctx.ActorSystem(), r.cfg.NodeName, r.cfg.Clock, r.cfg.ListTimeout
	go func() {
		var n uint64
		defer func() {
			if p := recover(); p != nil {
				sys.Root.Send(self, &streamEnded{stream: n, err: fmt.Errorf("event stream panicked: %v", p)})
			}
		}()
		bo := backoff.NewExponentialBackOff(backoff.WithInitialInterval(time.Second), backoff.WithMaxInterval(maxRelistRetry),
			backoff.WithMaxElapsedTime(0))
		for c.Err() == nil {
			n++
			sc, end := context.WithCancel(c)
			var late atomic.Bool
			t := clk.AfterFunc(openWithin, func() { late.Store(true); end() })
			events, errs := es.Events(sc, node)
			t.Stop()
			var err error
			opened := !late.Load()
			if opened {
				select {
				case err = <-errs: // failed at once
					opened = false
				default:
				}
			}
			if opened {
				sys.Root.Send(self, &streamOpened{stream: n, end: end, at: clk.Now()})
			}
			got := false
			for ev := range events {
				if !got {
					got = true
					bo.Reset()
				}
				sys.Root.Send(self, &runtimeEvent{ev: ev, stream: n, at: clk.Now()})
			}
			if err == nil {
				select {
				case err = <-errs:
				default:
				}
			}
			replaced := opened && sc.Err() != nil // the actor ended it
			end()
			if c.Err() != nil {
				return
			}
			if replaced {
				continue
			}
			if late.Load() {
				err = fmt.Errorf("event stream of node %s: not open after %s: %w", node, openWithin, runtimeadapter.ErrUnavailable)
			}
			sys.Root.Send(self, &streamEnded{stream: n, err: err})
			wait := clk.NewTimer(bo.NextBackOff())
			select {
			case <-wait.C():
			case <-c.Done():
				wait.Stop()
				return
			}
		}
	}()
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
