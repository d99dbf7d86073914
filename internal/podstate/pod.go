// Package podstate is a pod actor's state machine, in the style of etcd
// raft's RawNode: Step takes an event (a message the actor received, the
// outcome of its executor, a timer) and the time, and returns effects
// (start a list, run this plan, set a timer for this instant, report this
// status, emit this event, persist these records, terminated) for the
// actor to carry out. It owns the pod's spec, the newest listing of its
// containers and the rules that order listings, the phase, the dirty flag
// and the retry curve of failed syncs, what its probes said and the
// containers whose starts failed. It has no clock, does no I/O, starts no
// goroutine and takes no lock: table tests drive it with event
// sequences.
package podstate

import (
	"maps"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/supervision"
)

// Config is what a pod's machine needs to know of its node.
type Config struct {
	UID     types.UID
	Node    string
	Backoff supervision.BackoffPolicy
	// GCPeriod is how often exited instances nobody needs are removed.
	GCPeriod time.Duration
	// RetryInitial and RetryMax bound the delay before a failed sync is
	// tried again (doubling from RetryInitial).
	RetryInitial, RetryMax time.Duration
	// HostIPs are the node's addresses, reported in the pod's status
	// (hostIP, hostIPs; podIP and podIPs of a hostNetwork pod).
	HostIPs []string
	// RuntimeType names the runtime in the status's container IDs
	// ("containerd://<id>"; "": Docker's, see podsync.ContainerID).
	RuntimeType string
	// Standby: keep the next instance of restartable app containers
	// created ahead of their restart (podsync.Input.Standby).
	Standby bool
	// SandboxIsContainer: see podsync.Input.SandboxIsContainer.
	SandboxIsContainer bool
}

// Phase is what the pod's machine is doing, or waits for.
type Phase uint8

const (
	// PhaseNew: not started (Step(Started{}) lists the pod's containers).
	PhaseNew Phase = iota
	// PhaseListing: the executor lists the pod's containers (no plan): at
	// start, after a failed list or a runtime outage, or to settle two
	// listings that disagree.
	PhaseListing
	// PhaseSyncing: the executor carries out a plan, then lists.
	PhaseSyncing
	// PhaseWaitingForSpec: listed; neither a spec nor a removal has come.
	PhaseWaitingForSpec
	// PhaseIdle: the last plan had nothing to do; a timer may be set.
	PhaseIdle
	// PhaseRetrying: the last sync failed; the retry timer is set.
	PhaseRetrying
	// PhaseRuntimeDown: the runtime's lists fail; nothing is planned until the
	// PLEG says it is back.
	PhaseRuntimeDown
	// PhaseTerminated: the pod was removed and none of its containers is
	// left.
	PhaseTerminated
)

var phaseNames = [...]string{"New", "Listing", "Syncing", "WaitingForSpec", "Idle", "Retrying", "RuntimeDown", "Terminated"}

func (p Phase) String() string { return phaseNames[p] }

// desire is what is known of the pod's spec.
type desire uint8

const (
	unknown desire = iota // no spec and no removal yet
	desired               // a spec came
	removed               // the pod is removed: everything stops
)

// Pod is one pod's state machine.
type Pod struct {
	cfg *Config // may be shared with other pods' machines (NewPodShared)

	pod *v1.Pod // the last spec (kept after a removal: hooks come from it)
	// objects: the pod's ConfigMaps and Secrets; refresh: they changed
	// since its volumes were last written (the next sync runs even when
	// its plan is empty).
	objects podsync.Objects
	// removedAs names a pod this machine only removes (an orphan found in
	// the runtime: no spec), "namespace/name".
	removedAs string

	view  view
	dirty bool // something changed while the executor ran: sync again after it
	// queued: a SyncRequested is on its way (see requestSync).
	queued  bool
	down    bool // the runtime's lists fail
	refresh bool // see objects
	started bool // its start duration was measured (see startTime)
	phase   Phase
	desire  desire
	// (the bools and bytes side by side in one word: the struct fits the
	// 352-B size class)

	retry   time.Duration // the next retry delay after a failed sync (0: RetryInitial)
	timerAt time.Time     // the timer set (zero: none)

	records supervision.Records  // the pod's container history
	waits   map[string]StartWait // containers whose start attempt failed
	probes  probes
	// backoffEvents: container → message of its last BackOff event.
	backoffEvents map[string]string
	lastGC        time.Time // the last plan that removed unneeded exited instances

	startTime  time.Time // the pod's start (status.startTime)
	lastStatus *v1.PodStatus
	syncStart  time.Time
}

