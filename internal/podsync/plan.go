// Package podsync is the pure core of a pod actor: from a pod's spec, the
// containers the runtime has for it, the node's record of their last exits
// and the time, it computes what to do (Compute) and what the pod's status
// is (Status). It makes no runtime calls, takes no lock, touches no disk
// and keeps no state: the records come in as data, and the plan returns
// them updated for the shell to keep. The shape follows the kubelet's
// computePodActions: a plan, then steps.
package podsync

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/supervision"
)

// Input is everything Compute looks at.
type Input struct {
	Node string
	// Pod is the desired pod; nil once it is removed (then every container
	// is stopped and removed).
	Pod *v1.Pod
	// Containers is every container the runtime has for the pod, all
	// attempts, running or not.
	Containers []runtimeadapter.Container
	Now        time.Time
	// Backoff is the CrashLoopBackOff policy (the zero value restarts at
	// once).
	Backoff supervision.BackoffPolicy
	// History is the node's record of the pod's containers by container
	// name: the last exit of each and its CrashLoopBackOff. An exit is
	// remembered after its instance is removed (`docker rm`, GC) and
	// across restarts of the agent, so completed work is not run again and
	// restart counts go on. Compute only reads it (it may be shared);
	// Plan.Records is the history after the plan.
	History supervision.Records
	// Unhealthy lists running container instances (by ID) whose liveness
	// or startup probe failed, with the grace to kill them with (the
	// probe's terminationGracePeriodSeconds, else the pod's). They are
	// killed and then restarted per restartPolicy with CrashLoopBackOff.
	Unhealthy map[string]time.Duration
	// Started lists running container instances (by ID) whose startup
	// probe passed: a sidecar with a startup probe gates the next init
	// container until then.
	Started map[string]bool
	// GC: also remove exited instances nobody needs (all but the newest
	// per container). The pod actor sets it once a minute, as the
	// kubelet's container GC; removal of a removed pod never waits for it.
	GC bool
	// Standby: keep the next instance of each restartable app container
	// created ahead of its restart (see standby.go); off, pending
	// standbys are removed.
	Standby bool
	// HostIPs and Objects are the node's addresses and the pod's
	// ConfigMaps and Secrets: inputs of a standby's configuration
	// (StandbyConfig).
	HostIPs []string
	Objects Objects
	// SandboxIsContainer: the runtime's sandbox is a container that the
	// pod's containers reference only through the namespaces they join
	// (runtimeadapter.SandboxContainers: Docker). Only then may a
	// container start beside its sandbox (Plan.StartBeside).
	SandboxIsContainer bool
}

// Kill stops a running (or half-created) container with a grace period.
type Kill struct {
	Container runtimeadapter.Container
	Grace     time.Duration
	Reason    string
	// Sidecar: the container is a sidecar, stopped after every other
	// container of the plan and one at a time, in the plan's order (the
	// reverse of the spec's).
	Sidecar bool
}

// Start creates and starts a container of the spec. When AdoptID is set,
// the container exists (created, never started, e.g. after a crash between
// create and start) and only needs starting.
type Start struct {
	Name     string
	Init     bool // an init container (run to completion before the apps)
	Restarts int  // its restart count, also its attempt in the runtime name
	Reason   string
	AdoptID  string
	// Standby: AdoptID is a standby, started as the container's restart
	// (its Created and Started events, postStart hook and restart metric
	// come as for a new instance).
	Standby bool
	// Config is the StandbyConfig of a standby to create (Plan.Standby).
	Config string
}

// Waiting is why a spec container is not running now.
type Waiting struct {
	Reason  string // e.g. "CrashLoopBackOff"
	Message string
}

// Plan is what a sync must do, in this order: Kill (apps first, sandboxes
// last), create the sandbox if CreateSandbox, Start in spec order, then
// Remove (exited instances nobody needs).
type Plan struct {
	Kill           []Kill
	CreateSandbox  bool
	SandboxAttempt int
	// AdoptSandboxID is a created, never started sandbox to start instead
	// of creating one.
	AdoptSandboxID string
	// SandboxID is the running sandbox app containers join when neither
	// CreateSandbox nor AdoptSandboxID is set (with AdoptSandboxID, the
	// same ID when the pod's containers are planned as in that sandbox:
	// see adoptsBeside).
	SandboxID string
	// StartBeside: Start[0] is created and started while the new sandbox
	// starts, not after its start returned: the pod's containers join
	// none of the sandbox's namespaces (see JoinsSandbox) and this is the
	// pod's first sandbox. The start is issued once the sandbox exists
	// (created); if the sandbox's start fails, the container is stopped
	// and removed, and the next sandbox (attempt 1) starts alone first.
	StartBeside bool
	Start       []Start
	// DropStandby are pending standbys that are not their container's
	// next instance: removed after the kills, before any start (a start
	// may reuse the runtime name of one).
	DropStandby []runtimeadapter.Container
	// Standby are standbys to create (not start), after the starts.
	Standby []Start
	Remove  []runtimeadapter.Container
	// RequeueAt, when set, is the earliest time a sync is due again (a
	// CrashLoopBackOff deadline). The actor sets a timer for it.
	RequeueAt time.Time
	Waiting   map[string]Waiting
	// Done: the pod has finished (restartPolicy OnFailure or Never and
	// nothing will run again).
	Done bool
	// Terminated: the pod was removed and none of its containers is left.
	Terminated bool
	// Records is the pod's container history after this plan: Input.History
	// with the exits the plan saw and the restarts it decided.
	// RecordsChanged says it differs from Input.History: the shell keeps
	// it (the node's state file), and passes it to Status.
	Records        supervision.Records
	RecordsChanged bool
}

