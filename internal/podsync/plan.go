// Package podsync is the pure core of a pod actor: from a pod's spec, the
// containers the runtime has for it and the time, it computes what to do
// (Compute) and what the pod's status is (Status). It makes no runtime
// calls and keeps no state; the backoff record it consults is passed in.
// The shape follows the kubelet's computePodActions: a plan, then steps.
package podsync

import (
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// Backoff answers when an exited container may be replaced
// (CrashLoopBackOff). Implementations must be idempotent per exited
// instance ID: asking twice about the same exit gives the same answer.
type Backoff interface {
	RestartAt(pod *v1.Pod, name string, dead runtimeadapter.Container) time.Time
}

// NoBackoff restarts at once.
type NoBackoff struct{}

// RestartAt returns the zero time.
func (NoBackoff) RestartAt(*v1.Pod, string, runtimeadapter.Container) time.Time { return time.Time{} }

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
	Backoff    Backoff // nil means NoBackoff
	// Unhealthy lists running container instances (by ID) whose liveness
	// or startup probe failed, with the grace to kill them with (the
	// probe's terminationGracePeriodSeconds, else the pod's). They are
	// killed and then restarted per restartPolicy with CrashLoopBackOff.
	Unhealthy map[string]time.Duration
	// GC: also remove exited instances nobody needs (all but the newest
	// per container). The pod actor sets it once a minute, as the
	// kubelet's container GC; removal of a removed pod never waits for it.
	GC bool
}

// Kill stops a running (or half-created) container with a grace period.
type Kill struct {
	Container runtimeadapter.Container
	Grace     time.Duration
	Reason    string
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
	// CreateSandbox nor AdoptSandboxID is set.
	SandboxID string
	Start     []Start
	Remove    []runtimeadapter.Container
	// RequeueAt, when set, is the earliest time a sync is due again (a
	// CrashLoopBackOff deadline). The actor sets a timer for it.
	RequeueAt time.Time
	Waiting   map[string]Waiting
	// Done: the pod has finished (restartPolicy OnFailure or Never and
	// nothing will run again).
	Done bool
	// Terminated: the pod was removed and none of its containers is left.
	Terminated bool
}

// Empty reports whether the plan has no runtime work.
func (p *Plan) Empty() bool {
	return len(p.Kill) == 0 && !p.CreateSandbox && p.AdoptSandboxID == "" && len(p.Start) == 0 && len(p.Remove) == 0
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
)

// LabelSandboxID, on init containers, names the sandbox they ran in.
const LabelSandboxID = "io.actorlet.sandbox.id"

func isLive(c *runtimeadapter.Container) bool { return c.State != runtimeadapter.StateExited }

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

func restarts(c *runtimeadapter.Container) int {
	m, _ := runtimeadapter.ParseMeta(c.Labels)
	return m.RestartCount
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
		if _, ok := g.apps[m.ContainerName]; !ok {
			g.names = append(g.names, m.ContainerName)
		}
		g.apps[m.ContainerName] = append(g.apps[m.ContainerName], c)
	}
	byNewest(g.sandboxes)
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

// initsOf returns the instances of init container name that ran in the
// sandbox sandboxID, newest first: init containers run again, all of them
// in order, in every new sandbox.
func (g grouped) initsOf(name, sandboxID string) []runtimeadapter.Container {
	var out []runtimeadapter.Container
	for _, c := range g.inits[name] {
		if sandboxID != "" && c.Labels[LabelSandboxID] == sandboxID {
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
	p := compute(in)
	p.Remove = uniqueByID(p.Remove)
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

func compute(in Input) Plan {
	p := Plan{Waiting: map[string]Waiting{}}
	g := group(in.Containers)
	if in.Pod == nil {
		return removal(g)
	}
	pod := in.Pod
	bo := in.Backoff
	if bo == nil {
		bo = NoBackoff{}
	}
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
		if in.GC {
			p.Remove = append(p.Remove, olderDead(pod, g)...)
		}
		return p
	}

	sbOK := sb != nil && sb.State == runtimeadapter.StateRunning && labelHash(sb) == SandboxHash(pod)

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
		adopt := sb != nil && sb.State == runtimeadapter.StateUnknown && sb.RawState == "created" &&
			labelHash(sb) == SandboxHash(pod)
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
				if latest.State == runtimeadapter.StateExited && !ShouldRestart(pod.Spec.RestartPolicy, latest.ExitCode) {
					continue
				}
				p.Start = append(p.Start, Start{Name: c.Name, Restarts: restarts(&latest) + 1, Reason: ReasonSandboxChanged})
			}
		}
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
	if !p.initContainers(in, g, sb, bo) {
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
			continue
		}
		// Invariant 1: at most one live instance per container name.
		for _, extra := range insts[1:] {
			if isLive(&extra) {
				p.kill(Kill{Container: extra, Grace: podGrace, Reason: ReasonDuplicate})
			}
		}
		latest := insts[0]
		changed := labelHash(&latest) != ContainerHash(c)
		switch {
		case latest.State == runtimeadapter.StateRunning:
			if changed {
				p.kill(Kill{Container: latest, Grace: podGrace, Reason: ReasonSpecChanged})
				p.Start = append(p.Start, Start{Name: c.Name, Restarts: restarts(&latest) + 1, Reason: ReasonSpecChanged})
			} else if g, bad := in.Unhealthy[latest.ID]; bad {
				p.kill(Kill{Container: latest, Grace: g, Reason: ReasonUnhealthy})
			}
		case latest.State == runtimeadapter.StateUnknown:
			if latest.RawState == "created" && !changed {
				p.Start = append(p.Start, Start{Name: c.Name, Restarts: restarts(&latest), Reason: ReasonAdopt, AdoptID: latest.ID})
			} else if changed {
				p.kill(Kill{Container: latest, Grace: podGrace, Reason: ReasonSpecChanged})
				p.Start = append(p.Start, Start{Name: c.Name, Restarts: restarts(&latest) + 1, Reason: ReasonSpecChanged})
			}
			// paused, restarting, removing: leave it; the next relist tells.
		default: // exited
			if !ShouldRestart(pod.Spec.RestartPolicy, latest.ExitCode) {
				break
			}
			if changed {
				p.Start = append(p.Start, Start{Name: c.Name, Restarts: restarts(&latest) + 1, Reason: ReasonSpecChanged})
				break
			}
			p.restartAfterBackoff(in, bo, c.Name, latest, Start{Name: c.Name, Restarts: restarts(&latest) + 1, Reason: ReasonRestart})
		}
	}
	if in.GC {
		p.Remove = append(p.Remove, olderDead(pod, g)...)
	}
	return p
}

