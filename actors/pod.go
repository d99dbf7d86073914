package actors

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/actorlet/actorlet/internal/metrics"
	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/internal/protocol"
	"github.com/actorlet/actorlet/internal/volumeprep"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// podActor owns one pod's containers. Its state is rebuilt from the
// runtime (a list by pod UID) whenever it starts, including after a
// restart by its supervisor; its spec comes from the router.
//
// One sync runs at a time, off the mailbox, as the kubelet's pod worker:
// compute a plan, carry it out in a goroutine, list the pod's containers,
// report back with a syncDone. Events that arrive meanwhile mark the pod
// dirty and trigger one more sync after it.
type podActor struct {
	cfg  *Config // shared by every pod actor of the node
	uid  types.UID
	node *actor.PID
	log  *zap.Logger

	pod     *v1.Pod // desired spec; nil when removed or not known yet
	known   bool    // a spec or removal has arrived
	removed bool
	// removedAs names a pod this actor only removes (an orphan found in
	// the runtime: no spec), "namespace/name", for logs and events.
	removedAs string

	// containers is the pod's newest listing: taken between listedFrom
	// and listedUntil (the list call's start and return), at the runtime's
	// state version (0: none). See observe.
	containers  []runtimeadapter.Container
	listedFrom  time.Time
	listedUntil time.Time
	version     uint64
	// listed: containers may be planned on. False until the first list,
	// and again after a failed list or a runtime outage: the next sync
	// lists first (what it holds may predate the outage).
	listed bool
	// received counts the PLEG listings received; an own list that
	// started when it was n and comes back at n is newer than all of them.
	received uint64
	// inc tells this incarnation's workers and timers from those of an
	// incarnation before a supervisor restart (their late messages are
	// dropped).
	inc uint64
	// workerDone is closed when the running worker goroutine ends.
	workerDone chan struct{}

	syncing    bool
	dirty      bool
	syncQueued bool // a syncNow is in the mailbox

	retry    time.Duration // next retry delay after a failed sync
	timer    clock.Timer
	timerGen uint64
	timerAt  time.Time

	startTime  time.Time
	started    bool // pod start duration observed
	lastStatus *v1.PodStatus

	syncStart time.Time
	// runtimeDown: the PLEG's lists fail; act on nothing until they work.
	runtimeDown bool
	// halt is the running worker's context (nil when none runs): cancelled
	// when this incarnation stops, its calls end and it starts no other.
	halt       context.Context
	cancelHalt context.CancelFunc
	// cancelAbort aborts the running worker's starts (see abortStarts).
	cancelAbort context.CancelFunc
	// relistSelf: a PLEG listing that could not be ordered against the
	// held one disagreed with it; list again to learn which is right.
	relistSelf bool
	// waits: containers whose last start attempt failed before a
	// container ran (image, create), by name; see holdForWaits.
	waits map[string]startWait

	// Probes: one child per container and probe kind, and what they said,
	// by container instance ID.
	probes        map[string]*actor.PID // "<container>/<kind>"
	probedSpec    *v1.Pod               // the spec the probe children were made for
	dirtyProbes   bool                  // containers observed since the children were told
	unhealthy     map[string]time.Duration
	killMessages  map[string]string // container ID → the Killing event's message (a failed probe)
	ready         map[string]bool
	startupPassed map[string]bool
	lastGC        time.Time         // last sync that removed unneeded exited instances
	backoffEvents map[string]string // container → message of the last BackOff event
}

// Messages private to the pod actor (they never leave it).
type (
	syncDone struct {
		inc     uint64 // the incarnation that started the worker
		listing ownListing
		listErr error
		errs    []error
		waits   map[string]startWait // container → why its start attempt failed
		started []string             // containers started
	}
	resyncTimer struct{ inc, gen uint64 }
	// syncNow: a sync requested by PLEG batches (see requestSync).
	syncNow struct{ inc uint64 }
	// ownListing is a pod actor's own list of its pod's containers.
	ownListing struct {
		containers  []runtimeadapter.Container
		from, until time.Time // the List call's start and return
		version     uint64
		received    uint64 // the actor's received count when the sync began
	}
)

// incarnations numbers pod actor incarnations (see podActor.inc).
var incarnations atomic.Uint64