// Empty reports whether the plan has no runtime work.
func (p *Plan) Empty() bool {
	return len(p.Kill) == 0 && !p.CreateSandbox && p.AdoptSandboxID == "" && len(p.Start) == 0 && len(p.Remove) == 0 &&
		len(p.DropStandby) == 0 && len(p.Standby) == 0
}

// Reasons for kills and starts; they reach events and logs.
const (
	ReasonPodRemoved     = "PodRemoved"
	ReasonSandboxChanged = "SandboxChanged"
	ReasonSpecChanged    = "SpecChanged"
	ReasonNotInSpec      = "NotInSpec"
	ReasonDuplicate      = "Duplicate"
	ReasonPodCompleted   = "PodCompleted"
	ReasonFirstStart     = "Created"
	ReasonRestart        = "Restart"
	ReasonAdopt          = "AdoptCreated"
	ReasonCrashLoop      = "CrashLoopBackOff"
	ReasonInit           = "Init"
	ReasonUnhealthy      = "Unhealthy"
	// ReasonRestartAll: a container's exit matched a restartPolicyRules
	// rule with action RestartAllContainers.
	ReasonRestartAll = "RestartAllContainers"
)

// restartAllKey is the key of the pod's record of its last restart of all
// its containers (RestartsAll) among the container records: its
// Exit.FinishedAt is when it was decided, Exit.ContainerID the instance
// whose exit asked for it. No container has this name (container names
// are lower-case DNS labels).
const restartAllKey = runtimeadapter.SandboxName

// A start that failed, as the kubelet shows it on containerd (whose CRI
// reports such a container exited with this code and reason).
const (
	ReasonStartError   = "StartError"
	ExitCodeStartError = 128
)

// LabelSandboxID, on init containers, names the sandbox they ran in.
const LabelSandboxID = "io.actorlet.sandbox.id"

func isLive(c *runtimeadapter.Container) bool { return c.State != runtimeadapter.StateExited }

// Adoption is what becomes of an existing instance found where a new one
// was to be made (the plan's listing, or a create's name conflict).
type Adoption int

const (
	// NotAdoptable: it ran, or its start failed (the runtime's Error is
	// set): that attempt happened, it is never started again.
	NotAdoptable Adoption = iota
	// AdoptRunning: it runs; it is the attempt, left alone.
	AdoptRunning
	// AdoptCreated: created and never started (a crash or a lost answer
	// between create and start): it is started instead of creating
	// another.
	AdoptCreated
)

// AdoptionOf is the one adoption rule (see Adoption).
func AdoptionOf(c *runtimeadapter.Container) Adoption {
	switch {
	case c.State == runtimeadapter.StateRunning:
		return AdoptRunning
	case c.State == runtimeadapter.StateUnknown && c.RawState == "created" && c.Error == "":
		return AdoptCreated
	}
	return NotAdoptable
}

// Adoptable: c was created and never started (AdoptCreated).
func Adoptable(c *runtimeadapter.Container) bool { return AdoptionOf(c) == AdoptCreated }

// startFailed: the runtime tried to start c and could not (Docker leaves
// it created, with State.Error).
func startFailed(c *runtimeadapter.Container) bool {
	return c.State == runtimeadapter.StateUnknown && c.RawState == "created" && c.Error != ""
}

// byNewest orders instances newest attempt first (restart count label,
// then creation time, then ID for determinism).
func byNewest(cs []runtimeadapter.Container) {
	sort.SliceStable(cs, func(i, j int) bool {
		ri, rj := restarts(&cs[i]), restarts(&cs[j])
		if ri != rj {
			return ri > rj
		}
		if !cs[i].CreatedAt.Equal(cs[j].CreatedAt) {
			return cs[i].CreatedAt.After(cs[j].CreatedAt)
		}
		return cs[i].ID > cs[j].ID
	})
}

// restarts is an instance's restart count label (0 when it does not
// parse, as ParseMeta reads it).
func restarts(c *runtimeadapter.Container) int {
	n, err := strconv.Atoi(c.Labels[runtimeadapter.LabelRestartCount])
	if err != nil || n < 0 {
		return 0
	}
	return n
}

func grace(c *runtimeadapter.Container) time.Duration {
	m, _ := runtimeadapter.ParseMeta(c.Labels)
	return m.GracePeriod
}

// grouped splits a pod's containers into sandboxes and app instances by
// spec name, each newest first.
type grouped struct {
	sandboxes []runtimeadapter.Container
	apps      map[string][]runtimeadapter.Container
	names     []string // app names seen, sorted
	inits     map[string][]runtimeadapter.Container
	initNames []string // init container names seen, sorted
	// recorded: instances that are no longer in the runtime, shown from
	// their recorded exit (by ID). They are never killed nor removed.
	recorded map[string]bool
	// standbys: pending standbys of app containers by name, newest
	// first; they are not among apps.
	standbys map[string][]runtimeadapter.Container
	// since is when the pod last restarted all its containers
	// (RestartsAll), zero if never: instances created before belong to
	// the pod's previous run (see stale).
	since time.Time
}

// stale: c was created before the pod last restarted all its containers;
// it counts for nothing but restart counts (init containers run again,
// app containers start again, whatever their exits). Creation times are
// the runtime's, exact but for a container Docker listed and could not
// inspect yet (seconds only): one made in the second of the restart may
// then be taken for an older one, and an init container run once more.
func (g grouped) stale(c *runtimeadapter.Container) bool {
	return !g.since.IsZero() && c.CreatedAt.Before(g.since)
}

