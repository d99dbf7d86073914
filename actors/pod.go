package actors

import (
	"fmt"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/actorlet/actorlet/internal/dispatch"
	"github.com/actorlet/actorlet/internal/metrics"
	"github.com/actorlet/actorlet/internal/podstate"
	"github.com/actorlet/actorlet/internal/protocol"
	"github.com/actorlet/actorlet/internal/volumeprep"
	"github.com/actorlet/actorlet/messages"
)

// podActor owns one pod's containers. It is a shell around its state
// machine (podstate.Pod, raft RawNode style): it turns the messages it
// receives into events, steps the machine, and carries out the effects
// the machine returns (an executor runs plans and lists off the mailbox,
// timers, probe children, reports and events to the node). Its state is
// rebuilt from the runtime (a list by pod UID) whenever it starts,
// including after a restart by its supervisor; its spec comes from the
// router.
type podActor struct {
	cfg *podShared // shared by every pod actor of the node (and its node PID)
	uid types.UID
	// log is the pod's logger while the pod is busy, nil while it is
	// idle: see logger.
	log *zap.Logger

	m    *podstate.Pod
	exec executor
	// timer is the one timer the machine asked for; timerGen tells a
	// stale firing from the current one.
	timer    clock.Timer
	timerGen uint32
	// inc tells this incarnation's executor and timers from those of an
	// incarnation before a supervisor restart (their late messages are
	// dropped). (inc and timerGen of 32 bits side by side, the node's PID
	// in cfg: the struct is 96 B, not 112.)
	inc uint32
	// probes: one child per container and probe kind, "<container>/<kind>".
	probes map[string]*actor.PID
}

// Messages private to the pod actor (they never leave it).
type (
	// syncDone: the executor's outcome.
	syncDone struct {
		inc  uint32 // the incarnation that started the executor
		done podstate.WorkDone
	}
	resyncTimer struct{ inc, gen uint32 }
	// syncNow: a sync requested by PLEG batches (podstate.RequestSync).
	syncNow struct{ inc uint32 }
)

// incarnations numbers pod actor incarnations (see podActor.inc).
var incarnations atomic.Uint32

// newPodProps returns the props of every pod actor of a router: one
// value for all (a pod actor learns its UID from its name, "pod-<uid>"),
// so that an idle pod costs no props of its own. Their mailboxes
// (dispatch.Mailbox: small, nothing allocated per message) run on pool's
// goroutines (see package dispatch).
func newPodProps(cfg Config, node *actor.PID, pool *dispatch.Pool) *actor.Props {
	shared := &podShared{Config: cfg, node: node, machine: podstate.Config{Node: cfg.NodeName, Backoff: cfg.Backoff,
		GCPeriod: gcPeriod, RetryInitial: syncRetryInitial, RetryMax: syncRetryMax, HostIPs: cfg.Spec.HostIPs,
		RuntimeType: runtimeType(cfg.Runtime), Standby: cfg.Standby, SandboxIsContainer: sandboxIsContainer(cfg.Runtime)}}
	var counted []actor.MailboxMiddleware
	if cfg.Metrics != nil {
		counted = append(counted, cfg.Metrics.MailboxMiddleware(metrics.KindPod))
	}
	return actor.PropsFromProducer(func() actor.Actor {
		return &podActor{cfg: shared}
	}, actor.WithMailbox(dispatch.Mailbox(counted...)), actor.WithDispatcher(pool))
}

// podShared is what every pod actor of a node shares: the node's
// configuration, and its pod machines' (one value for all: an idle pod
// holds no copy).
type podShared struct {
	Config
	machine podstate.Config
	node    *actor.PID // the node actor, which pod actors report to
}

// mailboxThroughput is how many messages a pod actor takes in a row
// before it lets other goroutines run (protoactor's default).
const mailboxThroughput = 300

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
	defer a.logPanic(ctx)
	if a.uid == "" {
		a.uid = podUIDOf(ctx.Self(), ctx.Parent())
	}
	if hook := podReceiveHook.Load(); hook != nil {
		(*hook)(a.uid, ctx.Message())
	}
	if a.lifecycle(ctx) {
		return
	}
	var effects []podstate.Effect
	if m, ok := ctx.Message().(*protocol.PodTransitions); ok {
		// The common message: stepped without an event on the heap.
		a.logTransitions(m)
		effects = a.m.StepListed(podstate.Listed{Containers: m.Containers, From: m.ListedFrom, Until: m.ListedUntil,
			ObservedAt: m.ObservedAt, Version: m.Version}, a.cfg.Clock.Now())
	} else {
		ev := a.event(ctx.Message())
		if ev == nil {
			return
		}
		effects = a.m.Step(ev, a.cfg.Clock.Now())
	}
	a.apply(ctx, effects)
	if ph := a.m.Phase(); ph == podstate.PhaseIdle || ph == podstate.PhaseWaitingForSpec {
		a.log = nil
	}
}

