package actors

import (
	"fmt"
	"sort"
	"time"

	"github.com/actorlet/actorlet/messages"
)

// DefaultRelistThreshold: the PLEG is unhealthy when its last successful
// relist is older than this (3 min, as the kubelet's PLEG health check).
// A pod whose sync has run longer than its share of the same threshold plus
// the grace of its kills is reported as that pod.
const DefaultRelistThreshold = 3 * time.Minute

// DefaultMaxEvents bounds the node's list of recent events.
const DefaultMaxEvents = 1000

// record appends e to the bounded event list.
func (n *nodeActor) record(e messages.Event) {
	max := n.cfg.MaxEvents
	if len(n.events) >= max {
		copy(n.events, n.events[len(n.events)-max+1:])
		n.events = n.events[:max-1]
	}
	n.events = append(n.events, e)
}

// health computes the node's checks at now: runtime (the last list
// worked), pleg (a successful relist within the threshold), the event
// stream when one is followed (healthy: open and not found silent, see
// relistActor), each source (synced and not failing) and each pod stuck in
// one sync past the threshold.
func (n *nodeActor) health(now time.Time) *messages.NodeHealth {
	h := &messages.NodeHealth{}
	rt := messages.HealthCheck{Name: "runtime", OK: n.relistErr == nil && !n.lastRelist.IsZero(), Message: "runtime answers"}
	if n.relistErr != nil {
		rt.Message = n.relistErr.Error()
	} else if n.lastRelist.IsZero() {
		rt.Message = "no relist has completed yet"
	}
	h.Checks = append(h.Checks, rt)

	seen := n.lastRelist
	if seen.IsZero() {
		seen = n.started
	}
	age := now.Sub(seen)
	pl := messages.HealthCheck{Name: "pleg", OK: age <= n.cfg.RelistThreshold,
		Message: fmt.Sprintf("pleg was last seen active %s ago; threshold is %s", age.Round(time.Second), n.cfg.RelistThreshold)}
	h.Checks = append(h.Checks, pl)

	if es := n.eventStream; es != nil {
		h.Checks = append(h.Checks, messages.HealthCheck{Name: "event stream", OK: es.OK,
			Message: fmt.Sprintf("%s since %s: %s", es.State, es.Since.Format(time.RFC3339), es.Message)})
	}
	if ep := n.exitPath; ep != nil {
		// An accelerator: which path is in use never fails the node.
		h.Checks = append(h.Checks, messages.HealthCheck{Name: "container exits", OK: true,
			Message: fmt.Sprintf("%s since %s: %s", ep.Path, ep.Since.Format(time.RFC3339), ep.Message)})
	}

	for _, s := range n.sources {
		c := messages.HealthCheck{Name: "source " + s, OK: n.pods.Synced(s) && n.sourceErrs[s] == nil, Message: "synced"}
		switch {
		case n.sourceErrs[s] != nil:
			c.Message = "failing, keeping its last set: " + n.sourceErrs[s].Error()
		case !n.pods.Synced(s):
			c.Message = "not synced yet"
		}
		h.Checks = append(h.Checks, c)
	}

	var stuck []messages.HealthCheck
	for uid, since := range n.syncing {
		if d := now.Sub(since); d > n.cfg.RelistThreshold {
			name := n.pods.PodName(uid)
			if name == "" {
				name = string(uid)
			}
			stuck = append(stuck, messages.HealthCheck{Name: "pod " + name, Pod: name,
				Message: fmt.Sprintf("one sync has run for %s; threshold is %s", d.Round(time.Second), n.cfg.RelistThreshold)})
		}
	}
	sort.Slice(stuck, func(i, j int) bool { return stuck[i].Name < stuck[j].Name })
	h.Checks = append(h.Checks, stuck...)
	return h
}
