package actors

import (
	"fmt"
	"sort"

	"github.com/asynkron/protoactor-go/actor"
	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/manifest"
	"github.com/actorlet/actorlet/internal/nodestate"
	"github.com/actorlet/actorlet/internal/protocol"
	"github.com/actorlet/actorlet/messages"
)

// HostSource is the source name of pods fed by messages (ApplyPod,
// SetHostPods, DeletePod) from a service that embeds actorlet.
const HostSource = "host"

// prepareHostPod defaults and validates a host-fed pod as a manifest would
// be, and gives it a UID when it has none.
func (n *nodeActor) prepareHostPod(in *v1.Pod) (*v1.Pod, messages.ApplyPodResult) {
	if in == nil {
		return nil, messages.ApplyPodResult{Err: fmt.Errorf("host pod: nil")}
	}
	p := in.DeepCopy()
	manifest.SetDefaults(p)
	warnings, err := manifest.ValidateWith(p, n.cfg.validation())
	if err != nil {
		return nil, messages.ApplyPodResult{Warnings: warnings, Err: fmt.Errorf("host pod %s/%s: %w", p.Namespace, p.Name, err)}
	}
	if p.UID == "" {
		p.UID = manifest.StaticPodUID(n.cfg.NodeName, "host:"+p.Namespace+"/"+p.Name, p)
	}
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[manifest.AnnotationConfigSource] = HostSource
	return p, messages.ApplyPodResult{UID: p.UID, Warnings: warnings}
}

func (n *nodeActor) hostMessage(ctx actor.Context, msg any) bool {
	switch m := msg.(type) {
	case *messages.ApplyPod:
		p, res := n.prepareHostPod(m.Pod)
		if p != nil {
			set := n.pods.Set(HostSource)[:0:0]
			for _, old := range n.pods.Set(HostSource) {
				if nsName(old) != nsName(p) {
					set = append(set, old)
				}
			}
			n.step(ctx, nodestate.SourceSet{Source: HostSource, Pods: append(set, p)})
		}
		ctx.Respond(&res)
	case *messages.SetHostPods:
		out := &messages.SetHostPodsResult{}
		byName := map[string]*v1.Pod{}
		for _, in := range m.Pods {
			p, res := n.prepareHostPod(in)
			if p != nil {
				if _, dup := byName[nsName(p)]; dup {
					res = messages.ApplyPodResult{Err: fmt.Errorf("host pod %s: defined twice; the first wins", nsName(p))}
				} else {
					byName[nsName(p)] = p
				}
			}
			out.Results = append(out.Results, res)
		}
		set := make([]*v1.Pod, 0, len(byName))
		for _, p := range byName {
			set = append(set, p)
		}
		sort.Slice(set, func(i, j int) bool { return nsName(set[i]) < nsName(set[j]) })
		n.step(ctx, nodestate.SourceSet{Source: HostSource, Pods: set, Synced: true})
		ctx.Send(n.relist, &protocol.RelistNow{})
		ctx.Respond(out)
	case *messages.DeletePod:
		set := n.pods.Set(HostSource)[:0:0]
		found := false
		for _, old := range n.pods.Set(HostSource) {
			if old.Namespace == m.Namespace && old.Name == m.Name {
				found = true
				continue
			}
			set = append(set, old)
		}
		if !found {
			ctx.Respond(&messages.DeletePodResult{Err: fmt.Errorf("host pod %s/%s: %w", m.Namespace, m.Name, messages.ErrPodNotFound)})
			return true
		}
		n.step(ctx, nodestate.SourceSet{Source: HostSource, Pods: set})
		ctx.Respond(&messages.DeletePodResult{})
	case *messages.Subscribe:
		if m.PID != nil {
			n.subscribers[m.PID.String()] = m.PID
			ctx.Watch(m.PID)
		}
	case *messages.Unsubscribe:
		if m.PID != nil {
			delete(n.subscribers, m.PID.String())
			ctx.Unwatch(m.PID)
		}
	case *actor.Terminated:
		delete(n.subscribers, m.Who.String())
	default:
		return false
	}
	return true
}

// publish tells every subscriber about a pod's status.
func (n *nodeActor) publish(ctx actor.Context, p *v1.Pod, st v1.PodStatus, removed bool) {
	if len(n.subscribers) == 0 || p == nil {
		return
	}
	cp := p.DeepCopy()
	cp.Status = *st.DeepCopy()
	setCreation(cp)
	for _, pid := range n.subscribers {
		ctx.Send(pid, &messages.PodStatusChanged{Pod: cp, Removed: removed})
	}
}

// setCreation gives a pod whose source set no creationTimestamp (a static
// pod's manifest has none) its start on this node, which its pod actor
// recovers from the runtime after an agent restart: its AGE then counts
// from when it started, not from the restart.
func setCreation(p *v1.Pod) {
	if p.CreationTimestamp.IsZero() && p.Status.StartTime != nil {
		p.CreationTimestamp = *p.Status.StartTime
	}
}
