package podsync

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// ContainerIDScheme prefixes container IDs in statuses, as Kubernetes'
// "<runtime>://<id>", when the runtime does not name itself: Docker's.
const ContainerIDScheme = "docker://"

// ContainerID is a container's ID as a pod status shows it:
// "<runtimeType>://<id>" (runtimeadapter.Typed), ContainerIDScheme and id
// when runtimeType is "".
func ContainerID(runtimeType, id string) string {
	if runtimeType == "" {
		return ContainerIDScheme + id
	}
	return runtimeType + "://" + id
}

// Status computes the pod's status from its spec, its containers and the
// plan last computed for them (for waiting reasons, and the recorded exits
// of containers whose instance is gone, which show as they last were; a
// start that failed shows as terminated with StartError). Phase follows the
// kubelet's rules: any container that has never run makes the pod Pending;
// otherwise a running container makes it Running; with all stopped,
// restartPolicy decides between Running (Always, or OnFailure with a
// failure), Succeeded (all exited 0) and Failed (Never with a failure).
func Status(pod *v1.Pod, containers []runtimeadapter.Container, plan Plan) v1.PodStatus {
	return StatusWith(pod, containers, plan, Probes{})
}

// Probes are the probe states a pod actor knows, by container instance ID.
type Probes struct {
	// Ready: the readiness probe's state (containers without one are
	// ready while they run).
	Ready map[string]bool
	// Started: the startup probe passed (containers without one are
	// started while they run).
	Started map[string]bool
}

// StatusWith is Status with the containers' probe states: readiness sets
// a container's ready (and so ContainersReady and Ready), the startup probe
// its started.
func StatusWith(pod *v1.Pod, containers []runtimeadapter.Container, plan Plan, probes Probes) v1.PodStatus {
	return StatusOn("", pod, containers, plan, probes)
}