// NewPod returns the machine of pod cfg.UID, with its container history
// (records, by container name; read only: changes come out as Persist).
func NewPod(cfg Config, records supervision.Records) *Pod {
	return &Pod{cfg: &cfg, records: records}
}

// NewPodShared is NewPod with a Config shared by the machines of a node's
// pods (an idle pod then holds none of its own). Neither the caller nor the
// machine changes *cfg; its UID is not read (a machine learns its pod from
// its events).
func NewPodShared(cfg *Config, records supervision.Records) *Pod {
	return &Pod{cfg: cfg, records: records}
}

// Phase is what the machine does or waits for.
func (p *Pod) Phase() Phase { return p.phase }

// Name is the pod's "namespace/name", "" while unknown.
func (p *Pod) Name() (namespace, name string) {
	if p.pod != nil {
		return p.pod.Namespace, p.pod.Name
	}
	for i := range len(p.removedAs) {
		if p.removedAs[i] == '/' {
			return p.removedAs[:i], p.removedAs[i+1:]
		}
	}
	return "", ""
}

// NextRetry is the delay before a sync that fails now is tried again.
func (p *Pod) NextRetry() time.Duration {
	if p.retry == 0 {
		return p.cfg.RetryInitial
	}
	return p.retry
}

// Step takes ev, which happened at now, and returns what to do, in order.
func (p *Pod) Step(ev Event, now time.Time) []Effect {
	var out effects
	p.step(&out, ev, now)
	return out
}

// StepListed is Step(&e, now) for a PLEG listing, without e escaping to
// the heap: a pod actor steps one per PLEG batch, and an unchanged
// listing then allocates nothing.
func (p *Pod) StepListed(e Listed, _ time.Time) []Effect {
	var out effects
	p.takeListed(&out, e)
	return out
}

func (p *Pod) step(out *effects, ev Event, now time.Time) {
	switch e := ev.(type) {
	case Started:
		p.startList(out)
	case SpecChanged:
		p.specChanged(out, e.Pod, e.Objects, now)
	case Removed:
		p.remove(out, e, now)
	case RuntimeHealth:
		if e.Healthy && p.down {
			// What the machine holds may predate the outage, and the
			// PLEG's first listing after it comes after this event: list
			// anew before planning (else a stale listing could re-create
			// an instance that ran and died meanwhile).
			p.view.listed = false
		}
		p.down = !e.Healthy
		if e.Healthy {
			p.sync(out, now)
		}
	case *Listed:
		p.takeListed(out, *e)
	case Died:
		if p.died(e) {
			p.requestSync(out)
		}
	case SyncRequested:
		p.queued = false
		p.sync(out, now)
	case WorkDone:
		p.workDone(out, e, now)
	case TimerFired:
		p.timerAt = time.Time{}
		p.sync(out, now)
	case ProbeChanged:
		if p.probeChanged(e) {
			p.sync(out, now)
		}
	}
}

func (p *Pod) busy() bool { return p.phase == PhaseListing || p.phase == PhaseSyncing }