// workerStopWait bounds how long a stopping or restarting pod actor waits
// for its worker, whose runtime calls are cancelled: a call still under
// way when a new incarnation or a new node plans could, for instance,
// start a second instance of a container (invariant 1).
const workerStopWait = 10 * time.Second

// newPodProps returns the props of every pod actor of a router: one
// value for all (a pod actor learns its UID from its name, "pod-<uid>"),
// so that an idle pod costs no props of its own.
func newPodProps(cfg Config, node *actor.PID) *actor.Props {
	shared := &cfg
	return actor.PropsFromProducer(func() actor.Actor {
		return &podActor{cfg: shared, node: node}
	}, append(cfg.mailbox(metrics.KindPod), actor.WithReceiverMiddleware(logPanics(cfg.Logger)))...)
}

// podActorName is the name a router spawns uid's pod actor under.
func podActorName(uid types.UID) string { return "pod-" + string(uid) }

// podUIDOf is the pod UID of the pod actor self, child of parent.
func podUIDOf(self, parent *actor.PID) types.UID {
	return types.UID(strings.TrimPrefix(self.Id, parent.Id+"/pod-"))
}

// put sets (*m)[k] = v, making the map first: a pod actor's maps stay nil
// until used.
func put[K comparable, V any](m *map[K]V, k K, v V) {
	if *m == nil {
		*m = map[K]V{}
	}
	(*m)[k] = v
}