// logger is the pod's logger (its UID and, once known, its
// namespace/name as fields). An idle pod keeps none: a logger with
// fields holds a copy of its core (with a JSON core, an encoder and its
// buffer), and idle pods are most of a node's; the logger is made again
// when the pod next logs or syncs.
func (a *podActor) logger() *zap.Logger {
	if a.log == nil {
		fields := []zap.Field{zap.String("podUID", string(a.uid))}
		if a.m != nil {
			if ns, name := a.m.Name(); name != "" {
				fields = append(fields, zap.String("pod", ns+"/"+name))
			}
		}
		a.log = a.cfg.Logger.With(fields...)
	}
	return a.log
}

// debug: the pod's debug messages are logged (no fields are built for
// them otherwise).
func (a *podActor) debug() bool { return a.cfg.Logger.Core().Enabled(zap.DebugLevel) }

// lifecycle handles the actor's own lifecycle messages, and reports
// whether the message was one.
func (a *podActor) lifecycle(ctx actor.Context) bool {
	switch ctx.Message().(type) {
	case *actor.Started:
		// Rebuild from the runtime and ask the router for the spec (after
		// a supervisor restart this actor remembers nothing).
		a.inc = incarnations.Add(1)
		a.m = podstate.NewPodShared(&a.cfg.machine, a.cfg.History.Pod(string(a.uid)))
		ctx.Request(ctx.Parent(), &protocol.SpecRequest{UID: a.uid})
		a.apply(ctx, a.m.Step(podstate.Started{}, a.cfg.Clock.Now()))
	case *actor.Restarting:
		a.cfg.Metrics.IncPodActorRestart()
		a.stopTimer()
		a.exec.stop(a.cfg.Clock, a.logger())
	case *actor.Stopping:
		a.stopTimer()
		a.exec.stop(a.cfg.Clock, a.logger())
	default:
		return false
	}
	return true
}

// event translates a message into the machine's event (nil: none, or a
// late message of an earlier incarnation).
func (a *podActor) event(msg any) podstate.Event {
	switch m := msg.(type) {
	case *protocol.PodSpec:
		a.log = nil // the pod may be named anew (see logger)
		return podstate.SpecChanged{Pod: m.Pod, Objects: m.Objects}
	case *protocol.PodRemoved:
		a.log = nil
		return podstate.Removed{Namespace: m.Namespace, Name: m.Name}
	case *protocol.RuntimeState:
		return podstate.RuntimeHealth{Healthy: m.Healthy}
	case *protocol.ContainerExited:
		if a.debug() {
			a.logger().Debug("PLEG event", zap.String("type", string(protocol.ContainerDied)), zap.String("id", short(m.ContainerID)), zap.String("from", "runtime event"))
		}
		return podstate.Died{ContainerID: m.ContainerID, ExitCode: m.ExitCode, At: m.At}
	case *probeChanged:
		if m.Change.ContainerID != "" && m.Change.Kill() {
			a.logger().Info("container unhealthy; killing it", zap.String("container", m.Container), zap.String("probe", string(m.Change.Kind)))
		}
		return podstate.ProbeChanged{Container: m.Container, Change: m.Change}
	case *syncNow:
		return ifInc(m.inc == a.inc, podstate.SyncRequested{})
	case *resyncTimer:
		return ifInc(m.inc == a.inc && m.gen == a.timerGen, podstate.TimerFired{})
	case *syncDone:
		if m.inc != a.inc {
			return nil // an executor of an incarnation before a restart
		}
		a.exec.ended()
		return m.done
	}
	return nil
}

// ifInc is ev when ok (the message is this incarnation's, and current).
func ifInc(ok bool, ev podstate.Event) podstate.Event {
	if !ok {
		return nil
	}
	return ev
}

func (a *podActor) logTransitions(m *protocol.PodTransitions) {
	if !a.debug() { // no fields built per event unless they are logged
		return
	}
	for _, e := range m.Events {
		a.logger().Debug("PLEG event", zap.String("type", string(e.Type)), zap.String("container", e.ContainerName), zap.String("id", short(e.ContainerID)))
	}
}

