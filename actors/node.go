package actors

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/internal/nodestate"
	"github.com/actorlet/actorlet/internal/objstore"
	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/internal/protocol"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// nodeActor is the root of actorlet's tree. Its view of the pods (the
// sources' sets merged, one record per pod UID with its lifecycle,
// admission, orphans, the wait of a replacement for the old instance of
// its name: invariant 6) is a pure nodestate.State; the actor translates
// its messages into the state's events and carries out the effects it
// returns: specs and removals to the router, the removal of an abandoned
// pod's containers, statuses to subscribers, events and logs. Besides, it
// keeps what concerns the node rather than a pod: the sources' errors,
// the relist's health, recent events and subscribers.
type nodeActor struct {
	cfg     Config
	log     *zap.Logger
	sources []string // names of the configured sources; all must sync before orphans die

	router *actor.PID
	relist *actor.PID

	pods *nodestate.State
	// objects: the sources' ConfigMaps and Secrets, merged; each pod's
	// spec goes to its actor with those of its namespace it refers to.
	objects   *objstore.Store
	drainedTo []*actor.PID // who waits for AllPodsStopped

	lastRelist  time.Time
	relistErr   error
	eventStream *protocol.EventStreamState // nil: no event stream followed
	exitPath    *protocol.ExitPathState    // nil: not reported yet
	started     time.Time

	events     []messages.Event // recent events, oldest first, at most cfg.MaxEvents
	syncing    map[types.UID]time.Time
	sourceErrs map[string]error

	subscribers map[string]*actor.PID

	cancelSources context.CancelFunc
	runSources    func(ctx context.Context, self *actor.PID, sys *actor.ActorSystem)
}