func (a *podActor) Receive(ctx actor.Context) {
	if a.uid == "" {
		a.uid = podUIDOf(ctx.Self(), ctx.Parent())
		a.log = a.cfg.Logger.With(zap.String("podUID", string(a.uid)))
	}
	if hook := podReceiveHook.Load(); hook != nil {
		(*hook)(a.uid, ctx.Message())
	}
	switch m := ctx.Message().(type) {
	case *actor.Started:
		// Rebuild from the runtime and ask the router for the spec (after
		// a supervisor restart this actor remembers nothing).
		a.inc = incarnations.Add(1)
		ctx.Request(ctx.Parent(), &protocol.SpecRequest{UID: a.uid})
		a.startList(ctx)
	case *actor.Restarting:
		a.cfg.Metrics.IncPodActorRestart()
		a.stopTimer()
		a.stopWorkers()
	case *actor.Stopping:
		a.stopTimer()
		a.stopWorkers()
	case *protocol.PodSpec:
		if a.pod != nil && m.Pod != nil && a.pod.Name != m.Pod.Name {
			a.log = a.log.With(zap.String("pod", m.Pod.Namespace+"/"+m.Pod.Name))
		}
		if !a.known && m.Pod != nil {
			a.log = a.log.With(zap.String("pod", m.Pod.Namespace+"/"+m.Pod.Name))
			if a.startTime.IsZero() { // else recovered from the runtime (see recoverStart)
				a.startTime = a.cfg.Clock.Now()
			}
		}
		if a.removed || (a.pod != nil && m.Pod != nil && !equality.Semantic.DeepEqual(a.pod.Spec, m.Pod.Spec)) {
			a.abortStarts() // nothing starts with the old spec
			a.waits = nil   // and every failed start is tried again with the new one
		}
		a.pod, a.known, a.removed = m.Pod, true, false
		a.spawnProbes(ctx)
		a.sync(ctx)
	case *protocol.PodRemoved:
		if a.pod == nil && a.removedAs == "" && m.Name != "" {
			a.removedAs = m.Namespace + "/" + m.Name
			a.log = a.log.With(zap.String("pod", a.removedAs))
		}
		a.known, a.removed = true, true
		a.abortStarts()
		a.stopProbes(ctx)
		a.sync(ctx)
	case *probeChanged:
		a.probeChanged(ctx, m)
	case *protocol.RuntimeState:
		if m.Healthy && a.runtimeDown {
			// What this actor holds may predate the outage, and the PLEG's
			// first listing after it comes after this message: list anew
			// before planning (else a stale listing could re-create an
			// instance that ran and died meanwhile).
			a.listed = false
		}
		a.runtimeDown = !m.Healthy
		if m.Healthy {
			a.sync(ctx)
		}
	case *protocol.PodTransitions:
		if a.log.Core().Enabled(zap.DebugLevel) { // no fields built per event unless they are logged
			for _, e := range m.Events {
				a.log.Debug("PLEG event", zap.String("type", string(e.Type)), zap.String("container", e.ContainerName), zap.String("id", short(e.ContainerID)))
			}
		}
		from, until := m.ListedFrom, m.ListedUntil
		if from.IsZero() || until.IsZero() {
			from, until = m.ObservedAt, m.ObservedAt
		}
		a.received++
		// A batch that changes nothing this actor holds needs no sync.
		// Batches queued together are planned once (see requestSync).
		if a.observe(m.Containers, from, until, m.Version, false) || a.relistSelf {
			a.requestSync(ctx)
		}
	case *protocol.ContainerExited:
		if a.log.Core().Enabled(zap.DebugLevel) {
			a.log.Debug("PLEG event", zap.String("type", string(protocol.ContainerDied)), zap.String("id", short(m.ContainerID)), zap.String("from", "runtime event"))
		}
		if a.died(m) {
			a.requestSync(ctx)
		}
	case *syncNow:
		if m.inc == a.inc {
			a.syncQueued = false
			a.sync(ctx)
		}
	case *syncDone:
		if m.inc != a.inc {
			return // a worker of an incarnation before a restart
		}
		a.syncing = false
		a.workerDone = nil
		if a.cancelHalt != nil {
			a.cancelHalt() // the worker has ended; release its context
			a.halt, a.cancelHalt, a.cancelAbort = nil, nil, nil
		}
		if !a.syncStart.IsZero() {
			a.cfg.Metrics.ObserveSync(a.cfg.Clock.Since(a.syncStart))
			a.syncStart = time.Time{}
		}
		ctx.Send(a.node, &protocol.PodSyncing{UID: a.uid})
		if m.listErr == nil {
			l := m.listing
			a.listed = true
			if l.received == a.received {
				// No PLEG listing came meanwhile: this one, started after
				// everything this actor had heard, is the newest.
				a.take(l.containers, l.from, l.until, l.version)
			} else {
				a.observe(l.containers, l.from, l.until, l.version, true)
			}
		} else {
			a.listed = false // list before planning again
		}
		for _, name := range m.started {
			delete(a.waits, name)
		}
		for name, w := range m.waits {
			put(&a.waits, name, w)
		}
		errs := m.errs
		if m.listErr != nil {
			errs = append(errs, m.listErr)
		}
		if len(errs) > 0 {
			a.log.Warn("pod sync failed; retrying", zap.Errors("errors", errs), zap.Duration("retryIn", a.nextRetry()))
			a.schedule(ctx, a.cfg.Clock.Now().Add(a.nextRetry()))
			a.retry = min(max(a.retry*2, syncRetryInitial*2), syncRetryMax)
		} else {
			a.retry = 0
		}
		if len(errs) == 0 || a.dirty {
			a.dirty = false
			a.sync(ctx)
		}
	case *resyncTimer:
		if m.inc != a.inc || m.gen != a.timerGen {
			return // a stale timer: from before a newer schedule, or a restart
		}
		a.timer, a.timerAt = nil, time.Time{}
		a.sync(ctx)
	}
}

// startList reads the pod's containers from the runtime, off the mailbox;
// the answer is a syncDone like any sync's.
func (a *podActor) startList(ctx actor.Context) {
	a.syncing = true
	halt, _ := a.newHalt()
	w := &worker{cfg: *a.cfg, uid: a.uid, log: a.log, halt: halt}
	self, sys := ctx.Self(), ctx.ActorSystem()
	done, received := &syncDone{inc: a.inc}, a.received
	finished := make(chan struct{})
	a.workerDone = finished
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done.listErr = fmt.Errorf("pod %s: list panicked: %v", a.uid, r)
			}
			close(finished)
			sys.Root.Send(self, done)
		}()
		done.listing, done.listErr = w.list()
		done.listing.received = received
	}()
}

func (a *podActor) nextRetry() time.Duration {
	if a.retry == 0 {
		return syncRetryInitial
	}
	return a.retry
}