func (p *Pod) specChanged(out *effects, pod *v1.Pod, objs podsync.Objects, now time.Time) {
	if p.desire == unknown && pod != nil && p.startTime.IsZero() { // else recovered from the runtime (see recoverStart)
		p.startTime = now
	}
	if p.desire == removed || (p.pod != nil && pod != nil && !equality.Semantic.DeepEqual(p.pod.Spec, pod.Spec)) {
		out.add(AbortStarts{}) // nothing starts with the old spec
		p.waits = nil          // and every failed start is tried again with the new one
	}
	if !objs.Equal(p.objects) {
		p.objects = objs
		// Volumes of the objects are written again, whatever the plan; a
		// start that waited for an object is tried again at once.
		p.refresh = p.refresh || podsync.HasObjectVolume(pod)
		p.retryObjectWaits()
	}
	p.pod, p.desire = pod, desired
	p.spawnProbes(out)
	p.sync(out, now)
}

func (p *Pod) remove(out *effects, e Removed, now time.Time) {
	if p.pod == nil && p.removedAs == "" && e.Name != "" {
		p.removedAs = e.Namespace + "/" + e.Name
	}
	p.desire = removed
	out.add(AbortStarts{})
	p.stopProbes(out)
	p.sync(out, now)
}

// requestSync syncs once the events already queued are taken (a burst of
// PLEG listings is planned once): the shell answers RequestSync with a
// SyncRequested behind them.
func (p *Pod) requestSync(out *effects) {
	if p.queued {
		return
	}
	p.queued = true
	out.add(RequestSync{})
}

// startList has the executor list the pod's containers.
func (p *Pod) startList(out *effects) {
	p.phase = PhaseListing
	out.add(List{Received: p.view.received})
}

// sync plans and, when there is work, has the executor carry it out.
func (p *Pod) sync(out *effects, now time.Time) {
	if p.phase == PhaseTerminated && p.desire == removed {
		// Done: a sync request or timer that was on its way (a PLEG
		// batch and the runtime's event for the same death) would plan
		// the empty pod again and terminate it a second time.
		return
	}
	if p.busy() {
		p.dirty = true
		return
	}
	if !p.view.listed || p.view.relist {
		p.view.relist = false
		p.startList(out) // first, a retry after a failed list, or a tie to settle
		return
	}
	if p.desire == unknown {
		p.phase = PhaseWaitingForSpec
		return
	}
	if p.down {
		p.dirty = true
		p.phase = PhaseRuntimeDown // no create or kill on stale knowledge; the PLEG says when the runtime is back
		return
	}
	var pod *v1.Pod
	if p.desire != removed {
		pod = p.pod
	}
	gc := now.Sub(p.lastGC) >= p.cfg.GCPeriod
	if gc {
		p.lastGC = now
	}
	p.updateProbes(out)
	cs := p.view.listing()
	plan := podsync.Compute(podsync.Input{
		Node: p.cfg.Node, Pod: pod, Containers: cs, Now: now, GC: gc,
		Backoff: p.cfg.Backoff, History: p.records, Unhealthy: p.probes.unhealthy,
		Started: p.probes.startupPassed,
		Standby: p.cfg.Standby, HostIPs: p.cfg.HostIPs, Objects: p.objects, SandboxIsContainer: p.cfg.SandboxIsContainer,
	})
	if plan.RecordsChanged { // the exits seen, the restarts decided: kept outside the machine too
		p.records = plan.Records
		out.add(Persist{Records: plan.Records})
	}
	p.holdForWaits(out, &plan, now)
	if pod != nil {
		st := podsync.StatusOn(p.cfg.RuntimeType, pod, cs, plan, podsync.Probes{Ready: p.probes.ready, Started: p.probes.startupPassed})
		p.report(out, podsync.WithHostIPs(st, pod, p.cfg.HostIPs), now)
	}
	if plan.Terminated {
		p.phase = PhaseTerminated
		p.records = nil
		out.add(Terminate{})
		return
	}
	if !plan.RequeueAt.IsZero() {
		p.schedule(out, plan.RequeueAt)
	}
	if pod != nil && podsync.HasGarbage(pod, cs) {
		p.schedule(out, p.lastGC.Add(p.cfg.GCPeriod)) // no timer for a pod with nothing to collect
	}
	for name, w := range plan.Waiting {
		if w.Reason == podsync.ReasonCrashLoop && p.backoffEvents[name] != w.Message {
			put(&p.backoffEvents, name, w.Message) // once per exit, not per sync
			out.add(Emit{Warning: true, Reason: "BackOff", Container: name, Message: "Back-off restarting failed container " + name + ": " + w.Message})
		}
	}
	refresh := p.refresh && pod != nil
	if plan.Empty() && !refresh {
		p.phase = PhaseIdle
		return
	}
	p.refresh = false
	p.phase = PhaseSyncing
	p.syncStart = now
	out.add(Syncing{Since: now})
	out.add(Run{Plan: plan, Pod: pod, HookPod: p.pod, RemovedAs: p.removedAs, PodStart: p.startTime,
		KillMessages: maps.Clone(p.probes.killMessages), Received: p.view.received, Objects: p.objects, Refresh: refresh})
}

