package actors

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/internal/protocol"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// nodeActor is the root of actorlet's tree. It merges the sources'
// desired sets, tells the router what to run, replaces a pod only after
// the old instance has fully stopped, removes orphan pods (pods of this
// node found in the runtime that are not desired, only once every source
// has synced), and keeps the pods' last reported statuses for queries.
//
// At most one instance of a pod full name (namespace/name) runs at any
// time (invariant 6): a desired pod is sent to the router only once the
// node has seen a listing of the runtime (an instance from before this
// agent may still run) and no other pod of its name is terminating or
// lingering (see send).
type nodeActor struct {
	cfg     Config
	log     *zap.Logger
	sources []string // names of the configured sources; all must sync before orphans die

	router *actor.PID
	relist *actor.PID

	sets    map[string][]*v1.Pod // last good set per source
	synced  map[string]bool
	desired map[types.UID]*v1.Pod
	// sent: desired pods the router has been told about. A desired pod not
	// sent is waiting for the old pod of the same namespace/name to stop.
	sent      map[types.UID]bool
	rejected  map[types.UID]bool      // refused at admission (NodePorts): never run
	failed    map[types.UID]bool      // pod actor stopped after too many panics
	gone      map[types.UID]time.Time // terminated pods → when; older listings are stale for them
	draining  bool                    // StopAllPods: desire nothing any more
	drainedTo []*actor.PID            // who waits for AllPodsStopped
	// terminating: pods being removed (PodRemoved sent: pods removed
	// from the desired set, and orphan pods found in the runtime) until
	// their Terminated → namespace/name. A pod of the same name waits.
	terminating map[types.UID]string
	// lingering: orphan pods of the last listing not handed to the router
	// yet, because not every source has synced → namespace/name. A pod of
	// the same name waits for them too.
	lingering map[types.UID]string
	// relisted: a listing of the runtime has been seen; no pod is sent
	// before (it could not know an old instance of its name runs).
	relisted bool
	// abandoned: terminating pods whose pod actor failed (too many
	// panics) → when the node last acted on them. The node removes their
	// containers itself, in the pod's order, and they stay terminating
	// until a listing taken after that shows none.
	abandoned map[types.UID]time.Time
	// held: desired pods waiting for an old pod of their name (logged once).
	held     map[types.UID]bool
	statuses map[types.UID]v1.PodStatus

	orphanKills map[types.UID]bool // abandoned pods whose containers the node is removing
	lastRelist  time.Time
	relistErr   error
	eventStream *protocol.EventStreamState // nil: no event stream followed
	started     time.Time

	events     []messages.Event // recent events, oldest first, at most cfg.MaxEvents
	syncing    map[types.UID]time.Time
	sourceErrs map[string]error

	subscribers map[string]*actor.PID
	removedPods map[types.UID]*v1.Pod // removed pods not yet Terminated, for the last publish

	cancelSources context.CancelFunc
	runSources    func(ctx context.Context, self *actor.PID, sys *actor.ActorSystem)
}

