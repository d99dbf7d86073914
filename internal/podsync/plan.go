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
	Restarts int // its restart count, also its attempt in the runtime name
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
)

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
}

func group(cs []runtimeadapter.Container) grouped {
	g := grouped{apps: map[string][]runtimeadapter.Container{}}
	for _, c := range cs {
		m, err := runtimeadapter.ParseMeta(c.Labels)
		if err != nil {
			continue // not ours: never touched
		}
		if m.Type == runtimeadapter.TypeSandbox {
			g.sandboxes = append(g.sandboxes, c)
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
	sort.Strings(g.names)
	return g
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

	// Instances of names no longer in the spec go, whatever else happens.
	for _, name := range g.names {
		if spec[name] != nil {
			continue
		}
		for _, c := range g.apps[name] {
			if isLive(&c) {
				p.Kill = append(p.Kill, Kill{Container: c, Grace: podGrace, Reason: ReasonNotInSpec})
			}
			p.Remove = append(p.Remove, c)
		}
	}

	if podDone(pod, g) {
		p.Done = true
		for _, s := range g.sandboxes {
			if isLive(&s) {
				p.Kill = append(p.Kill, Kill{Container: s, Grace: grace(&s), Reason: ReasonPodCompleted})
			}
		}
		p.Remove = append(p.Remove, olderDead(pod, g)...)
		return p
	}

	var sb *runtimeadapter.Container
	if len(g.sandboxes) > 0 {
		sb = &g.sandboxes[0]
	}
	sbOK := sb != nil && sb.State == runtimeadapter.StateRunning && labelHash(sb) == SandboxHash(pod)

	if !sbOK {
		// A new sandbox: every running app container is killed and the
		// containers that should run start again inside the new one.
		for _, c := range pod.Spec.Containers {
			for _, inst := range g.apps[c.Name] {
				if isLive(&inst) {
					p.Kill = append(p.Kill, Kill{Container: inst, Grace: podGrace, Reason: ReasonSandboxChanged})
				}
			}
		}
		// A sandbox created but never started (a crash or a lost answer
		// between create and start) is adopted, not replaced.
		adopt := sb != nil && sb.State == runtimeadapter.StateUnknown && sb.RawState == "created" &&
			labelHash(sb) == SandboxHash(pod)
		for _, s := range g.sandboxes {
			if isLive(&s) && !(adopt && s.ID == sb.ID) {
				p.Kill = append(p.Kill, Kill{Container: s, Grace: grace(&s), Reason: ReasonSandboxChanged})
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
		p.Remove = append(p.Remove, olderDead(pod, g)...)
		return p
	}

	p.SandboxID = sb.ID
	for _, s := range g.sandboxes[1:] {
		if isLive(&s) {
			p.Kill = append(p.Kill, Kill{Container: s, Grace: grace(&s), Reason: ReasonDuplicate})
		}
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
				p.Kill = append(p.Kill, Kill{Container: extra, Grace: podGrace, Reason: ReasonDuplicate})
			}
		}
		latest := insts[0]
		changed := labelHash(&latest) != ContainerHash(c)
		switch {
		case latest.State == runtimeadapter.StateRunning:
			if changed {
				p.Kill = append(p.Kill, Kill{Container: latest, Grace: podGrace, Reason: ReasonSpecChanged})
				p.Start = append(p.Start, Start{Name: c.Name, Restarts: restarts(&latest) + 1, Reason: ReasonSpecChanged})
			}
		case latest.State == runtimeadapter.StateUnknown:
			if latest.RawState == "created" && !changed {
				p.Start = append(p.Start, Start{Name: c.Name, Restarts: restarts(&latest), Reason: ReasonAdopt, AdoptID: latest.ID})
			} else if changed {
				p.Kill = append(p.Kill, Kill{Container: latest, Grace: podGrace, Reason: ReasonSpecChanged})
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
			dead := latest
			if dead.FinishedAt.IsZero() {
				dead.FinishedAt = in.Now
			}
			at := bo.RestartAt(pod, c.Name, dead)
			if !in.Now.Before(at) {
				p.Start = append(p.Start, Start{Name: c.Name, Restarts: restarts(&latest) + 1, Reason: ReasonRestart})
				break
			}
			p.Waiting[c.Name] = Waiting{Reason: ReasonCrashLoop, Message: fmt.Sprintf(
				"back-off %s restarting failed container=%s pod=%s_%s(%s)",
				at.Sub(dead.FinishedAt).Round(time.Second), c.Name, pod.Name, pod.Namespace, pod.UID)}
			if p.RequeueAt.IsZero() || at.Before(p.RequeueAt) {
				p.RequeueAt = at
			}
		}
	}
	p.Remove = append(p.Remove, olderDead(pod, g)...)
	return p
}

// removal: stop every container (apps first, sandboxes last) and remove
// them all; with nothing left, the pod is terminated.
func removal(g grouped) Plan {
	p := Plan{Waiting: map[string]Waiting{}}
	for _, name := range g.names {
		for _, c := range g.apps[name] {
			if isLive(&c) {
				p.Kill = append(p.Kill, Kill{Container: c, Grace: grace(&c), Reason: ReasonPodRemoved})
			}
			p.Remove = append(p.Remove, c)
		}
	}
	for _, s := range g.sandboxes {
		if isLive(&s) {
			p.Kill = append(p.Kill, Kill{Container: s, Grace: grace(&s), Reason: ReasonPodRemoved})
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
	for i, s := range g.sandboxes {
		if i > 0 && s.State == runtimeadapter.StateExited {
			out = append(out, s)
		}
	}
	return out
}

// podDone: under OnFailure or Never, every spec container has exited and
// none will be restarted.
func podDone(pod *v1.Pod, g grouped) bool {
	if pod.Spec.RestartPolicy != v1.RestartPolicyNever && pod.Spec.RestartPolicy != v1.RestartPolicyOnFailure {
		return false
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

func labelHash(c *runtimeadapter.Container) string {
	return c.Labels[runtimeadapter.LabelContainerHash]
}