// StatusOn is StatusWith on a runtime of type runtimeType (see
// ContainerID): the containers' IDs read "<runtimeType>://<id>".
func StatusOn(runtimeType string, pod *v1.Pod, containers []runtimeadapter.Container, plan Plan, probes Probes) v1.PodStatus {
	g := view(pod, containers, plan.Records)
	st := v1.PodStatus{}
	var sb *runtimeadapter.Container
	if len(g.sandboxes) > 0 {
		sb = &g.sandboxes[0]
	}
	sbRunning := sb != nil && sb.State == runtimeadapter.StateRunning
	if sbRunning && !pod.Spec.HostNetwork && sb.IP != "" {
		st.PodIP = sb.IP
		st.PodIPs = []v1.PodIP{{IP: sb.IP}}
	}
	starting := map[string]bool{}
	for _, s := range plan.Start {
		starting[s.Name] = true
	}

	// Init containers: statuses of their instances in the current sandbox
	// (a new sandbox runs them again); Initialized once all exited 0.
	initialized := true
	initFailedNever := false
	sidecarsReady := true
	for _, ic := range pod.Spec.InitContainers {
		var insts []runtimeadapter.Container
		if sb != nil {
			insts = g.initsOf(ic.Name, sb.ID)
		}
		if len(insts) == 0 && len(g.inits[ic.Name]) > 0 && plan.Done {
			insts = g.inits[ic.Name] // a finished pod's sandbox is gone: show the last run
		}
		cs := containerStatus(runtimeType, &ic, insts, plan.Waiting[ic.Name], starting[ic.Name])
		if IsSidecar(&ic) {
			// A sidecar is started while it runs and its startup probe (if
			// any) passed, ready when started and its readiness probe (if
			// any) says so; its exit never fails the pod.
			started := cs.State.Running != nil && (ic.StartupProbe == nil || probes.Started[insts[0].ID])
			cs.Started = &started
			cs.Ready = started && (ic.ReadinessProbe == nil || probes.Ready[insts[0].ID])
			st.InitContainerStatuses = append(st.InitContainerStatuses, cs)
			if !started {
				initialized = false
			}
			if !cs.Ready {
				sidecarsReady = false
			}
			continue
		}
		cs.Ready = cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0
		if cs.State.Running != nil {
			f := false
			cs.Started = &f
		}
		st.InitContainerStatuses = append(st.InitContainerStatuses, cs)
		if !cs.Ready {
			initialized = false
		}
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 && pod.Spec.RestartPolicy == v1.RestartPolicyNever {
			initFailedNever = true
		}
	}
	if !initialized && !initFailedNever && sb != nil && len(sidecars(pod)) > 0 && appsCreated(pod, g, sb) {
		// The pod was initialized in this sandbox: a sidecar restarting
		// since does not make it Pending again (as the kubelet).
		initialized = true
	}

	var waiting, running, stopped, succeeded, failed int
	allReady := true
	for _, c := range pod.Spec.Containers {
		cs := containerStatus(runtimeType, &c, g.apps[c.Name], plan.Waiting[c.Name], starting[c.Name])
		if cs.State.Running != nil {
			id := g.apps[c.Name][0].ID
			if c.StartupProbe != nil {
				started := probes.Started[id]
				cs.Started = &started
			}
			if c.ReadinessProbe != nil || (c.StartupProbe != nil && !*cs.Started) {
				cs.Ready = probes.Ready[id] && (c.StartupProbe == nil || *cs.Started)
				if c.ReadinessProbe == nil {
					cs.Ready = *cs.Started
				}
			}
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
		if !cs.Ready {
			allReady = false
		}
		switch {
		case cs.State.Running != nil:
			running++
		case cs.State.Terminated != nil:
			stopped++
			if cs.State.Terminated.ExitCode == 0 {
				succeeded++
			} else {
				failed++
			}
		case cs.LastTerminationState.Terminated != nil:
			stopped++
			if cs.LastTerminationState.Terminated.ExitCode == 0 {
				succeeded++
			} else {
				failed++
			}
		default:
			waiting++
		}
	}
	switch {
	case waiting > 0:
		st.Phase = v1.PodPending
	case running > 0:
		st.Phase = v1.PodRunning
	case stopped > 0:
		switch pod.Spec.RestartPolicy {
		case v1.RestartPolicyNever:
			if failed > 0 {
				st.Phase = v1.PodFailed
			} else {
				st.Phase = v1.PodSucceeded
			}
		case v1.RestartPolicyOnFailure:
			if failed > 0 {
				st.Phase = v1.PodRunning
			} else {
				st.Phase = v1.PodSucceeded
			}
		default:
			st.Phase = v1.PodRunning
		}
	default:
		st.Phase = v1.PodPending
	}
	if !initialized {
		st.Phase = v1.PodPending
		if initFailedNever {
			st.Phase = v1.PodFailed
		}
	}
	if plan.Done {
		if failed > 0 || initFailedNever {
			st.Phase = v1.PodFailed
		} else {
			st.Phase = v1.PodSucceeded
		}
	}
	cond := func(t v1.PodConditionType, ok bool) v1.PodCondition {
		s := v1.ConditionFalse
		if ok {
			s = v1.ConditionTrue
		}
		return v1.PodCondition{Type: t, Status: s}
	}
	ready := allReady && sidecarsReady && initialized && len(pod.Spec.Containers) > 0
	st.Conditions = []v1.PodCondition{
		cond(v1.PodReadyToStartContainers, sbRunning),
		cond(v1.PodInitialized, initialized),
		cond(v1.ContainersReady, ready),
		cond(v1.PodReady, ready),
	}
	return st
}

func terminated(runtimeType string, c *runtimeadapter.Container) *v1.ContainerStateTerminated {
	reason := c.Reason
	if reason == "" {
		reason = "Error"
		if c.ExitCode == 0 {
			reason = "Completed"
		}
	}
	return &v1.ContainerStateTerminated{
		ExitCode:    int32(c.ExitCode),
		Reason:      reason,
		Message:     c.Error,
		StartedAt:   metav1.NewTime(c.StartedAt),
		FinishedAt:  metav1.NewTime(c.FinishedAt),
		ContainerID: ContainerID(runtimeType, c.ID),
	}
}

func containerStatus(runtimeType string, spec *v1.Container, insts []runtimeadapter.Container, w Waiting, starting bool) v1.ContainerStatus {
	cs := v1.ContainerStatus{Name: spec.Name, Image: spec.Image}
	if len(insts) == 0 {
		cs.State.Waiting = &v1.ContainerStateWaiting{Reason: "ContainerCreating"}
		if w.Reason != "" { // e.g. ErrImagePull, ImagePullBackOff
			cs.State.Waiting = &v1.ContainerStateWaiting{Reason: w.Reason, Message: w.Message}
		}
		return cs
	}
	latest := &insts[0]
	cs.RestartCount = int32(restarts(latest))
	cs.ContainerID = ContainerID(runtimeType, latest.ID)
	var prev *runtimeadapter.Container
	if len(insts) > 1 && insts[1].State == runtimeadapter.StateExited {
		prev = &insts[1]
	}
	switch latest.State {
	case runtimeadapter.StateRunning:
		cs.State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(latest.StartedAt)}
		cs.Ready = true
		t := true
		cs.Started = &t
		if prev != nil {
			cs.LastTerminationState.Terminated = terminated(runtimeType, prev)
		}
	case runtimeadapter.StateExited:
		if w.Reason != "" || starting {
			reason, msg := w.Reason, w.Message
			if reason == "" {
				reason = "ContainerCreating"
			}
			cs.State.Waiting = &v1.ContainerStateWaiting{Reason: reason, Message: msg}
			cs.LastTerminationState.Terminated = terminated(runtimeType, latest)
		} else {
			cs.State.Terminated = terminated(runtimeType, latest)
			if prev != nil {
				cs.LastTerminationState.Terminated = terminated(runtimeType, prev)
			}
		}
	default:
		cs.State.Waiting = &v1.ContainerStateWaiting{Reason: "ContainerCreating"}
		if prev != nil {
			cs.LastTerminationState.Terminated = terminated(runtimeType, prev)
		}
	}
	return cs
}