// restartAfterBackoff starts next now if the CrashLoopBackOff deadline of
// the exited instance dead has passed, else records the wait and the
// requeue time.
func (p *Plan) restartAfterBackoff(in Input, bo Backoff, name string, dead runtimeadapter.Container, next Start) {
	if dead.FinishedAt.IsZero() {
		dead.FinishedAt = in.Now
	}
	at := bo.RestartAt(in.Pod, name, dead)
	if !in.Now.Before(at) {
		p.Start = append(p.Start, next)
		return
	}
	p.Waiting[name] = Waiting{Reason: ReasonCrashLoop, Message: fmt.Sprintf(
		"back-off %s restarting failed container=%s pod=%s_%s(%s)",
		at.Sub(dead.FinishedAt).Round(time.Second), name, in.Pod.Name, in.Pod.Namespace, in.Pod.UID)}
	if p.RequeueAt.IsZero() || at.Before(p.RequeueAt) {
		p.RequeueAt = at
	}
}

// initContainers plans the init containers in the running sandbox sb:
// one at a time, in order, each to exit 0; a failure is retried after
// CrashLoopBackOff (restartPolicy Never: see podDone). It reports whether
// every init container has succeeded, so the app containers may run.
func (p *Plan) initContainers(in Input, g grouped, sb *runtimeadapter.Container, bo Backoff) bool {
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
		switch latest.State {
		case runtimeadapter.StateRunning:
			return false // wait for it to finish
		case runtimeadapter.StateUnknown:
			if latest.RawState == "created" {
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
		p.restartAfterBackoff(in, bo, ic.Name, latest, Start{Name: ic.Name, Init: true, Restarts: g.nextAttempt(ic.Name), Reason: ReasonRestart})
		return false
	}
	return true
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
	for _, s := range g.sandboxes {
		if isLive(&s) {
			p.kill(Kill{Container: s, Grace: grace(&s), Reason: ReasonPodRemoved})
		}
		p.Remove = append(p.Remove, s)
	}
	p.Terminated = len(p.Remove) == 0
	return p
}

// olderDead lists exited instances nobody needs: for each spec container
// every exited instance but the newest exited one (kept for
// `logs --previous` and lastState), and
// every exited sandbox but the newest.
func olderDead(pod *v1.Pod, g grouped) []runtimeadapter.Container {
	var out []runtimeadapter.Container
	for _, c := range pod.Spec.Containers {
		keptDead := false
		for _, inst := range g.apps[c.Name] {
			if inst.State != runtimeadapter.StateExited {
				continue
			}
			if keptDead {
				out = append(out, inst)
			}
			keptDead = true
		}
	}
	for _, name := range g.initNames {
		for i, inst := range g.inits[name] {
			if i > 0 && inst.State == runtimeadapter.StateExited {
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

// podDone: under OnFailure or Never, every spec container has exited and
// none will be restarted; or, under Never, an init container failed in the
// current sandbox (the pod fails, as the kubelet).
func podDone(pod *v1.Pod, g grouped) bool {
	if pod.Spec.RestartPolicy != v1.RestartPolicyNever && pod.Spec.RestartPolicy != v1.RestartPolicyOnFailure {
		return false
	}
	if pod.Spec.RestartPolicy == v1.RestartPolicyNever && initFailed(pod, g) {
		return true
	}
	for _, c := range pod.Spec.Containers {
		insts := g.apps[c.Name]
		if len(insts) == 0 || insts[0].State != runtimeadapter.StateExited {
			return false
		}
		if ShouldRestart(pod.Spec.RestartPolicy, insts[0].ExitCode) {
			return false
		}
	}
	return true
}

// initFailed: an init container's newest instance (in any sandbox, so a
// failed pod stays failed once its sandbox is stopped) exited non-zero.
func initFailed(pod *v1.Pod, g grouped) bool {
	for _, ic := range pod.Spec.InitContainers {
		insts := g.inits[ic.Name]
		if len(insts) > 0 && insts[0].State == runtimeadapter.StateExited && insts[0].ExitCode != 0 {
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
		if cs[i].State == runtimeadapter.StateExited {
			exited++
		}
	}
	if exited < 2 {
		return false // olderDead keeps the newest exited instance of each
	}
	return len(olderDead(pod, group(cs))) > 0
}