// workDone takes the executor's outcome: its listing, and the errors of
// the plan, which retry on a doubling curve.
func (p *Pod) workDone(out *effects, e WorkDone, now time.Time) {
	p.phase = PhaseIdle
	if !p.syncStart.IsZero() {
		out.add(SyncTook{Duration: now.Sub(p.syncStart)})
		p.syncStart = time.Time{}
	}
	out.add(Syncing{})
	if e.ListErr == nil {
		l := e.Listing
		p.view.listed = true
		if l.Received == p.view.received {
			// No PLEG listing came meanwhile: this one, started after
			// everything the machine had heard, is the newest.
			p.take(l.Containers, l.From, l.Until, l.Version)
		} else {
			p.observe(l.Containers, l.From, l.Until, l.Version, true)
		}
	} else {
		p.view.listed = false // list before planning again
	}
	for _, name := range e.Started {
		delete(p.waits, name)
	}
	for name, w := range e.Waits {
		put(&p.waits, name, w)
	}
	errs := e.Errs
	if e.ListErr != nil {
		errs = append(errs, e.ListErr)
	}
	if len(errs) > 0 {
		in := p.NextRetry()
		out.add(SyncFailed{Errs: errs, RetryIn: in})
		p.schedule(out, now.Add(in))
		p.retry = min(max(p.retry*2, p.cfg.RetryInitial*2), p.cfg.RetryMax)
		p.phase = PhaseRetrying
	} else {
		p.retry = 0
	}
	if len(errs) == 0 || p.dirty {
		p.dirty = false
		p.sync(out, now)
	}
}

// schedule has a sync at `at` (the earliest timer wins).
func (p *Pod) schedule(out *effects, at time.Time) {
	if !p.timerAt.IsZero() && !p.timerAt.After(at) {
		return
	}
	p.timerAt = at
	out.add(SetTimer{At: at})
}

// report has the status reported when it changed.
func (p *Pod) report(out *effects, st v1.PodStatus, now time.Time) {
	if !p.startTime.IsZero() {
		t := metav1.NewTime(p.startTime)
		st.StartTime = &t
	}
	if p.lastStatus != nil && equality.Semantic.DeepEqual(*p.lastStatus, st) {
		return
	}
	p.lastStatus = &st
	r := Report{Namespace: p.pod.Namespace, Name: p.pod.Name, Status: p.lastStatus}
	if !p.started && allRunning(st) && !p.startTime.IsZero() {
		p.started = true // manifest seen → every container running, once
		r.PodStarted, r.StartedIn = true, now.Sub(p.startTime)
	}
	out.add(r)
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

// put sets (*m)[k] = v, making the map first: a machine's maps stay nil
// until used.
func put[K comparable, V any](m *map[K]V, k K, v V) {
	if *m == nil {
		*m = map[K]V{}
	}
	(*m)[k] = v
}