func nsName(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

// Receive handles the node's messages.
func (n *nodeActor) Receive(ctx actor.Context) {
	if n.hostMessage(ctx, ctx.Message()) {
		return
	}
	switch m := ctx.Message().(type) {
	case *actor.Started:
		n.started = n.cfg.Clock.Now()
		dir := &podDirectory{}
		n.router = ctx.Spawn(newRouterProps(n.cfg, ctx.Self(), dir))
		n.relist = ctx.Spawn(newRelistProps(n.cfg, n.router, ctx.Self(), dir))
		if n.runSources != nil {
			c, cancel := context.WithCancel(context.Background())
			n.cancelSources = cancel
			n.runSources(c, ctx.Self(), ctx.ActorSystem())
		}
	case *actor.Stopping:
		if n.cancelSources != nil {
			n.cancelSources()
		}
	case *actor.Stopped:
		if n.cfg.Images != nil {
			n.cfg.Images.Close() // cancels pulls in flight
		}
	case *protocol.RouterStarted:
		// After a router restart its pod actors are gone: tell it again.
		n.step(ctx, nodestate.RouterRestarted{})
	case *protocol.DesiredPods:
		if !n.pods.Synced(m.Source) {
			n.log.Info("source synced", zap.String("source", m.Source), zap.Int("pods", len(m.Pods)))
		}
		delete(n.sourceErrs, m.Source)
		before := n.sentObjects()
		dups, imm := n.objects.Put(m.Source, objstore.Set{ConfigMaps: m.ConfigMaps, Secrets: m.Secrets})
		for _, d := range dups {
			n.log.Warn("object defined by two sources; keeping the first", zap.String("kind", d.Kind), zap.String("name", d.Name), zap.String("ignoredSource", d.IgnoredSource))
		}
		for _, i := range imm {
			n.log.Warn("object is immutable; its change is refused and the node keeps its data until it is deleted",
				zap.String("kind", i.Kind), zap.String("name", i.Name), zap.String("source", m.Source))
		}
		n.step(ctx, nodestate.SourceSet{Source: m.Source, Pods: m.Pods, Synced: true})
		n.resendObjects(ctx, before)
		ctx.Send(n.relist, &protocol.RelistNow{}) // find orphans of the new set at once
	case *protocol.SourceError:
		n.log.Warn("source failed; keeping its last set", zap.String("source", m.Source), zap.Error(m.Err))
		n.sourceErrs[m.Source] = m.Err
	case *messages.Event:
		n.record(*m)
	case *protocol.PodSyncing:
		if m.Since.IsZero() {
			n.doneSyncing(m.UID)
		} else {
			n.syncing[m.UID] = m.Since
		}
	case *messages.GetEvents:
		ctx.Respond(&messages.Events{Items: append([]messages.Event(nil), n.events...)})
	case *messages.StopAllPods:
		if ctx.Sender() != nil {
			n.drainedTo = append(n.drainedTo, ctx.Sender())
		}
		n.step(ctx, nodestate.Drain{Reply: ctx.Sender() != nil})
		ctx.Send(n.relist, &protocol.RelistNow{}) // orphan pods go too
	case *messages.GetHealth:
		ctx.Respond(n.health(n.cfg.Clock.Now()))
	case *protocol.PodStatusReport:
		n.step(ctx, nodestate.StatusReport{UID: m.UID, Status: m.Status})
	case *protocol.PodActorFailed:
		n.step(ctx, nodestate.ActorFailed{UID: m.UID})
	case *protocol.Terminated:
		n.doneSyncing(m.UID)
		n.step(ctx, nodestate.Terminated{UID: m.UID})
	case *protocol.RelistSnapshot:
		n.lastRelist, n.relistErr = m.ObservedAt, nil
		n.countRunning(m.Containers)
		n.step(ctx, nodestate.Listing{Containers: m.Containers, ObservedAt: m.ObservedAt})
	case *protocol.RelistFailed:
		n.relistErr = m.Err
	case *protocol.EventStreamState:
		n.eventStream = m
	case *protocol.ExitPathState:
		n.exitPath = m
	case *orphanDone:
		if m.err != nil {
			n.log.Warn("removing the containers of an abandoned pod failed; will retry on next relist",
				zap.String("pod", n.pods.PodName(m.uid)), zap.String("podUID", string(m.uid)), zap.Error(m.err))
		}
		n.step(ctx, nodestate.RemovalDone{UID: m.uid, At: m.at})
		ctx.Send(n.relist, &protocol.RelistNow{})
	case *messages.GetPodStatuses:
		ctx.Respond(n.podStatuses())
	}
}

// step applies one event to the node's state at the clock's now and
// carries out the effects, in order.
func (n *nodeActor) step(ctx actor.Context, e nodestate.Event) {
	for _, eff := range n.pods.Step(n.cfg.Clock.Now(), e) {
		n.apply(ctx, eff)
	}
}

// apply carries out one effect of the node's state.
func (n *nodeActor) apply(ctx actor.Context, eff nodestate.Effect) {
	switch e := eff.(type) {
	case nodestate.SendSpec:
		if e.New {
			n.log.Info("pod added", zap.String("pod", nsName(e.Pod)), zap.String("podUID", string(e.Pod.UID)))
		}
		ctx.Send(n.router, &protocol.PodSpec{Pod: e.Pod, Objects: n.objects.ObjectsFor(e.Pod)})
	case nodestate.SendRemoval:
		switch {
		case e.Again:
		case e.Orphan:
			n.log.Info("removing orphan pod", zap.String("pod", e.Name), zap.String("podUID", string(e.UID)))
		default:
			n.log.Info("pod removed", zap.String("pod", e.Name), zap.String("podUID", string(e.UID)))
		}
		ns, name, _ := strings.Cut(e.Name, "/")
		ctx.Send(n.router, &protocol.PodRemoved{UID: e.UID, Namespace: ns, Name: name})
	case nodestate.RemoveContainers:
		n.removeAbandoned(ctx, e)
	case nodestate.Publish:
		n.publish(ctx, e.Pod, e.Status, e.Removed)
	case nodestate.Reject:
		p := e.Pod
		n.log.Warn("pod rejected at admission", zap.String("pod", nsName(p)), zap.String("reason", e.Reason), zap.String("message", e.Message))
		n.record(messages.Event{Time: n.cfg.Clock.Now(), Type: messages.EventWarning, Reason: e.Reason,
			Namespace: p.Namespace, Pod: p.Name, UID: p.UID, Message: e.Message})
	case nodestate.PodFailed:
		p := e.Pod
		n.record(messages.Event{Time: n.cfg.Clock.Now(), Type: messages.EventWarning, Reason: "PodActorFailed",
			Namespace: p.Namespace, Pod: p.Name, UID: p.UID, Message: e.Message})
	case nodestate.Held:
		n.log.Info("pod waits for the old pod of its name to stop", zap.String("pod", nsName(e.Pod)),
			zap.String("podUID", string(e.Pod.UID)), zap.String("oldPod", e.OldName), zap.String("oldUID", string(e.OldUID)))
	case nodestate.Duplicate:
		n.log.Warn("pod defined by two sources; keeping the first", zap.String("pod", e.Name), zap.String("ignoredSource", e.IgnoredSource))
	case nodestate.Lingers:
		n.log.Info("orphan pod found; it is removed once every source has synced, and a pod of its name waits",
			zap.String("pod", e.Name), zap.String("podUID", string(e.UID)))
	case nodestate.Abandon:
		// Its containers may still run: the node removes them itself
		// (RemoveContainers from the next listing on).
		n.log.Error("pod actor failed while removing its pod; the node removes its containers", zap.String("pod", e.Name),
			zap.String("podUID", string(e.UID)))
		ctx.Send(n.relist, &protocol.RelistNow{})
	case nodestate.AbandonedGone:
		n.log.Info("abandoned pod's containers are gone", zap.String("pod", e.Name), zap.String("podUID", string(e.UID)))
	case nodestate.Drained:
		for _, pid := range n.drainedTo {
			ctx.Send(pid, &messages.AllPodsStopped{})
		}
		n.drainedTo = nil
	default:
		n.log.DPanic("unknown effect of the node's state", zap.String("effect", eff.String()))
	}
}

// sentObjects is, for each pod sent to its actor that refers to
// ConfigMaps or Secrets, the objects it has.
func (n *nodeActor) sentObjects() map[types.UID]podsync.Objects {
	out := map[types.UID]podsync.Objects{}
	for _, r := range n.pods.Records() {
		if p := r.Desired(); p != nil && r.Phase == nodestate.Running {
			if cms, ss := podsync.References(p); len(cms)+len(ss) > 0 {
				out[r.UID] = n.objects.ObjectsFor(p)
			}
		}
	}
	return out
}

// resendObjects sends its spec again, with its objects, to each pod of
// before (see sentObjects) whose objects changed.
func (n *nodeActor) resendObjects(ctx actor.Context, before map[types.UID]podsync.Objects) {
	for _, r := range n.pods.Records() {
		old, ok := before[r.UID]
		p := r.Desired()
		if !ok || p == nil || r.Phase != nodestate.Running {
			continue
		}
		if objs := n.objects.ObjectsFor(p); !objs.Equal(old) {
			n.log.Info("pod's ConfigMaps or Secrets changed", zap.String("pod", nsName(p)), zap.String("podUID", string(p.UID)), zap.Stringer("objects", objs))
			ctx.Send(n.router, &protocol.PodSpec{Pod: p, Objects: objs})
		}
	}
}

// podStatuses is every desired pod with its last status (Pending when
// none was reported yet).
func (n *nodeActor) podStatuses() *messages.PodStatuses {
	out := &messages.PodStatuses{}
	for _, r := range n.pods.Records() {
		p := r.Desired()
		if p == nil {
			continue
		}
		cp := p.DeepCopy()
		cp.Spec.NodeName = n.cfg.NodeName
		if r.Status != nil {
			// A copy: the status is the pod actor's (its slices and
			// StartTime too), and the answer leaves the node.
			r.Status.DeepCopyInto(&cp.Status)
		}
		if cp.Status.Phase == "" {
			cp.Status.Phase = v1.PodPending
		}
		setCreation(cp)
		out.Pods = append(out.Pods, cp)
	}
	sort.Slice(out.Pods, func(i, j int) bool { return nsName(out.Pods[i]) < nsName(out.Pods[j]) })
	return out
}

// countRunning sets the running pods and containers gauges from a relist:
// a pod counts when one of its app containers runs.
func (n *nodeActor) countRunning(cs []runtimeadapter.Container) {
	if n.cfg.Metrics == nil {
		return
	}
	pods := map[string]bool{}
	containers := 0
	for _, c := range cs {
		if c.State != runtimeadapter.StateRunning || c.Labels[runtimeadapter.LabelContainerType] != string(runtimeadapter.TypeApp) {
			continue
		}
		containers++
		pods[c.Labels[runtimeadapter.LabelPodUID]] = true
	}
	n.cfg.Metrics.SetRunning(len(pods), containers)
}

// doneSyncing forgets uid's sync. A map keeps its buckets when emptied:
// the one 10,000 pods starting at once filled (~40 B per pod) is made
// anew once no pod syncs.
func (n *nodeActor) doneSyncing(uid types.UID) {
	if _, ok := n.syncing[uid]; !ok {
		return
	}
	delete(n.syncing, uid)
	if len(n.syncing) == 0 {
		n.syncing = map[types.UID]time.Time{}
	}
}