type orphanDone struct {
	uid types.UID
	err error
	at  time.Time // when the work ended
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
		n.router = ctx.Spawn(newRouterProps(n.cfg, ctx.Self()))
		n.relist = ctx.Spawn(newRelistProps(n.cfg, n.router, ctx.Self()))
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
		for uid := range n.sent {
			if !n.failed[uid] {
				ctx.Send(n.router, &protocol.PodSpec{Pod: n.desired[uid]})
			}
		}
		for uid, name := range n.terminating {
			if n.abandoned[uid].IsZero() { // the node removes those itself
				ctx.Send(n.router, removal(uid, name))
			}
		}
	case *protocol.DesiredPods:
		if !n.synced[m.Source] {
			n.log.Info("source synced", zap.String("source", m.Source), zap.Int("pods", len(m.Pods)))
		}
		n.sets[m.Source] = m.Pods
		n.synced[m.Source] = true
		delete(n.sourceErrs, m.Source)
		n.reconcile(ctx)
		ctx.Send(n.relist, &protocol.RelistNow{}) // find orphans of the new set at once
	case *protocol.SourceError:
		n.log.Warn("source failed; keeping its last set", zap.String("source", m.Source), zap.Error(m.Err))
		n.sourceErrs[m.Source] = m.Err
	case *messages.Event:
		n.record(*m)
	case *protocol.PodSyncing:
		if m.Since.IsZero() {
			delete(n.syncing, m.UID)
		} else {
			n.syncing[m.UID] = m.Since
		}
	case *messages.GetEvents:
		ctx.Respond(&messages.Events{Items: append([]messages.Event(nil), n.events...)})
	case *messages.StopAllPods:
		n.draining = true
		if ctx.Sender() != nil {
			n.drainedTo = append(n.drainedTo, ctx.Sender())
		}
		n.reconcile(ctx)
		n.checkDrained(ctx)
		ctx.Send(n.relist, &protocol.RelistNow{}) // orphan pods go too
	case *messages.GetHealth:
		ctx.Respond(n.health(n.cfg.Clock.Now()))
	case *protocol.PodStatusReport:
		if n.desired[m.UID] != nil || n.terminating[m.UID] != "" {
			n.statuses[m.UID] = m.Status
			if p := n.desired[m.UID]; p != nil {
				n.publish(ctx, p, m.Status, false)
			}
		}
	case *protocol.PodActorFailed:
		if name := n.terminating[m.UID]; name != "" {
			// It was being removed, and its containers may still run: the
			// node removes them itself (see sweepAbandoned), and a pod of
			// the same name still waits for them.
			n.log.Error("pod actor failed while removing its pod; the node removes its containers", zap.String("pod", name),
				zap.String("podUID", string(m.UID)))
			n.abandoned[m.UID] = n.cfg.Clock.Now()
			ctx.Send(n.relist, &protocol.RelistNow{})
			return
		}
		if p := n.desired[m.UID]; p != nil {
			// Failed until its spec changes: a later transition or a router
			// restart does not respawn it.
			n.failed[m.UID] = true
			st := n.statuses[m.UID]
			st.Phase = v1.PodFailed
			st.Reason = "PodActorFailed"
			st.Message = "the pod's actor panicked too often and was stopped; it runs again when its spec changes"
			n.statuses[m.UID] = st
			n.record(messages.Event{Time: n.cfg.Clock.Now(), Type: messages.EventWarning, Reason: "PodActorFailed",
				Namespace: p.Namespace, Pod: p.Name, UID: p.UID, Message: st.Message})
			n.publish(ctx, p, st, false)
		}
	case *protocol.Terminated:
		delete(n.syncing, m.UID)
		n.terminated(ctx, m.UID)
	case *protocol.RelistSnapshot:
		n.lastRelist, n.relistErr = m.ObservedAt, nil
		n.countRunning(m.Containers)
		first := !n.relisted
		n.relisted = true
		n.sweepOrphans(ctx, m.Containers, m.ObservedAt)
		if first {
			n.sendWaiting(ctx) // what runs is known now
		}
	case *protocol.RelistFailed:
		n.relistErr = m.Err
	case *protocol.EventStreamState:
		n.eventStream = m
	case *orphanDone:
		delete(n.orphanKills, m.uid)
		if _, ok := n.abandoned[m.uid]; ok {
			n.abandoned[m.uid] = m.at // only a listing taken after this shows what is left
		}
		if m.err != nil {
			n.log.Warn("removing the containers of an abandoned pod failed; will retry on next relist",
				zap.String("pod", n.terminating[m.uid]), zap.String("podUID", string(m.uid)), zap.Error(m.err))
		}
		ctx.Send(n.relist, &protocol.RelistNow{})
	case *messages.GetPodStatuses:
		ctx.Respond(n.podStatuses())
	}
}

// reconcile merges the sources' sets and tells the router the difference.
func (n *nodeActor) reconcile(ctx actor.Context) {
	names := make([]string, 0, len(n.sets))
	for s := range n.sets {
		names = append(names, s)
	}
	sort.Strings(names)
	want := map[types.UID]*v1.Pod{}
	owner := map[string]types.UID{} // namespace/name → UID, first source wins
	if n.draining {
		names = nil // stopping every pod: no source counts any more
	}
	for _, s := range names {
		for _, p := range n.sets[s] {
			if prev, ok := owner[nsName(p)]; ok && prev != p.UID {
				n.log.Warn("pod defined by two sources; keeping the first", zap.String("pod", nsName(p)), zap.String("ignoredSource", s))
				continue
			}
			owner[nsName(p)] = p.UID
			want[p.UID] = p
		}
	}
	for uid := range want {
		delete(n.lingering, uid) // desired again: not an orphan
	}
	for uid, old := range n.desired {
		if want[uid] != nil {
			continue
		}
		delete(n.desired, uid)
		delete(n.failed, uid)
		delete(n.held, uid)
		if n.rejected[uid] {
			delete(n.rejected, uid)
			delete(n.statuses, uid)
		}
		if n.sent[uid] {
			delete(n.sent, uid)
			n.terminating[uid] = nsName(old)
			n.removedPods[uid] = old
			n.log.Info("pod removed", zap.String("pod", nsName(old)), zap.String("podUID", string(uid)))
			ctx.Send(n.router, removal(uid, nsName(old)))
		}
	}
	for _, p := range admissionOrder(want) {
		uid := p.UID
		old := n.desired[uid]
		n.desired[uid] = p
		if old != nil && n.sent[uid] && equality.Semantic.DeepEqual(old.Spec, p.Spec) {
			continue
		}
		delete(n.failed, uid) // a changed spec gets a new pod actor
		n.send(ctx, p)
	}
}