// observe takes a listing of the pod's containers, taken some time
// between from and until, unless the one held is newer: a stale listing
// never overwrites a newer one (the PLEG reports a transition once, so a
// newer listing dropped would lose it for good). own marks this actor's
// own listing, which wins a tie of versions.
//
// Listings are ordered by the runtime's state version when both have one
// (exact), else by their time spans: one that began after the other
// returned is newer. Spans that overlap (a PLEG relist running while this
// actor listed) cannot be ordered: when they disagree the actor lists
// again, and that list, begun after both, settles it.
//
// It reports whether it took a listing that differs from the one held.
func (a *podActor) observe(cs []runtimeadapter.Container, from, until time.Time, version uint64, own bool) bool {
	if version != 0 && a.version != 0 {
		if version > a.version || (version == a.version && own) {
			return a.take(cs, from, until, version)
		}
		return false
	}
	switch {
	case from.After(a.listedUntil):
		return a.take(cs, from, until, version)
	case until.Before(a.listedFrom):
		// older: the held listing already has what it says
	case !sameStates(cs, a.containers):
		a.relistSelf = true
	}
	return false
}

func (a *podActor) take(cs []runtimeadapter.Container, from, until time.Time, version uint64) bool {
	a.recoverStart(cs)
	changed := !a.listed || !sameStates(cs, a.containers)
	a.containers, a.listedFrom, a.listedUntil, a.version = cs, from, until, version
	if changed {
		a.dirtyProbes = true
	}
	return changed
}

// died marks the container m names exited in the listing held, if the
// listing has it running (a death is final: actorlet never starts an
// instance that ran), and reports whether it did. The listing's span is
// left as it was: the PLEG's listing that the same event triggers is
// newer, and replaces this one with the runtime's own account.
func (a *podActor) died(m *protocol.ContainerExited) bool {
	i := slices.IndexFunc(a.containers, func(c runtimeadapter.Container) bool { return c.ID == m.ContainerID })
	if i < 0 || a.containers[i].State != runtimeadapter.StateRunning {
		return false
	}
	cs := slices.Clone(a.containers) // listings may be shared with their sender
	c := &cs[i]
	c.State, c.RawState, c.FinishedAt = runtimeadapter.StateExited, "exited", m.At
	if m.ExitCode >= 0 {
		c.ExitCode = m.ExitCode
	}
	c.Reason = "Error"
	if c.ExitCode == 0 {
		c.Reason = "Completed"
	}
	a.containers = cs
	a.received++ // an own list under way may predate the death
	a.dirtyProbes = true
	return true
}

// requestSync syncs once the messages already in the mailbox are taken:
// a burst of PLEG batches is planned once.
func (a *podActor) requestSync(ctx actor.Context) {
	if a.syncQueued {
		return
	}
	a.syncQueued = true
	ctx.Send(ctx.Self(), &syncNow{inc: a.inc})
}

// sameStates: the two listings have the same container instances in the
// same states (what a plan and a status read of them).
func sameStates(x, y []runtimeadapter.Container) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		c := &x[i]
		j := i // listings usually come in the same order
		if j >= len(y) || y[j].ID != c.ID {
			j = slices.IndexFunc(y, func(o runtimeadapter.Container) bool { return o.ID == c.ID })
			if j < 0 {
				return false
			}
		}
		o := &y[j]
		if o.State != c.State || o.RawState != c.RawState || o.ExitCode != c.ExitCode || o.Reason != c.Reason ||
			!o.StartedAt.Equal(c.StartedAt) || !o.FinishedAt.Equal(c.FinishedAt) || o.IP != c.IP || o.Error != c.Error {
			return false
		}
	}
	return true
}