// apply carries out the machine's effects, in order.
func (a *podActor) apply(ctx actor.Context, effects []podstate.Effect) {
	for _, e := range effects {
		switch e := e.(type) {
		case podstate.List:
			a.exec.list(ctx, a.worker(ctx, nil), a.inc, e.Received)
		case podstate.Run:
			a.exec.run(ctx, a.worker(ctx, &e), e.Plan, a.inc, e.Received)
		case podstate.AbortStarts:
			a.exec.abortStarts()
		case podstate.SetTimer:
			a.setTimer(ctx, e.At)
		case podstate.RequestSync:
			ctx.Send(ctx.Self(), &syncNow{inc: a.inc})
		case podstate.Report:
			a.report(ctx, e)
		case podstate.Emit:
			a.emitter(ctx)(eventType(e.Warning), e.Reason, e.Container, e.Message)
		case podstate.Persist:
			a.cfg.History.Put(string(a.uid), e.Records)
		case podstate.SpawnProbes, podstate.StopProbes, podstate.ProbeTargets:
			a.probeEffect(ctx, e)
		case podstate.Syncing:
			ctx.Send(a.cfg.node, &protocol.PodSyncing{UID: a.uid, Since: e.Since})
		case podstate.SyncTook:
			a.cfg.Metrics.ObserveSync(e.Duration)
		case podstate.SyncFailed:
			a.logger().Warn("pod sync failed; retrying", zap.Errors("errors", e.Errs), zap.Duration("retryIn", e.RetryIn))
		case podstate.Terminate:
			a.terminate(ctx)
		}
	}
}

func eventType(warning bool) messages.EventType {
	if warning {
		return messages.EventWarning
	}
	return messages.EventNormal
}

func (a *podActor) report(ctx actor.Context, r podstate.Report) {
	if r.PodStarted {
		a.cfg.Metrics.ObservePodStart(r.StartedIn)
	}
	ctx.Send(a.cfg.node, &protocol.PodStatusReport{UID: a.uid, Namespace: r.Namespace, Name: r.Name, Status: r.Status})
}

// terminate: the pod was removed and none of its containers is left.
func (a *podActor) terminate(ctx actor.Context) {
	a.logger().Info("pod terminated: all containers removed")
	a.cfg.History.Forget(string(a.uid))
	root, uid := a.cfg.Spec.RootDir, a.uid
	go func() { // emptyDir volumes may be large: off the mailbox
		defer func() { _ = recover() }()
		_ = volumeprep.RemovePodDir(root, uid)
	}()
	ctx.Send(ctx.Parent(), &protocol.Terminated{UID: a.uid})
}

// emitter returns a function that sends pod events to the node; it is
// safe to call from the executor's goroutines.
func (a *podActor) emitter(ctx actor.Context) func(messages.EventType, string, string, string) {
	sys, node, uid, clk := ctx.ActorSystem(), a.cfg.node, a.uid, a.cfg.Clock
	ns, name := a.m.Name()
	return func(typ messages.EventType, reason, container, msg string) {
		sys.Root.Send(node, &messages.Event{Time: clk.Now(), Type: typ, Reason: reason,
			Namespace: ns, Pod: name, UID: uid, Container: container, Message: msg})
	}
}

// setTimer sets the one timer at `at`, replacing the one set.
func (a *podActor) setTimer(ctx actor.Context, at time.Time) {
	a.stopTimer()
	a.timerGen++
	gen, inc, self, sys := a.timerGen, a.inc, ctx.Self(), ctx.ActorSystem()
	a.timer = a.cfg.Clock.AfterFunc(at.Sub(a.cfg.Clock.Now()), func() { sys.Root.Send(self, &resyncTimer{inc: inc, gen: gen}) })
}

func (a *podActor) stopTimer() {
	if a.timer != nil {
		a.timer.Stop()
		a.timer = nil
	}
}

// podReceiveHook, when set (by tests only), sees every message a pod actor
// receives before it does; a panic there is a pod actor panic.
var podReceiveHook atomic.Pointer[func(uid types.UID, msg any)]

// logPanic logs a pod actor's panic with its stack, once, then lets it go
// on to the supervisor (the router's strategy restarts the actor). It is
// deferred by Receive itself: as a receiver middleware it would make
// protoactor wrap every message in an envelope (an allocation per
// message) and give each pod actor its context extras.
func (a *podActor) logPanic(ctx actor.Context) {
	if r := recover(); r != nil {
		a.cfg.Logger.Error("pod actor panicked; its supervisor restarts it", zap.String("podUID", string(podUIDOf(ctx.Self(), ctx.Parent()))),
			zap.Any("panic", r), zap.String("message", fmt.Sprintf("%T", ctx.Message())), zap.ByteString("stack", debug.Stack()))
		panic(r)
	}
}
