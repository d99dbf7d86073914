package podstate

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/internal/probe"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// probes is what the pod's probes said, by container instance ID, and
// the spec its probe children were made for.
type probes struct {
	spec          *v1.Pod // the spec the probe children were made for
	dirty         bool    // containers observed since the children were told
	unhealthy     map[string]time.Duration
	killMessages  map[string]string // container ID → the Killing event's message (a failed probe)
	ready         map[string]bool
	startupPassed map[string]bool
}

// ProbeTarget is what a probe child needs of its container's newest
// instance.
type ProbeTarget struct {
	ContainerID   string
	Running       bool
	StartedAt     time.Time
	Host          string // pod IP, or 127.0.0.1 for hostNetwork pods
	StartupPassed bool   // for liveness and readiness workers
}

// spawnProbes has one probe child made per container and probe kind of
// the spec, replacing the children of an older spec unless its probes are
// the same.
func (p *Pod) spawnProbes(out *effects) {
	if p.pod == nil || p.pod == p.probes.spec {
		return
	}
	if p.probes.spec != nil && equality.Semantic.DeepEqual(probeSpecs(p.probes.spec), probeSpecs(p.pod)) {
		p.probes.spec = p.pod
		return
	}
	p.probes.spec = p.pod
	out.add(SpawnProbes{Pod: p.pod})
	p.probes.dirty = true
}

func probeSpecs(p *v1.Pod) []any {
	var out []any
	for _, c := range p.Spec.Containers {
		out = append(out, c.Name, c.LivenessProbe, c.ReadinessProbe, c.StartupProbe, c.Ports)
	}
	for _, c := range p.Spec.InitContainers {
		if podsync.IsSidecar(&c) { // sidecars are probed as app containers are
			out = append(out, c.Name, c.LivenessProbe, c.ReadinessProbe, c.StartupProbe, c.Ports)
		}
	}
	return out
}

func (p *Pod) stopProbes(out *effects) {
	p.probes.spec = nil
	out.add(StopProbes{})
}

// updateProbes tells the probe children the current instance of their
// containers (after new observations), and forgets the probe states of
// instances that are gone.
func (p *Pod) updateProbes(out *effects) {
	if !p.probes.dirty {
		return
	}
	p.probes.dirty = false
	latest := map[string]runtimeadapter.Container{}
	present := map[string]bool{}
	host := ""
	var sbCreated time.Time
	for i := range p.view.containers {
		h := &p.view.containers[i]
		c := h.container()
		present[c.ID] = true
		b := base(p.view.containers, i)
		name := h.labels.knownOn(knownContainerName, b)
		switch runtimeadapter.ContainerType(h.labels.knownOn(knownContainerType, b)) {
		case runtimeadapter.TypeSandbox:
			if c.State == runtimeadapter.StateRunning && !c.CreatedAt.Before(sbCreated) {
				host, sbCreated = c.IP, c.CreatedAt
			}
		case runtimeadapter.TypeApp, runtimeadapter.TypeInit: // init: a sidecar's probes (others have none)
			if old, ok := latest[name]; !ok || c.CreatedAt.After(old.CreatedAt) {
				latest[name] = c
			}
		}
	}
	if p.pod != nil && p.pod.Spec.HostNetwork {
		host = "127.0.0.1"
	}
	ps := &p.probes
	for _, m := range []map[string]bool{ps.ready, ps.startupPassed} {
		for id := range m {
			if !present[id] {
				delete(m, id)
			}
		}
	}
	for id := range ps.unhealthy {
		if !present[id] {
			delete(ps.unhealthy, id)
			delete(ps.killMessages, id)
		}
	}
	targets := make(map[string]ProbeTarget, len(latest))
	for name, c := range latest {
		targets[name] = ProbeTarget{ContainerID: c.ID, Running: c.State == runtimeadapter.StateRunning,
			StartedAt: c.StartedAt, Host: host, StartupPassed: ps.startupPassed[c.ID]}
	}
	out.add(ProbeTargets{Targets: targets})
}

// probeChanged takes a probe's new state: a failed liveness or startup
// probe kills the container (restarted per restartPolicy), readiness sets
// ready, a passed startup probe lets liveness and readiness begin. It
// reports whether the pod must be synced.
func (p *Pod) probeChanged(e ProbeChanged) bool {
	ch := e.Change
	if ch.ContainerID == "" {
		return false
	}
	ps := &p.probes
	// Each failed probe run has had its Unhealthy event (the probe actor).
	switch {
	case ch.Kind == probe.Readiness:
		put(&ps.ready, ch.ContainerID, ch.State == probe.Success)
	case ch.Kind == probe.Startup && ch.State == probe.Success:
		put(&ps.startupPassed, ch.ContainerID, true)
		ps.dirty = true // liveness and readiness may begin
	case ch.Kill() && p.pod != nil:
		var pr *v1.Probe
		msg := ProbeKillMessage(e.Container, ch.Kind, p.pod.Spec.RestartPolicy)
		for _, c := range append(append([]v1.Container(nil), p.pod.Spec.Containers...), p.pod.Spec.InitContainers...) {
			if c.Name == e.Container {
				if podsync.IsSidecar(&c) { // as the kubelet words it; restarted whatever the pod's policy
					msg = fmt.Sprintf("Init container %s failed %s probe", e.Container, ch.Kind)
				}
				pr = c.LivenessProbe
				if ch.Kind == probe.Startup {
					pr = c.StartupProbe
				}
			}
		}
		put(&ps.unhealthy, ch.ContainerID, probe.KillGrace(pr, podsync.GracePeriod(p.pod)))
		put(&ps.killMessages, ch.ContainerID, msg)
	default:
		return false
	}
	return true
}

// ProbeKillMessage is the kubelet's Killing message for a container whose
// liveness or startup probe failed: restarted unless restartPolicy is
// Never.
func ProbeKillMessage(name string, kind probe.Kind, policy v1.RestartPolicy) string {
	msg := fmt.Sprintf("Container %s failed %s probe", name, kind)
	if policy != v1.RestartPolicyNever {
		msg += ", will be restarted"
	}
	return msg
}