func group(cs []runtimeadapter.Container) grouped {
	g := grouped{apps: map[string][]runtimeadapter.Container{}, inits: map[string][]runtimeadapter.Container{}}
	for _, c := range cs {
		m, err := runtimeadapter.ParseMeta(c.Labels)
		if err != nil {
			continue // not ours: never touched
		}
		if m.Type == runtimeadapter.TypeSandbox {
			g.sandboxes = append(g.sandboxes, c)
			continue
		}
		if m.Type == runtimeadapter.TypeInit {
			if _, ok := g.inits[m.ContainerName]; !ok {
				g.initNames = append(g.initNames, m.ContainerName)
			}
			g.inits[m.ContainerName] = append(g.inits[m.ContainerName], c)
			continue
		}
		if IsStandby(&c) {
			if g.standbys == nil {
				g.standbys = map[string][]runtimeadapter.Container{}
			}
			g.standbys[m.ContainerName] = append(g.standbys[m.ContainerName], c)
			continue
		}
		if _, ok := g.apps[m.ContainerName]; !ok {
			g.names = append(g.names, m.ContainerName)
		}
		g.apps[m.ContainerName] = append(g.apps[m.ContainerName], c)
	}
	byNewest(g.sandboxes)
	for _, v := range g.standbys {
		byNewest(v)
	}
	for _, v := range g.apps {
		byNewest(v)
	}
	for _, v := range g.inits {
		byNewest(v)
	}
	sort.Strings(g.names)
	sort.Strings(g.initNames)
	return g
}

// view groups a pod's containers as the plan and the status reason about
// them: the runtime's listing, where an app or init container whose start
// failed is an exit (asStartError), plus the recorded last exit of each
// spec container whose instance is gone from the runtime.
func view(pod *v1.Pod, cs []runtimeadapter.Container, recs supervision.Records) grouped {
	listed, copied := cs, false
	for i := range cs {
		if startFailed(&cs[i]) && cs[i].Labels[runtimeadapter.LabelContainerType] != string(runtimeadapter.TypeSandbox) {
			if !copied { // never modify the caller's listing
				listed, copied = append([]runtimeadapter.Container(nil), cs...), true
			}
			c := &listed[i]
			finished := c.CreatedAt
			if r, ok := recs.Get(c.Labels[runtimeadapter.LabelContainerName]); ok && r.Exit.ContainerID == c.ID && !r.Exit.FinishedAt.IsZero() {
				finished = r.Exit.FinishedAt
			}
			*c = asStartError(*c, finished)
		}
	}
	g := group(listed)
	if r, ok := recs.Get(restartAllKey); ok {
		g.since = r.Exit.FinishedAt
	}
	if pod == nil || len(recs) == 0 {
		return g
	}
	present := make(map[string]bool, len(cs))
	for i := range cs {
		present[cs[i].ID] = true
	}
	kinds := map[string]runtimeadapter.ContainerType{}
	for _, c := range pod.Spec.InitContainers {
		kinds[c.Name] = runtimeadapter.TypeInit
	}
	for _, c := range pod.Spec.Containers {
		kinds[c.Name] = runtimeadapter.TypeApp
	}
	for _, nr := range recs {
		name, r := nr.Name, nr.Record
		typ := runtimeadapter.TypeApp
		if r.Exit.Init {
			typ = runtimeadapter.TypeInit
		}
		if !r.Exit.Known() || present[r.Exit.ContainerID] || kinds[name] != typ {
			continue
		}
		if g.recorded == nil {
			g.recorded = map[string]bool{}
		}
		g.recorded[r.Exit.ContainerID] = true
		c := recordedInstance(pod, name, typ, r.Exit)
		if typ == runtimeadapter.TypeInit {
			if _, ok := g.inits[name]; !ok {
				g.initNames = append(g.initNames, name)
			}
			g.inits[name] = append(g.inits[name], c)
			byNewest(g.inits[name])
		} else {
			if _, ok := g.apps[name]; !ok {
				g.names = append(g.names, name)
			}
			g.apps[name] = append(g.apps[name], c)
			byNewest(g.apps[name])
		}
	}
	sort.Strings(g.names)
	sort.Strings(g.initNames)
	return g
}

// asStartError shows a container whose start failed as the kubelet shows
// one on containerd: exited with code 128, reason StartError and the
// runtime's message. It never ran (no start time); Docker gives it no
// finish time either, so it finished when actorlet first saw the failure
// (the recorded exit's), else when it was created.
func asStartError(c runtimeadapter.Container, finished time.Time) runtimeadapter.Container {
	c.State = runtimeadapter.StateExited
	c.ExitCode, c.Reason = ExitCodeStartError, ReasonStartError
	c.StartedAt, c.FinishedAt = time.Time{}, finished
	return c
}

// recordedInstance is the exited instance a recorded exit stands for, as
// if it were still listed.
func recordedInstance(pod *v1.Pod, name string, typ runtimeadapter.ContainerType, e supervision.Exit) runtimeadapter.Container {
	labels := runtimeadapter.Meta{
		PodUID: string(pod.UID), PodName: pod.Name, PodNamespace: pod.Namespace, ContainerName: name,
		Type: typ, Hash: e.Hash, RestartCount: e.RestartCount, GracePeriod: GracePeriod(pod),
	}.Labels()
	if typ == runtimeadapter.TypeInit {
		labels[LabelSandboxID] = e.SandboxID
	}
	created := e.StartedAt
	if created.IsZero() {
		created = e.FinishedAt
	}
	return runtimeadapter.Container{
		ID: e.ContainerID, Labels: labels, State: runtimeadapter.StateExited,
		ExitCode: e.ExitCode, Reason: e.Reason, Error: e.Message,
		CreatedAt: created, StartedAt: e.StartedAt, FinishedAt: e.FinishedAt,
	}
}