// sync plans and, when there is work, starts it off the mailbox.
func (a *podActor) sync(ctx actor.Context) {
	if a.syncing {
		a.dirty = true
		return
	}
	if !a.listed || a.relistSelf {
		a.relistSelf = false
		a.startList(ctx) // first, a retry after a failed list, or a tie to settle
		return
	}
	if !a.known {
		return // wait for the spec
	}
	if a.runtimeDown {
		a.dirty = true
		return // no create or kill on stale knowledge; the PLEG says when the runtime is back
	}
	var pod *v1.Pod
	if !a.removed {
		pod = a.pod
	}
	now := a.cfg.Clock.Now()
	gc := now.Sub(a.lastGC) >= gcPeriod
	if gc {
		a.lastGC = now
	}
	a.updateProbes(ctx)
	plan := podsync.Compute(podsync.Input{
		Node: a.cfg.NodeName, Pod: pod, Containers: a.containers, Now: now, GC: gc,
		Backoff: a.cfg.Backoff, History: a.cfg.History.Pod(string(a.uid)), Unhealthy: a.unhealthy,
	})
	if plan.RecordsChanged { // the exits seen, the restarts decided: kept outside this actor
		a.cfg.History.Put(string(a.uid), plan.Records)
	}
	a.holdForWaits(ctx, &plan, now)
	if pod != nil {
		a.report(ctx, podsync.StatusWith(pod, a.containers, plan, podsync.Probes{Ready: a.ready, Started: a.startupPassed}))
	}
	if plan.Terminated {
		a.log.Info("pod terminated: all containers removed")
		a.cfg.History.Forget(string(a.uid))
		root, uid := a.cfg.Spec.RootDir, a.uid
		go func() { // emptyDir volumes may be large: off the mailbox
			defer func() { _ = recover() }()
			_ = volumeprep.RemovePodDir(root, uid)
		}()
		ctx.Send(ctx.Parent(), &protocol.Terminated{UID: a.uid})
		return
	}
	if !plan.RequeueAt.IsZero() {
		a.schedule(ctx, plan.RequeueAt)
	}
	if pod != nil && podsync.HasGarbage(pod, a.containers) {
		a.schedule(ctx, a.lastGC.Add(gcPeriod)) // no timer for a pod with nothing to collect
	}
	for name, w := range plan.Waiting {
		a.log.Debug("container waiting", zap.String("container", name), zap.String("reason", w.Reason), zap.String("message", w.Message))
		if w.Reason == podsync.ReasonCrashLoop && a.backoffEvents[name] != w.Message {
			put(&a.backoffEvents, name, w.Message) // once per exit, not per sync
			a.emitter(ctx)(messages.EventWarning, "BackOff", name, "Back-off restarting failed container "+name+": "+w.Message)
		}
	}
	if plan.Empty() {
		return
	}
	a.syncing = true
	a.syncStart = now
	ctx.Send(a.node, &protocol.PodSyncing{UID: a.uid, Since: now})
	halt, abort := a.newHalt()
	w := &worker{cfg: *a.cfg, pod: pod, uid: a.uid, log: a.log, sandboxID: plan.SandboxID, emit: a.emitter(ctx), hookPod: a.pod,
		halt: halt, abort: abort, podStart: a.startTime, killMessages: maps.Clone(a.killMessages), removedAs: a.removedAs}
	self, sys := ctx.Self(), ctx.ActorSystem()
	done, received := &syncDone{inc: a.inc}, a.received
	finished := make(chan struct{})
	a.workerDone = finished
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done.errs = append(done.errs, fmt.Errorf("pod %s: sync panicked: %v\n%s", a.uid, r, debug.Stack()))
			}
			close(finished)
			sys.Root.Send(self, done)
		}()
		done.errs = w.run(plan)
		done.waits, done.started = w.waits, w.started
		if w.halted() {
			done.listErr = errors.New("pod actor stopped")
			return
		}
		done.listing, done.listErr = w.list()
		done.listing.received = received
	}()
}

// emitter returns a function that sends pod events to the node; it is
// safe to call from the worker's goroutines.
func (a *podActor) emitter(ctx actor.Context) func(messages.EventType, string, string, string) {
	sys, node, uid, clk := ctx.ActorSystem(), a.node, a.uid, a.cfg.Clock
	var ns, name string
	if a.pod != nil {
		ns, name = a.pod.Namespace, a.pod.Name
	} else if i := strings.Index(a.removedAs, "/"); i >= 0 {
		ns, name = a.removedAs[:i], a.removedAs[i+1:]
	}
	return func(typ messages.EventType, reason, container, msg string) {
		sys.Root.Send(node, &messages.Event{Time: clk.Now(), Type: typ, Reason: reason,
			Namespace: ns, Pod: name, UID: uid, Container: container, Message: msg})
	}
}

