package actors

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// nodeActor is the root of actorlet's tree. It merges the sources'
// desired sets, tells the router what to run, replaces a pod only after
// the old instance has fully stopped, kills orphans (managed containers of
// this node whose pod is not desired, only once every source has synced),
// and keeps the pods' last reported statuses for queries.
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
	sent        map[types.UID]bool
	rejected    map[types.UID]bool      // refused at admission (NodePorts): never run
	failed      map[types.UID]bool      // pod actor stopped after too many panics
	gone        map[types.UID]time.Time // terminated pods → when; older listings are stale for them
	draining    bool                    // StopAllPods: desire nothing any more
	drainedTo   []*actor.PID            // who waits for AllPodsStopped
	terminating map[types.UID]string    // removed pods not yet Terminated → namespace/name
	statuses    map[types.UID]v1.PodStatus

	orphanKills map[string]bool // container IDs being killed as orphans
	lastRelist  time.Time
	relistErr   error
	eventStream *messages.EventStreamState // nil: no event stream followed
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
	id  string
	err error
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
	case *messages.RouterStarted:
		// After a router restart its pod actors are gone: tell it again.
		for uid := range n.sent {
			if !n.failed[uid] {
				ctx.Send(n.router, &messages.PodSpec{Pod: n.desired[uid]})
			}
		}
		for uid := range n.terminating {
			ctx.Send(n.router, &messages.PodRemoved{UID: uid})
		}
	case *messages.DesiredPods:
		if !n.synced[m.Source] {
			n.log.Info("source synced", zap.String("source", m.Source), zap.Int("pods", len(m.Pods)))
		}
		n.sets[m.Source] = m.Pods
		n.synced[m.Source] = true
		delete(n.sourceErrs, m.Source)
		n.reconcile(ctx)
		ctx.Send(n.relist, &messages.RelistNow{}) // find orphans of the new set at once
	case *messages.SourceError:
		n.log.Warn("source failed; keeping its last set", zap.String("source", m.Source), zap.Error(m.Err))
		n.sourceErrs[m.Source] = m.Err
	case *messages.Event:
		n.record(*m)
	case *messages.PodSyncing:
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
	case *messages.GetHealth:
		ctx.Respond(n.health(n.cfg.Clock.Now()))
	case *messages.PodStatusReport:
		if n.desired[m.UID] != nil || n.terminating[m.UID] != "" {
			n.statuses[m.UID] = m.Status
			if p := n.desired[m.UID]; p != nil {
				n.publish(ctx, p, m.Status, false)
			}
		}
	case *messages.PodActorFailed:
		if n.terminating[m.UID] != "" {
			// It was being removed: its containers are now orphans, which
			// the next relist's sweep stops and removes.
			n.terminated(ctx, m.UID)
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
	case *messages.Terminated:
		delete(n.syncing, m.UID)
		n.terminated(ctx, m.UID)
	case *messages.RelistSnapshot:
		n.lastRelist, n.relistErr = m.ObservedAt, nil
		n.countRunning(m.Containers)
		n.sweepOrphans(ctx, m.Containers, m.ObservedAt)
	case *messages.RelistFailed:
		n.relistErr = m.Err
	case *messages.EventStreamState:
		n.eventStream = m
	case *orphanDone:
		delete(n.orphanKills, m.id)
		if m.err != nil {
			n.log.Warn("orphan cleanup failed; will retry on next relist", zap.String("id", short(m.id)), zap.Error(m.err))
		}
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
	for uid, old := range n.desired {
		if want[uid] != nil {
			continue
		}
		delete(n.desired, uid)
		delete(n.failed, uid)
		if n.rejected[uid] {
			delete(n.rejected, uid)
			delete(n.statuses, uid)
		}
		if n.sent[uid] {
			delete(n.sent, uid)
			n.terminating[uid] = nsName(old)
			n.removedPods[uid] = old
			n.log.Info("pod removed", zap.String("pod", nsName(old)), zap.String("podUID", string(uid)))
			ctx.Send(n.router, &messages.PodRemoved{UID: uid})
		}
	}
	// Admit in a stable order, oldest first (then by name), so of two pods
	// that clash on a host port the same one always wins.
	order := make([]*v1.Pod, 0, len(want))
	for _, p := range want {
		order = append(order, p)
	}
	sort.Slice(order, func(i, j int) bool {
		ti, tj := order[i].CreationTimestamp, order[j].CreationTimestamp
		if !ti.Equal(&tj) {
			return ti.Before(&tj)
		}
		return nsName(order[i]) < nsName(order[j])
	})
	for _, p := range order {
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

// send tells the router to run p, unless an older pod of the same
// namespace/name is still stopping: then p waits (see terminated).
func (n *nodeActor) send(ctx actor.Context, p *v1.Pod) {
	for uid, name := range n.terminating {
		if name == nsName(p) && uid != p.UID {
			n.log.Info("pod replacement waits for the old pod to stop", zap.String("pod", nsName(p)), zap.String("oldUID", string(uid)))
			return
		}
	}
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
	ctx.Send(n.router, &messages.PodSpec{Pod: p})
}

func (n *nodeActor) terminated(ctx actor.Context, uid types.UID) {
	name, ok := n.terminating[uid]
	if !ok {
		return
	}
	delete(n.terminating, uid)
	n.gone[uid] = n.cfg.Clock.Now() // listings older than this still show its containers
	n.publish(ctx, n.removedPods[uid], n.statuses[uid], true)
	delete(n.removedPods, uid)
	delete(n.statuses, uid)
	n.checkDrained(ctx)
	for _, p := range n.desired {
		if nsName(p) == name && !n.sent[p.UID] {
			n.send(ctx, p)
		}
	}
}

func (n *nodeActor) allSynced() bool {
	for _, s := range n.sources {
		if !n.synced[s] {
			return false
		}
	}
	return true
}

// sweepOrphans stops and removes managed containers of this node whose pod
// is neither desired nor stopping under its own actor. It does nothing
// before every source has synced once (a source not yet read is not
// "empty"). Containers without actorlet's labels are never touched.
func (n *nodeActor) sweepOrphans(ctx actor.Context, cs []runtimeadapter.Container, observedAt time.Time) {
	if !n.allSynced() {
		return
	}
	for uid, at := range n.gone {
		if observedAt.After(at) {
			delete(n.gone, uid) // this listing is newer than the pod's end: trust it
		}
	}
	self, sys := ctx.Self(), ctx.ActorSystem()
	for _, c := range cs {
		meta, err := runtimeadapter.ParseMeta(c.Labels)
		if err != nil || meta.Node != n.cfg.NodeName {
			continue
		}
		uid := types.UID(meta.PodUID)
		if n.desired[uid] != nil || n.terminating[uid] != "" || n.orphanKills[c.ID] || !n.gone[uid].IsZero() {
			continue
		}
		n.orphanKills[c.ID] = true
		n.log.Info("killing orphan container", zap.String("pod", meta.PodNamespace+"/"+meta.PodName),
			zap.String("container", meta.ContainerName), zap.String("id", short(c.ID)), zap.Duration("grace", meta.GracePeriod))
		rt, timeout, c := n.cfg.Runtime, n.cfg.RuntimeTimeout, c
		go func() {
			done := &orphanDone{id: c.ID}
			defer func() {
				if p := recover(); p != nil {
					done.err = fmt.Errorf("orphan %s: panicked: %v", c.Name, p)
				}
				sys.Root.Send(self, done)
			}()
			cctx, cancel := context.WithTimeout(context.Background(), meta.GracePeriod+timeout)
			defer cancel()
			if c.State != runtimeadapter.StateExited {
				if err := rt.Stop(cctx, c.ID, meta.GracePeriod); err != nil && !errors.Is(err, runtimeadapter.ErrNotFound) {
					done.err = fmt.Errorf("stop orphan container %s: %w", c.Name, err)
					return
				}
			}
			if err := rt.Remove(cctx, c.ID); err != nil && !errors.Is(err, runtimeadapter.ErrNotFound) {
				done.err = fmt.Errorf("remove orphan container %s: %w", c.Name, err)
			}
		}()
	}
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
// stopping.
func (n *nodeActor) checkDrained(ctx actor.Context) {
	if !n.draining || len(n.terminating) > 0 || len(n.drainedTo) == 0 {
		return
	}
	for _, pid := range n.drainedTo {
		ctx.Send(pid, &messages.AllPodsStopped{})
	}
	n.drainedTo = nil
}