// exitOf is the exit record of an exited instance (as view shows it).
func exitOf(c *runtimeadapter.Container) supervision.Exit {
	return supervision.Exit{
		ContainerID: c.ID, Init: c.Labels[runtimeadapter.LabelContainerType] == string(runtimeadapter.TypeInit),
		SandboxID: c.Labels[LabelSandboxID], Hash: labelHash(c), RestartCount: restarts(c),
		ExitCode: c.ExitCode, Reason: c.Reason, Message: c.Error,
		StartedAt: c.StartedAt, FinishedAt: c.FinishedAt,
	}
}

// history is the pod's records as a plan updates them: copied on the
// first change, so Input.History is never modified.
type history struct {
	policy  supervision.BackoffPolicy
	recs    supervision.Records
	changed bool
}

func (h *history) set(name string, r supervision.ContainerRecord) {
	if old, ok := h.recs.Get(name); ok && old.Equal(r) {
		return
	}
	if !h.changed {
		h.recs = h.recs.Clone()
		h.changed = true
	}
	h.recs = h.recs.Set(name, r)
}

// observe records the newest exit of each spec container the runtime
// shows (a start that failed included), unless the record already holds
// a newer one (whose instance was removed).
func (h *history) observe(in Input) {
	raw := group(in.Containers)
	names := make([]string, 0, len(in.Pod.Spec.InitContainers)+len(in.Pod.Spec.Containers))
	insts := map[string][]runtimeadapter.Container{}
	for _, c := range in.Pod.Spec.InitContainers {
		names, insts[c.Name] = append(names, c.Name), raw.inits[c.Name]
	}
	for _, c := range in.Pod.Spec.Containers {
		names, insts[c.Name] = append(names, c.Name), raw.apps[c.Name]
	}
	for _, name := range names {
		rec, ok := h.recs.Get(name)
		if lost := rec.Seen.ContainerID; lost != "" && lost != rec.Exit.ContainerID && !slices.ContainsFunc(insts[name],
			func(c runtimeadapter.Container) bool { return c.ID == lost || restarts(&c) > rec.Seen.RestartCount }) {
			// The newest instance seen running is gone and no exit of it
			// was seen: it was removed while running.
			rec = h.policy.Observe(rec, rec.LostExit(in.Now))
			h.set(name, rec)
		}
		if len(insts[name]) == 0 {
			continue
		}
		latest := insts[name][0]
		same := ok && rec.Exit.ContainerID == latest.ID
		if ok && !same && rec.Exit.RestartCount > restarts(&latest) {
			continue // the record's exit is newer; its instance is gone
		}
		switch {
		case startFailed(&latest):
			finished := in.Now // the first time the failure is seen
			if same && !rec.Exit.FinishedAt.IsZero() {
				finished = rec.Exit.FinishedAt
			}
			latest = asStartError(latest, finished)
		case latest.State == runtimeadapter.StateRunning:
			if rec.Seen.ContainerID != latest.ID {
				rec.Seen = supervision.Instance{ContainerID: latest.ID, Init: exitOf(&latest).Init, SandboxID: latest.Labels[LabelSandboxID],
					Hash: labelHash(&latest), RestartCount: restarts(&latest), StartedAt: latest.StartedAt}
				h.set(name, rec)
			}
			continue
		case latest.State != runtimeadapter.StateExited:
			continue
		case latest.FinishedAt.IsZero(): // the runtime did not say (a listing without inspect)
			latest.FinishedAt = in.Now
		}
		h.set(name, h.policy.Observe(rec, exitOf(&latest)))
	}
}

// initsOf returns the instances of init container name that ran in the
// sandbox sandboxID since the pod last restarted all its containers,
// newest first: init containers run again, all of them in order, in every
// new sandbox and after every restart of all.
func (g grouped) initsOf(name, sandboxID string) []runtimeadapter.Container {
	var out []runtimeadapter.Container
	for _, c := range g.inits[name] {
		if sandboxID != "" && c.Labels[LabelSandboxID] == sandboxID && !g.stale(&c) {
			out = append(out, c)
		}
	}
	return out
}

// nextAttempt is the attempt number of a new instance of an init
// container: one past every instance it ever had, so a runtime name is
// never reused.
func (g grouped) nextAttempt(name string) int {
	if insts := g.inits[name]; len(insts) > 0 {
		return restarts(&insts[0]) + 1
	}
	return 0
}

// ShouldRestart says whether an exited container is restarted under
// policy, as Kubernetes' restartPolicy: Always restarts every exit,
// OnFailure a non-zero exit, Never none.
func ShouldRestart(policy v1.RestartPolicy, exitCode int) bool {
	switch policy {
	case v1.RestartPolicyNever:
		return false
	case v1.RestartPolicyOnFailure:
		return exitCode != 0
	default:
		return true
	}
}

// Compute returns the plan for in. It is pure: same input, same plan.
func Compute(in Input) Plan {
	h := &history{policy: in.Backoff, recs: in.History}
	p := compute(in, h)
	p.Remove = uniqueByID(p.Remove)
	p.DropStandby = uniqueByID(p.DropStandby)
	p.Kill = orderKills(p.Kill)
	p.Records, p.RecordsChanged = h.recs, h.changed
	return p
}

// kill stops k.Container, or, when it was created and never started,
// removes it: stopping such a container does nothing (Docker's stop of a
// created container succeeds and leaves it created), so a Kill would be
// planned again at every sync, forever.
func (p *Plan) kill(k Kill) {
	if neverStarted(&k.Container) {
		p.Remove = append(p.Remove, k.Container)
		return
	}
	p.Kill = append(p.Kill, k)
}

