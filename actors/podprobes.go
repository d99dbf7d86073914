package actors

// A pod actor's probe children: one per container and probe kind of the
// spec. What they say (ready, startup passed, a failed liveness or
// startup probe that kills the container) the pod's state machine keeps;
// the actor makes and stops the children and tells them their containers'
// instances, as the machine's effects say.

import (
	"strings"

	"github.com/asynkron/protoactor-go/actor"
	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/podstate"
	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/internal/probe"
)

func (a *podActor) probeEffect(ctx actor.Context, e podstate.Effect) {
	switch e := e.(type) {
	case podstate.SpawnProbes:
		a.stopProbes(ctx)
		a.spawnProbes(ctx, e.Pod)
	case podstate.StopProbes:
		a.stopProbes(ctx)
	case podstate.ProbeTargets:
		for key, pid := range a.probes {
			t := e.Targets[key[:strings.LastIndex(key, "/")]]
			ctx.Send(pid, &probeTarget{ContainerID: t.ContainerID, Running: t.Running,
				StartedAt: t.StartedAt, Host: t.Host, StartupPassed: t.StartupPassed})
		}
	}
}

// spawnProbes makes one probe child per container and probe kind of pod.
func (a *podActor) spawnProbes(ctx actor.Context, pod *v1.Pod) {
	cs := make([]*v1.Container, 0, len(pod.Spec.Containers)+len(pod.Spec.InitContainers))
	for i := range pod.Spec.InitContainers {
		if podsync.IsSidecar(&pod.Spec.InitContainers[i]) { // sidecars are probed as app containers are
			cs = append(cs, &pod.Spec.InitContainers[i])
		}
	}
	for i := range pod.Spec.Containers {
		cs = append(cs, &pod.Spec.Containers[i])
	}
	for _, c := range cs {
		for kind, p := range map[probe.Kind]*v1.Probe{probe.Liveness: c.LivenessProbe, probe.Readiness: c.ReadinessProbe, probe.Startup: c.StartupProbe} {
			if p == nil {
				continue
			}
			props := newProbeProps(a.cfg.Config, kind, p, c, c.StartupProbe != nil, a.logger(), a.emitter(ctx))
			put(&a.probes, c.Name+"/"+string(kind), ctx.Spawn(props))
		}
	}
}

func (a *podActor) stopProbes(ctx actor.Context) {
	for k, pid := range a.probes {
		ctx.Stop(pid)
		delete(a.probes, k)
	}
}