// admissionOrder orders pods oldest first (then by name), so that of two
// pods that clash on a host port the same one always wins.
func admissionOrder(pods map[types.UID]*v1.Pod) []*v1.Pod {
	order := make([]*v1.Pod, 0, len(pods))
	for _, p := range pods {
		order = append(order, p)
	}
	sort.Slice(order, func(i, j int) bool {
		ti, tj := order[i].CreationTimestamp, order[j].CreationTimestamp
		if !ti.Equal(&tj) {
			return ti.Before(&tj)
		}
		return nsName(order[i]) < nsName(order[j])
	})
	return order
}

// removal is the PodRemoved of pod uid, named "namespace/name".
func removal(uid types.UID, name string) *protocol.PodRemoved {
	ns, n, _ := strings.Cut(name, "/")
	return &protocol.PodRemoved{UID: uid, Namespace: ns, Name: n}
}

// sendWaiting sends the desired pods not sent yet that may run now.
func (n *nodeActor) sendWaiting(ctx actor.Context) {
	for _, p := range admissionOrder(n.desired) {
		if !n.sent[p.UID] {
			n.send(ctx, p)
		}
	}
}

// send tells the router to run p, unless p must wait: before the node
// has seen a listing of the runtime, or while an older pod of the same
// namespace/name (or p's own UID, removed and desired again) is
// terminating or lingering. It is sent again when that changes
// (sendWaiting).
func (n *nodeActor) send(ctx actor.Context, p *v1.Pod) {
	if !n.relisted {
		return
	}
	if uid, name, ok := n.blocker(p); ok {
		if !n.held[p.UID] {
			n.held[p.UID] = true
			n.log.Info("pod waits for the old pod of its name to stop", zap.String("pod", nsName(p)),
				zap.String("podUID", string(p.UID)), zap.String("oldPod", name), zap.String("oldUID", string(uid)))
		}
		return
	}
	delete(n.held, p.UID)
	if n.rejected[p.UID] {
		return
	}
	if !n.sent[p.UID] {
		var admitted []*v1.Pod
		if len(hostPorts(p)) > 0 { // most pods ask for none: no walk over every pod
			for uid := range n.sent {
				if q := n.desired[uid]; q != nil {
					admitted = append(admitted, q)
				}
			}
		}
		if msg, clash := portConflict(p, admitted); clash {
			n.rejected[p.UID] = true
			n.statuses[p.UID] = rejectedStatus(msg)
			n.log.Warn("pod rejected at admission", zap.String("pod", nsName(p)), zap.String("reason", "NodePorts"), zap.String("message", msg))
			n.record(messages.Event{Time: n.cfg.Clock.Now(), Type: messages.EventWarning, Reason: "NodePorts",
				Namespace: p.Namespace, Pod: p.Name, UID: p.UID, Message: msg})
			n.publish(ctx, p, n.statuses[p.UID], false)
			return
		}
		n.log.Info("pod added", zap.String("pod", nsName(p)), zap.String("podUID", string(p.UID)))
	}
	n.sent[p.UID] = true
	ctx.Send(n.router, &protocol.PodSpec{Pod: p})
}

// blocker is a pod p must wait for: one of its namespace/name (or its own
// UID) that is terminating, or an orphan of its name that lingers.
func (n *nodeActor) blocker(p *v1.Pod) (types.UID, string, bool) {
	name := nsName(p)
	for uid, t := range n.terminating {
		if t == name || uid == p.UID {
			return uid, t, true
		}
	}
	for uid, t := range n.lingering {
		if t == name && uid != p.UID {
			return uid, t, true
		}
	}
	return "", "", false
}

func (n *nodeActor) terminated(ctx actor.Context, uid types.UID) {
	if _, ok := n.terminating[uid]; !ok {
		return
	}
	delete(n.terminating, uid)
	delete(n.abandoned, uid)
	n.gone[uid] = n.cfg.Clock.Now() // listings older than this still show its containers
	n.publish(ctx, n.removedPods[uid], n.statuses[uid], true)
	delete(n.removedPods, uid)
	delete(n.statuses, uid)
	n.checkDrained(ctx)
	n.sendWaiting(ctx)
}

func (n *nodeActor) allSynced() bool {
	for _, s := range n.sources {
		if !n.synced[s] {
			return false
		}
	}
	return true
}

func (n *nodeActor) podStatuses() *messages.PodStatuses {
	out := &messages.PodStatuses{}
	for uid, p := range n.desired {
		cp := p.DeepCopy()
		cp.Spec.NodeName = n.cfg.NodeName
		cp.Status = n.statuses[uid]
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

// checkDrained answers StopAllPods once no pod is left running or
// stopping, orphan pods included.
func (n *nodeActor) checkDrained(ctx actor.Context) {
	if !n.draining || len(n.terminating) > 0 || len(n.lingering) > 0 || !n.relisted || len(n.drainedTo) == 0 {
		return
	}
	for _, pid := range n.drainedTo {
		ctx.Send(pid, &messages.AllPodsStopped{})
	}
	n.drainedTo = nil
}