func neverStarted(c *runtimeadapter.Container) bool {
	return c.State == runtimeadapter.StateUnknown && c.RawState == "created"
}

// uniqueByID drops repeated containers, keeping the first of each ID.
func uniqueByID(cs []runtimeadapter.Container) []runtimeadapter.Container {
	if len(cs) < 2 {
		return cs
	}
	seen := make(map[string]bool, len(cs))
	out := cs[:0:0]
	for _, c := range cs {
		if !seen[c.ID] {
			seen[c.ID] = true
			out = append(out, c)
		}
	}
	return out
}

func compute(in Input, h *history) Plan {
	p := Plan{Waiting: map[string]Waiting{}}
	if in.Pod == nil {
		return removal(group(in.Containers))
	}
	h.observe(in)
	g := view(in.Pod, in.Containers, h.recs)
	pod := in.Pod
	podGrace := GracePeriod(pod)
	spec := map[string]*v1.Container{}
	for i := range pod.Spec.Containers {
		spec[pod.Spec.Containers[i].Name] = &pod.Spec.Containers[i]
	}
	initSpec := map[string]bool{}
	for _, c := range pod.Spec.InitContainers {
		initSpec[c.Name] = true
	}

	// Instances of names no longer in the spec go, whatever else happens.
	for _, name := range g.names {
		if spec[name] != nil {
			continue
		}
		for _, c := range g.apps[name] {
			if isLive(&c) {
				p.kill(Kill{Container: c, Grace: podGrace, Reason: ReasonNotInSpec})
			}
			p.Remove = append(p.Remove, c)
		}
	}
	for _, name := range g.initNames {
		if initSpec[name] {
			continue
		}
		for _, c := range g.inits[name] {
			if isLive(&c) {
				p.kill(Kill{Container: c, Grace: podGrace, Reason: ReasonNotInSpec})
			}
			p.Remove = append(p.Remove, c)
		}
	}

	var sb *runtimeadapter.Container
	if len(g.sandboxes) > 0 {
		sb = &g.sandboxes[0]
	}
	if podDone(pod, g) {
		p.Done = true
		// Sidecars never hold a finished pod open: they are stopped
		// (after the apps, in reverse order) and not restarted.
		for _, name := range g.initNames {
			if !sidecars(pod)[name] {
				continue
			}
			for _, inst := range g.inits[name] {
				if isLive(&inst) {
					p.kill(Kill{Container: inst, Grace: podGrace, Reason: ReasonPodCompleted})
				}
			}
		}
		for _, s := range g.sandboxes {
			switch s.State {
			case runtimeadapter.StateRunning:
				p.kill(Kill{Container: s, Grace: grace(&s), Reason: ReasonPodCompleted})
			case runtimeadapter.StateUnknown:
				// Created and never started (or paused): stopping does
				// nothing to it; remove it.
				p.Remove = append(p.Remove, s)
			}
		}
		p.dropStandbys(g)
		if in.GC {
			p.Remove = append(p.Remove, olderDead(pod, g)...)
		}
		return p
	}

	sbOK := sb != nil && sb.State == runtimeadapter.StateRunning && labelHash(sb) == SandboxHash(pod)
	if !sbOK && in.SandboxIsContainer && adoptsBeside(pod, sb) {
		// Started below, before any start; the containers (maybe started
		// beside it) are planned as in a running sandbox.
		p.AdoptSandboxID, sbOK = sb.ID, true
	}

	if !sbOK {
		// A new sandbox: every running container is killed and the
		// containers that should run start again inside the new one, the
		// init containers first.
		for _, name := range g.initNames {
			for _, inst := range g.inits[name] {
				if isLive(&inst) {
					p.kill(Kill{Container: inst, Grace: podGrace, Reason: ReasonSandboxChanged})
				}
			}
		}
		for _, c := range pod.Spec.Containers {
			for _, inst := range g.apps[c.Name] {
				if isLive(&inst) {
					p.kill(Kill{Container: inst, Grace: podGrace, Reason: ReasonSandboxChanged})
				}
			}
		}
		// A sandbox created but never started (a crash or a lost answer
		// between create and start) is adopted, not replaced.
		adopt := sb != nil && Adoptable(sb) && labelHash(sb) == SandboxHash(pod)
		for _, s := range g.sandboxes {
			if isLive(&s) && !(adopt && s.ID == sb.ID) {
				p.kill(Kill{Container: s, Grace: grace(&s), Reason: ReasonSandboxChanged})
			}
		}
		switch {
		case adopt:
			p.AdoptSandboxID = sb.ID
		case sb != nil:
			p.CreateSandbox, p.SandboxAttempt = true, restarts(sb)+1
		default:
			p.CreateSandbox = true
		}
		if len(pod.Spec.InitContainers) > 0 {
			first := pod.Spec.InitContainers[0].Name
			p.Start = append(p.Start, Start{Name: first, Init: true, Restarts: g.nextAttempt(first), Reason: ReasonInit})
		} else {
			for _, c := range pod.Spec.Containers {
				insts := g.apps[c.Name]
				if len(insts) == 0 {
					p.Start = append(p.Start, Start{Name: c.Name, Reason: ReasonFirstStart})
					continue
				}
				latest := insts[0]
				if latest.State == runtimeadapter.StateExited && !g.stale(&latest) && !ContainerRestarts(pod, &c, latest.ExitCode) {
					continue
				}
				p.Start = append(p.Start, Start{Name: c.Name, Restarts: restarts(&latest) + 1, Reason: ReasonSandboxChanged})
			}
		}
		p.StartBeside = in.SandboxIsContainer && startsBeside(pod, &p)
		p.dropStandbys(g)
		if in.GC {
			p.Remove = append(p.Remove, olderDead(pod, g)...)
		}
		return p
	}

	p.SandboxID = sb.ID
	for _, s := range g.sandboxes[1:] {
		if isLive(&s) {
			p.kill(Kill{Container: s, Grace: grace(&s), Reason: ReasonDuplicate})
		}
	}
	if name, dead, ok := restartAllTrigger(pod, g, sb); ok {
		// Every container stops, and the pod runs again from its first
		// init container in this sandbox (its network, address and
		// volumes kept), once the exit's CrashLoopBackOff has passed.
		if p.backoffDone(in, h, name, dead) {
			for _, n := range g.initNames {
				for _, inst := range g.inits[n] {
					if isLive(&inst) {
						p.kill(Kill{Container: inst, Grace: podGrace, Reason: ReasonRestartAll})
					}
				}
			}
			for _, n := range g.names {
				for _, inst := range g.apps[n] {
					if isLive(&inst) {
						p.kill(Kill{Container: inst, Grace: podGrace, Reason: ReasonRestartAll})
					}
				}
			}
			h.set(restartAllKey, supervision.ContainerRecord{Exit: supervision.Exit{ContainerID: dead.ID, Reason: ReasonRestartAll, FinishedAt: in.Now}})
		}
		p.dropStandbys(g) // made for the run that ends
		if in.GC {
			p.Remove = append(p.Remove, olderDead(pod, g)...)
		}
		return p
	}
	if !p.initContainers(in, g, sb, h) {
		p.dropStandbys(g)
		if in.GC {
			p.Remove = append(p.Remove, olderDead(pod, g)...)
		}
		return p // the app containers wait for the init containers
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		insts := g.apps[c.Name]
		if len(insts) == 0 {
			p.Start = append(p.Start, Start{Name: c.Name, Reason: ReasonFirstStart})
			p.DropStandby = append(p.DropStandby, g.standbys[c.Name]...)
			continue
		}
		// Invariant 1: at most one live instance per container name.
		for _, extra := range insts[1:] {
			if isLive(&extra) {
				p.kill(Kill{Container: extra, Grace: podGrace, Reason: ReasonDuplicate})
			}
		}
		latest := insts[0]
		if g.stale(&latest) {
			// From before the pod restarted all its containers: a new
			// instance once it has stopped.
			if latest.State == runtimeadapter.StateExited {
				p.Start = append(p.Start, Start{Name: c.Name, Restarts: restarts(&latest) + 1, Reason: ReasonRestartAll})
			}
			continue
		}
		changed := labelHash(&latest) != ContainerHash(c)
		sp := p.standbyFor(in, g, c, &latest, sb)
		starts := len(p.Start)
		switch {
		case latest.State == runtimeadapter.StateRunning:
			if changed {
				p.kill(Kill{Container: latest, Grace: podGrace, Reason: ReasonSpecChanged})
				p.Start = append(p.Start, Start{Name: c.Name, Restarts: restarts(&latest) + 1, Reason: ReasonSpecChanged})
			} else if g, bad := in.Unhealthy[latest.ID]; bad {
				p.kill(Kill{Container: latest, Grace: g, Reason: ReasonUnhealthy})
			}
		case latest.State == runtimeadapter.StateUnknown:
			if Adoptable(&latest) && !changed {
				p.Start = append(p.Start, Start{Name: c.Name, Restarts: restarts(&latest), Reason: ReasonAdopt, AdoptID: latest.ID})
			} else if changed {
				p.kill(Kill{Container: latest, Grace: podGrace, Reason: ReasonSpecChanged})
				p.Start = append(p.Start, Start{Name: c.Name, Restarts: restarts(&latest) + 1, Reason: ReasonSpecChanged})
			}
			// paused, restarting, removing: leave it; the next relist tells.
		default: // exited
			if !ContainerRestarts(pod, c, latest.ExitCode) {
				break
			}
			if changed {
				p.Start = append(p.Start, Start{Name: c.Name, Restarts: restarts(&latest) + 1, Reason: ReasonSpecChanged})
				break
			}
			next := Start{Name: c.Name, Restarts: restarts(&latest) + 1, Reason: ReasonRestart}
			if sp.use != nil { // a restart is one start call
				next.AdoptID, next.Standby = sp.use.ID, true
			}
			p.restartAfterBackoff(in, h, c.Name, latest, next)
		}
		_, waiting := p.Waiting[c.Name]
		if sp.on && sp.use == nil && len(p.Start) == starts && !changed && wantStandby(pod, &latest, waiting) {
			p.Standby = append(p.Standby, standbyCreate(c.Name, restarts(&latest)+1, sp.config))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(g.standbys)) {
		if spec[name] == nil {
			p.DropStandby = append(p.DropStandby, g.standbys[name]...)
		}
	}
	if in.GC {
		p.Remove = append(p.Remove, olderDead(pod, g)...)
	}
	return p
}

// restartAfterBackoff starts next now if the CrashLoopBackOff deadline of
// the exited instance dead (the recorded exit) has passed, recording the
// restart (the back-off advances), else records the wait and the requeue
// time.
func (p *Plan) restartAfterBackoff(in Input, h *history, name string, dead runtimeadapter.Container, next Start) {
	if p.backoffDone(in, h, name, dead) {
		p.Start = append(p.Start, next)
	}
}

// backoffDone reports whether the CrashLoopBackOff deadline of the exited
// instance dead of container name has passed, recording the restart (the
// back-off advances); if not, it records the wait and the requeue time.
func (p *Plan) backoffDone(in Input, h *history, name string, dead runtimeadapter.Container) bool {
	rec, _ := h.recs.Get(name)
	if rec.Exit.ContainerID != dead.ID { // observe records every newest exit; be safe
		if dead.FinishedAt.IsZero() {
			dead.FinishedAt = in.Now
		}
		rec = h.policy.Observe(rec, exitOf(&dead))
	}
	at := rec.RestartAt
	if !in.Now.Before(at) {
		h.set(name, h.policy.Restart(rec, in.Now))
		return true
	}
	h.set(name, rec)
	p.Waiting[name] = Waiting{Reason: ReasonCrashLoop, Message: fmt.Sprintf(
		"back-off %s restarting failed container=%s pod=%s_%s(%s)",
		rec.Delay().Round(time.Second), name, in.Pod.Name, in.Pod.Namespace, in.Pod.UID)}
	if p.RequeueAt.IsZero() || at.Before(p.RequeueAt) {
		p.RequeueAt = at
	}
	return false
}

// initContainers plans the init containers in the running sandbox sb:
// one at a time, in order, each to exit 0; a failure is retried after
// CrashLoopBackOff (restartPolicy Never: see podDone). It reports whether
// every init container has succeeded, so the app containers may run.
func (p *Plan) initContainers(in Input, g grouped, sb *runtimeadapter.Container, h *history) bool {
	pod := in.Pod
	for _, ic := range pod.Spec.InitContainers {
		insts := g.initsOf(ic.Name, sb.ID)
		if len(insts) == 0 {
			p.Start = append(p.Start, Start{Name: ic.Name, Init: true, Restarts: g.nextAttempt(ic.Name), Reason: ReasonInit})
			return false
		}
		for _, extra := range insts[1:] {
			if isLive(&extra) {
				p.kill(Kill{Container: extra, Grace: GracePeriod(pod), Reason: ReasonDuplicate})
			}
		}
		latest := insts[0]
		if IsSidecar(&ic) {
			if !p.sidecar(in, g, h, &ic, latest, appsCreated(pod, g, sb)) {
				return false
			}
			continue
		}
		switch latest.State {
		case runtimeadapter.StateRunning:
			return false // wait for it to finish
		case runtimeadapter.StateUnknown:
			if Adoptable(&latest) {
				p.Start = append(p.Start, Start{Name: ic.Name, Init: true, Restarts: restarts(&latest), Reason: ReasonAdopt, AdoptID: latest.ID})
			}
			return false
		}
		if latest.ExitCode == 0 {
			continue
		}
		if pod.Spec.RestartPolicy == v1.RestartPolicyNever {
			return false // podDone makes the pod Failed
		}
		p.restartAfterBackoff(in, h, ic.Name, latest, Start{Name: ic.Name, Init: true, Restarts: g.nextAttempt(ic.Name), Reason: ReasonRestart})
		return false
	}
	return true
}

// sidecar plans the sidecar ic whose newest instance in the sandbox is
// latest, as the kubelet's computeInitContainerActions: kept running,
// restarted after CrashLoopBackOff whatever the pod's restartPolicy,
// replaced on a spec change, killed when its liveness or startup probe
// fails. It reports whether the init containers after it may go on: once
// it runs and its startup probe (if any) passed, or at once when the pod
// was initialized already (its app containers were created in this
// sandbox), so a sidecar's restart never holds the apps.
func (p *Plan) sidecar(in Input, g grouped, h *history, ic *v1.Container, latest runtimeadapter.Container, initialized bool) bool {
	next := g.nextAttempt(ic.Name)
	changed := labelHash(&latest) != ContainerHash(ic)
	switch latest.State {
	case runtimeadapter.StateRunning:
		if changed {
			p.kill(Kill{Container: latest, Grace: GracePeriod(in.Pod), Reason: ReasonSpecChanged})
			p.Start = append(p.Start, Start{Name: ic.Name, Init: true, Restarts: next, Reason: ReasonSpecChanged})
			return initialized
		}
		if gr, bad := in.Unhealthy[latest.ID]; bad {
			p.kill(Kill{Container: latest, Grace: gr, Reason: ReasonUnhealthy})
			return initialized
		}
		return initialized || ic.StartupProbe == nil || in.Started[latest.ID]
	case runtimeadapter.StateUnknown:
		if Adoptable(&latest) {
			p.Start = append(p.Start, Start{Name: ic.Name, Init: true, Restarts: restarts(&latest), Reason: ReasonAdopt, AdoptID: latest.ID})
		}
		return initialized
	}
	if changed {
		p.Start = append(p.Start, Start{Name: ic.Name, Init: true, Restarts: next, Reason: ReasonSpecChanged})
		return initialized
	}
	p.restartAfterBackoff(in, h, ic.Name, latest, Start{Name: ic.Name, Init: true, Restarts: next, Reason: ReasonRestart})
	return initialized
}

// appsCreated: an app container of pod was created in the sandbox sb
// (created at or after it, or live): the pod was initialized, as the
// kubelet's hasAnyRegularContainerCreated.
func appsCreated(pod *v1.Pod, g grouped, sb *runtimeadapter.Container) bool {
	for _, c := range pod.Spec.Containers {
		for _, inst := range g.apps[c.Name] {
			if g.recorded[inst.ID] || g.stale(&inst) {
				continue
			}
			if isLive(&inst) || (!sb.CreatedAt.IsZero() && !inst.CreatedAt.Before(sb.CreatedAt)) {
				return true
			}
		}
	}
	return false
}

// removal: stop every container (apps first, sandboxes last) and remove
// them all; with nothing left, the pod is terminated.
func removal(g grouped) Plan {
	p := Plan{Waiting: map[string]Waiting{}}
	for _, name := range append(append([]string(nil), g.initNames...), g.names...) {
		cs := g.apps[name]
		if cs == nil {
			cs = g.inits[name]
		}
		for _, c := range cs {
			if isLive(&c) {
				p.kill(Kill{Container: c, Grace: grace(&c), Reason: ReasonPodRemoved})
			}
			p.Remove = append(p.Remove, c)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(g.standbys)) {
		p.Remove = append(p.Remove, g.standbys[name]...)
	}
	for _, s := range g.sandboxes {
		if isLive(&s) {
			p.kill(Kill{Container: s, Grace: grace(&s), Reason: ReasonPodRemoved})
		}
		p.Remove = append(p.Remove, s)
	}
	p.Terminated = len(p.Remove) == 0
	return p
}

// olderDead lists exited instances nobody needs (a start that failed is
// one): for each spec container (and sidecar) every exited instance but
// the newest exited one (kept for `logs --previous` and lastState), and
// every exited sandbox but the newest. Recorded exits whose instance is
// gone are not in the runtime to remove.
func olderDead(pod *v1.Pod, g grouped) []runtimeadapter.Container {
	var out []runtimeadapter.Container
	side := sidecars(pod)
	for _, c := range pod.Spec.Containers {
		keptDead := false
		for _, inst := range g.apps[c.Name] {
			if inst.State != runtimeadapter.StateExited {
				continue
			}
			if keptDead && !g.recorded[inst.ID] {
				out = append(out, inst)
			}
			keptDead = true
		}
	}
	for _, name := range g.initNames {
		keptDead := false
		for i, inst := range g.inits[name] {
			if side[name] { // as an app: its newest exit is kept beside a running instance
				if inst.State == runtimeadapter.StateExited {
					if keptDead && !g.recorded[inst.ID] {
						out = append(out, inst)
					}
					keptDead = true
				}
				continue
			}
			if i > 0 && inst.State == runtimeadapter.StateExited && !g.recorded[inst.ID] {
				out = append(out, inst)
			}
		}
	}
	for i, s := range g.sandboxes {
		if i > 0 && s.State == runtimeadapter.StateExited {
			out = append(out, s)
		}
	}
	return out
}

// podDone: every spec container has exited and none will be restarted
// (ContainerRestarts: under the pod's Always none is done unless its own
// restartPolicy or rules say so); or, under Never, an init container
// failed in the current sandbox (the pod fails, as the kubelet).
func podDone(pod *v1.Pod, g grouped) bool {
	if pod.Spec.RestartPolicy == v1.RestartPolicyNever && initFailed(pod, g) {
		return true
	}
	for _, c := range pod.Spec.Containers {
		insts := g.apps[c.Name]
		if len(insts) == 0 || insts[0].State != runtimeadapter.StateExited || g.stale(&insts[0]) {
			return false
		}
		if ContainerRestarts(pod, &c, insts[0].ExitCode) {
			return false
		}
	}
	return true
}

// initFailed: an init container's newest instance (in any sandbox, so a
// failed pod stays failed once its sandbox is stopped) exited non-zero.
func initFailed(pod *v1.Pod, g grouped) bool {
	for _, ic := range pod.Spec.InitContainers {
		if IsSidecar(&ic) {
			continue // a sidecar's exit never fails the pod
		}
		insts := g.inits[ic.Name]
		if len(insts) > 0 && insts[0].State == runtimeadapter.StateExited && insts[0].ExitCode != 0 &&
			!g.stale(&insts[0]) && !RestartsAll(&ic, insts[0].ExitCode) {
			return true
		}
	}
	return false
}

func labelHash(c *runtimeadapter.Container) string {
	return c.Labels[runtimeadapter.LabelContainerHash]
}

// HasGarbage reports whether a GC sync (Input.GC) would remove exited
// instances of pod's containers: the pod actor sets its GC timer only
// then, so that an idle pod has no timer.
func HasGarbage(pod *v1.Pod, cs []runtimeadapter.Container) bool {
	exited := 0
	for i := range cs {
		if cs[i].State == runtimeadapter.StateExited || startFailed(&cs[i]) {
			exited++
		}
	}
	if exited < 2 {
		return false // olderDead keeps the newest exited instance of each
	}
	return len(olderDead(pod, view(pod, cs, nil))) > 0
}

// restartAllTrigger finds the exit that restarts every container of the
// pod (RestartsAll): the newest instance of an init container in the
// running sandbox sb, or of an app container, exited since the pod last
// restarted all its containers, whose rules ask for it. Each exit asks
// once: the restart makes it stale.
func restartAllTrigger(pod *v1.Pod, g grouped, sb *runtimeadapter.Container) (string, runtimeadapter.Container, bool) {
	asks := func(c *v1.Container, insts []runtimeadapter.Container) bool {
		return len(insts) > 0 && insts[0].State == runtimeadapter.StateExited && !g.stale(&insts[0]) && RestartsAll(c, insts[0].ExitCode)
	}
	for i := range pod.Spec.InitContainers {
		ic := &pod.Spec.InitContainers[i]
		if insts := g.initsOf(ic.Name, sb.ID); asks(ic, insts) {
			return ic.Name, insts[0], true
		}
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if insts := g.apps[c.Name]; asks(c, insts) {
			return c.Name, insts[0], true
		}
	}
	return "", runtimeadapter.Container{}, false
}