// schedule arranges one resync at `at` (the earliest wins). Timers carry a
// generation so that a stale one does nothing.
func (a *podActor) schedule(ctx actor.Context, at time.Time) {
	if a.timer != nil && !a.timerAt.After(at) {
		return
	}
	a.stopTimer()
	a.timerGen++
	gen, inc, self, sys := a.timerGen, a.inc, ctx.Self(), ctx.ActorSystem()
	a.timerAt = at
	a.timer = a.cfg.Clock.AfterFunc(at.Sub(a.cfg.Clock.Now()), func() { sys.Root.Send(self, &resyncTimer{inc: inc, gen: gen}) })
}

func (a *podActor) stopTimer() {
	if a.timer != nil {
		a.timer.Stop()
		a.timer, a.timerAt = nil, time.Time{}
	}
}

func (a *podActor) report(ctx actor.Context, st v1.PodStatus) {
	if !a.startTime.IsZero() {
		t := metav1.NewTime(a.startTime)
		st.StartTime = &t
	}
	if a.lastStatus != nil && equality.Semantic.DeepEqual(*a.lastStatus, st) {
		return
	}
	if !a.started && allRunning(st) && !a.startTime.IsZero() {
		a.started = true // manifest seen → every container running, once
		a.cfg.Metrics.ObservePodStart(a.cfg.Clock.Since(a.startTime))
	}
	a.lastStatus = &st
	ctx.Send(a.node, &protocol.PodStatusReport{UID: a.uid, Namespace: a.pod.Namespace, Name: a.pod.Name, Status: st})
}

// allRunning: the pod has containers and every one is running.
func allRunning(st v1.PodStatus) bool {
	if len(st.ContainerStatuses) == 0 {
		return false
	}
	for _, c := range st.ContainerStatuses {
		if c.State.Running == nil {
			return false
		}
	}
	return true
}

// podReceiveHook, when set (by tests only), sees every message a pod actor
// receives before it does; a panic there is a pod actor panic.
var podReceiveHook atomic.Pointer[func(uid types.UID, msg any)]

// logPanics logs a pod actor's panic with its stack, once, then lets it
// go on to the supervisor (the router's strategy restarts the actor).
func logPanics(log *zap.Logger) actor.ReceiverMiddleware {
	return func(next actor.ReceiverFunc) actor.ReceiverFunc {
		return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
			defer func() {
				if r := recover(); r != nil {
					log.Error("pod actor panicked; its supervisor restarts it", zap.String("podUID", string(podUIDOf(c.Self(), c.Parent()))),
						zap.Any("panic", r), zap.String("message", fmt.Sprintf("%T", env.Message)), zap.ByteString("stack", debug.Stack()))
					panic(r)
				}
			}()
			next(c, env)
		}
	}
}

// newHalt makes the contexts of a new worker: halt, cancelled when this
// actor stops or restarts, or once the worker has ended; and abort, its
// child, also cancelled by abortStarts. (One per worker, not per actor: an
// idle pod holds no context.)
func (a *podActor) newHalt() (halt, abort context.Context) {
	a.halt, a.cancelHalt = context.WithCancel(context.Background())
	abort, a.cancelAbort = context.WithCancel(a.halt)
	return a.halt, abort
}

// abortStarts ends the running worker's image waits, creates and starts
// (those under way return, the rest are skipped), as the kubelet cancels a
// pod's sync under way when the pod starts terminating: the pod was
// removed or its spec changed, so what the worker was starting is no
// longer wanted. Its stops go on for their whole grace period. A pull it
// waited for goes on for the other pods that wait for the image.
func (a *podActor) abortStarts() {
	if a.cancelAbort != nil {
		a.cancelAbort()
	}
}

// stopWorkers cancels the running worker's calls and waits for it to end,
// at most workerStopWait.
func (a *podActor) stopWorkers() {
	if a.cancelHalt != nil {
		a.cancelHalt()
	}
	if a.workerDone == nil {
		return
	}
	t := a.cfg.Clock.NewTimer(workerStopWait)
	defer t.Stop()
	select {
	case <-a.workerDone:
	case <-t.C():
		a.log.Warn("pod actor stopping: its runtime call did not end within " + workerStopWait.String())
	}
	a.workerDone = nil
}
