package podstate

import (
	"slices"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// view is the pod's newest listing and what orders it against others.
type view struct {
	// containers was taken between from and until (the list call's start
	// and return), at the runtime's state version (0: none). See observe.
	// Kept without label maps (see held).
	containers []held
	from       time.Time
	until      time.Time
	version    uint64
	// listed: containers may be planned on. False until the first list,
	// and again after a failed list or a runtime outage: the next sync
	// lists first (what it holds may predate the outage).
	listed bool
	// relist: a PLEG listing that could not be ordered against the held
	// one disagreed with it; list again to learn which is right. (Beside
	// listed: one word for both.)
	relist bool
	// received counts the PLEG listings (and die events) received; an own
	// list that started when it was n and comes back at n is newer than
	// all of them.
	received uint64
}

// takeListed takes a PLEG listing.
func (p *Pod) takeListed(out *effects, e Listed) {
	from, until := e.From, e.Until
	if from.IsZero() || until.IsZero() {
		from, until = e.ObservedAt, e.ObservedAt
	}
	p.view.received++
	// A listing that changes nothing held needs no sync.
	if p.observe(e.Containers, from, until, e.Version, false) || p.view.relist {
		p.requestSync(out)
	}
}

// observe takes a listing of the pod's containers, taken some time
// between from and until, unless the one held is newer: a stale listing
// never overwrites a newer one (the PLEG reports a transition once, so a
// newer listing dropped would lose it for good). own marks the machine's
// own listing (the executor's), which wins a tie of versions.
//
// Listings are ordered by the runtime's state version when both have one
// (exact), else by their time spans: one that began after the other
// returned is newer. Spans that overlap (a PLEG relist running while the
// executor listed) cannot be ordered: when they disagree the machine lists
// again, and that list, begun after both, settles it.
//
// It reports whether it took a listing that differs from the one held.
func (p *Pod) observe(cs []runtimeadapter.Container, from, until time.Time, version uint64, own bool) bool {
	v := &p.view
	if version != 0 && v.version != 0 {
		if version > v.version || (version == v.version && own) {
			return p.take(cs, from, until, version)
		}
		return false
	}
	switch {
	case from.After(v.until):
		return p.take(cs, from, until, version)
	case until.Before(v.from):
		// older: the held listing already has what it says
	case !sameStates(cs, v.containers):
		v.relist = true
	}
	return false
}

func (p *Pod) take(cs []runtimeadapter.Container, from, until time.Time, version uint64) bool {
	v := &p.view
	if v.listed && sameStates(cs, v.containers) {
		// The same instances in the same states: what the machine holds
		// stays (their other fields and labels are fixed per instance, and
		// recoverStart has read them), only the span moves. A PLEG batch
		// that changes nothing costs no allocation.
		v.from, v.until, v.version = from, until, version
		return false
	}
	p.recoverStart(cs)
	v.containers, v.from, v.until, v.version = hold(cs), from, until, version
	p.probes.dirty = true
	return true
}

// listing is the listing held, with label maps (made anew: see unhold).
func (v *view) listing() []runtimeadapter.Container { return unhold(v.containers) }

// died marks the container e names exited in the listing held, if the
// listing has it running (a death is final: actorlet never starts an
// instance that ran), and reports whether it did. The listing's span is
// left as it was: the PLEG's listing that the same event triggers is
// newer, and replaces this one with the runtime's own account.
func (p *Pod) died(e Died) bool {
	v := &p.view
	i := slices.IndexFunc(v.containers, func(c held) bool { return c.ID == e.ContainerID })
	if i < 0 || v.containers[i].State != runtimeadapter.StateRunning {
		return false
	}
	cs := slices.Clone(v.containers) // the packed labels are shared: they never change
	c := &cs[i]
	c.State, c.RawState, c.FinishedAt = runtimeadapter.StateExited, "exited", e.At
	if e.ExitCode >= 0 {
		c.ExitCode = e.ExitCode
	}
	c.Reason = "Error"
	if c.ExitCode == 0 {
		c.Reason = "Completed"
	}
	v.containers = cs
	v.received++ // an own list under way may predate the death
	p.probes.dirty = true
	return true
}

// sameStates: listing x has the same container instances in the same
// states as the one held, y (what a plan and a status read of them).
func sameStates(x []runtimeadapter.Container, y []held) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		c := &x[i]
		j := i // listings usually come in the same order
		if y[j].ID != c.ID {
			j = slices.IndexFunc(y, func(o held) bool { return o.ID == c.ID })
			if j < 0 {
				return false
			}
		}
		o := &y[j].heldFields
		if o.State != c.State || o.RawState != c.RawState || o.ExitCode != c.ExitCode || o.Reason != c.Reason ||
			!o.StartedAt.Equal(c.StartedAt) || !o.FinishedAt.Equal(c.FinishedAt) || o.IP != c.IP || o.Error != c.Error {
			return false
		}
	}
	return true
}

// StartOf is when the pod the containers cs belong to started, as they
// say: the earliest start-time label; without one (containers made before
// the label existed), the earliest creation time. Zero when cs is empty.
func StartOf(cs []runtimeadapter.Container) time.Time {
	var labelled, created time.Time
	for i := range cs {
		if t, err := time.Parse(time.RFC3339Nano, cs[i].Labels[runtimeadapter.LabelPodStartTime]); err == nil {
			labelled = earliest(labelled, t)
		}
		created = earliest(created, cs[i].CreatedAt)
	}
	if !labelled.IsZero() {
		return labelled
	}
	return created
}

// earliest is the earlier of two times, a zero one not counting.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// recoverStart takes the pod's start time (status.startTime, and the
// creationTimestamp the API shows) from its containers when they say the
// pod started before the machine thought: after an agent restart or a pod
// actor's restart by its supervisor, the pod started when its first
// sandbox was made, not now. A pod none of whose containers is left has
// nothing to recover from: it starts anew (its containers are all made
// again).
func (p *Pod) recoverStart(cs []runtimeadapter.Container) {
	t := StartOf(cs)
	if t.IsZero() || (!p.startTime.IsZero() && !t.Before(p.startTime)) {
		return
	}
	p.startTime = t
	p.started = true // it started before this machine: no pod start to measure
}
