package actors

// A pod actor's probe children: one per container and probe kind of the
// spec; what they say (ready, startup passed, a failed liveness or
// startup probe that kills the container) the pod actor keeps.

import (
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/internal/probe"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// spawnProbes makes one probe child per container and probe kind of the
// spec, replacing the children of an older spec.
func (a *podActor) spawnProbes(ctx actor.Context) {
	if a.pod == nil || a.pod == a.probedSpec {
		return
	}
	if a.probedSpec != nil && equality.Semantic.DeepEqual(probeSpecs(a.probedSpec), probeSpecs(a.pod)) {
		a.probedSpec = a.pod
		return
	}
	a.stopProbes(ctx)
	a.probedSpec = a.pod
	for i := range a.pod.Spec.Containers {
		c := &a.pod.Spec.Containers[i]
		for kind, p := range map[probe.Kind]*v1.Probe{probe.Liveness: c.LivenessProbe, probe.Readiness: c.ReadinessProbe, probe.Startup: c.StartupProbe} {
			if p == nil {
				continue
			}
			props := newProbeProps(*a.cfg, kind, p, c, c.StartupProbe != nil, a.log, a.emitter(ctx))
			put(&a.probes, c.Name+"/"+string(kind), ctx.Spawn(props))
		}
	}
	a.dirtyProbes = true
}

func probeSpecs(p *v1.Pod) []any {
	var out []any
	for _, c := range p.Spec.Containers {
		out = append(out, c.Name, c.LivenessProbe, c.ReadinessProbe, c.StartupProbe, c.Ports)
	}
	return out
}

func (a *podActor) stopProbes(ctx actor.Context) {
	for k, pid := range a.probes {
		ctx.Stop(pid)
		delete(a.probes, k)
	}
	a.probedSpec = nil
}

// updateProbes tells each probe child the current instance of its
// container (after new observations), and forgets probe states of
// instances that are gone.
func (a *podActor) updateProbes(ctx actor.Context) {
	if !a.dirtyProbes {
		return
	}
	a.dirtyProbes = false
	latest := map[string]runtimeadapter.Container{}
	present := map[string]bool{}
	host := ""
	var sbCreated time.Time
	for _, c := range a.containers {
		present[c.ID] = true
		name := c.Labels[runtimeadapter.LabelContainerName]
		switch runtimeadapter.ContainerType(c.Labels[runtimeadapter.LabelContainerType]) {
		case runtimeadapter.TypeSandbox:
			if c.State == runtimeadapter.StateRunning && !c.CreatedAt.Before(sbCreated) {
				host, sbCreated = c.IP, c.CreatedAt
			}
		case runtimeadapter.TypeApp:
			if old, ok := latest[name]; !ok || c.CreatedAt.After(old.CreatedAt) {
				latest[name] = c
			}
		}
	}
	if a.pod != nil && a.pod.Spec.HostNetwork {
		host = "127.0.0.1"
	}
	for _, m := range []map[string]bool{a.ready, a.startupPassed} {
		for id := range m {
			if !present[id] {
				delete(m, id)
			}
		}
	}
	for id := range a.unhealthy {
		if !present[id] {
			delete(a.unhealthy, id)
			delete(a.killMessages, id)
		}
	}
	for key, pid := range a.probes {
		name := key[:strings.LastIndex(key, "/")]
		c := latest[name]
		ctx.Send(pid, &probeTarget{ContainerID: c.ID, Running: c.State == runtimeadapter.StateRunning,
			StartedAt: c.StartedAt, Host: host, StartupPassed: a.startupPassed[c.ID]})
	}
}

// probeChanged takes a probe's new state: a failed liveness or startup
// probe kills the container (restarted per restartPolicy), readiness sets
// ready, a passed startup probe lets liveness and readiness begin.
func (a *podActor) probeChanged(ctx actor.Context, m *probeChanged) {
	ch := m.Change
	if ch.ContainerID == "" {
		return
	}
	// Each failed probe run has had its Unhealthy event (the probe actor).
	switch {
	case ch.Kind == probe.Readiness:
		put(&a.ready, ch.ContainerID, ch.State == probe.Success)
	case ch.Kind == probe.Startup && ch.State == probe.Success:
		put(&a.startupPassed, ch.ContainerID, true)
		a.dirtyProbes = true // liveness and readiness may begin
	case ch.Kill():
		var p *v1.Probe
		for _, c := range a.pod.Spec.Containers {
			if c.Name == m.Container {
				p = c.LivenessProbe
				if ch.Kind == probe.Startup {
					p = c.StartupProbe
				}
			}
		}
		put(&a.unhealthy, ch.ContainerID, probe.KillGrace(p, podsync.GracePeriod(a.pod)))
		put(&a.killMessages, ch.ContainerID, probeKillMessage(m.Container, ch.Kind, a.pod.Spec.RestartPolicy))
		a.log.Info("container unhealthy; killing it", zap.String("container", m.Container), zap.String("probe", string(ch.Kind)))
	default:
		return
	}
	a.sync(ctx)
}
