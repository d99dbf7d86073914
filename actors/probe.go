package actors

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/actorlet/actorlet/internal/metrics"
	"github.com/actorlet/actorlet/internal/probe"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// probeActor is one probe worker: one probe kind (liveness, readiness,
// startup) of one container of a pod, a child of the pod actor. It owns
// the timer; the decisions are probe.Worker's; probes run off its mailbox
// (at most one in flight, so a hung exec never piles up) and report back
// as messages. It tells its parent every change of the probe's state.
type probeActor struct {
	cfg       Config
	kind      probe.Kind
	probe     *v1.Probe
	container *v1.Container
	worker    *probe.Worker
	log       *zap.Logger
	emit      func(messages.EventType, string, string, string) // type, reason, container, message

	target  probeTarget
	timer   clock.Timer
	gen     uint64
	stopped bool
}

// probeTarget is the pod actor's word on the container a probe worker
// watches (sent after every observation).
type probeTarget struct {
	ContainerID   string
	Running       bool
	StartedAt     time.Time
	Host          string // pod IP, or 127.0.0.1 for hostNetwork pods
	StartupPassed bool   // for liveness and readiness workers
}

type (
	probeTick   struct{ gen uint64 }
	probeResult struct {
		containerID string
		result      probe.Result
		output      string
		err         error
	}
	// probeChanged goes to the pod actor.
	probeChanged struct {
		Container string
		Change    probe.Change
		Output    string
	}
)

// newProbeProps returns the props of the probe actor of kind for
// container c; emit records its pod's events (nil: none).
func newProbeProps(cfg Config, kind probe.Kind, p *v1.Probe, c *v1.Container, waitForStartup bool, log *zap.Logger,
	emit func(messages.EventType, string, string, string)) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return &probeActor{cfg: cfg, kind: kind, probe: p, container: c, emit: emit,
			worker: probe.NewWorker(kind, p, waitForStartup),
			log:    log.With(zap.String("container", c.Name), zap.String("probe", string(kind)))}
	})
}

func (a *probeActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Stopping, *actor.Restarting:
		a.stopped = true
		a.stopTimer()
	case *probeTarget:
		prev := a.target
		a.target = *m
		if ch, ok := a.worker.SetContainer(m.ContainerID, m.Running); ok {
			ctx.Send(ctx.Parent(), &probeChanged{Container: a.container.Name, Change: ch})
		}
		if m.StartupPassed {
			a.worker.StartupPassed(m.ContainerID)
		}
		if m.ContainerID != prev.ContainerID && m.ContainerID != "" && m.Running {
			// A new instance: the first probe InitialDelay plus up to one
			// period of jitter after it started, then every period.
			first := m.StartedAt.Add(probe.FirstDelay(a.probe, rand.Float64()))
			a.schedule(ctx, first.Sub(a.cfg.Clock.Now()))
		}
	case *probeTick:
		if m.gen != a.gen || a.stopped {
			return
		}
		a.schedule(ctx, probe.Period(a.probe))
		if a.worker.Tick() {
			a.run(ctx)
		}
	case *probeResult:
		a.cfg.Metrics.ObserveProbe(string(a.kind), probeResultLabel(m.result))
		if m.err != nil {
			a.log.Debug("probe could not run", zap.Error(m.err))
		}
		if a.worker.Counts(m.containerID) {
			a.unhealthy(m)
		}
		if ch, ok := a.worker.Done(m.containerID, m.result); ok {
			ctx.Send(ctx.Parent(), &probeChanged{Container: a.container.Name, Change: ch, Output: m.output})
		}
	}
}

// unhealthy records the kubelet's Unhealthy event for a probe run of the
// watched container that failed ("Liveness probe failed: <output>") or
// could not run: one per run, so the events count the failures that led
// to a kill.
func (a *probeActor) unhealthy(m *probeResult) {
	if a.emit == nil {
		return
	}
	kind := strings.ToUpper(string(a.kind[:1])) + string(a.kind[1:])
	switch {
	case m.err != nil:
		a.emit(messages.EventWarning, "Unhealthy", a.container.Name, fmt.Sprintf("%s probe errored and resulted in unknown state: %v", kind, m.err))
	case m.result == probe.Failure:
		a.emit(messages.EventWarning, "Unhealthy", a.container.Name, fmt.Sprintf("%s probe failed: %s", kind, m.output))
	}
}

func probeResultLabel(r probe.Result) string {
	switch r {
	case probe.Success:
		return metrics.ProbeSuccessful
	case probe.Failure:
		return metrics.ProbeFailed
	default:
		return metrics.ProbeUnknown
	}
}

func (a *probeActor) schedule(ctx actor.Context, d time.Duration) {
	a.stopTimer()
	a.gen++
	gen, self, sys := a.gen, ctx.Self(), ctx.ActorSystem()
	if d < 0 {
		d = 0
	}
	a.timer = a.cfg.Clock.AfterFunc(d, func() { sys.Root.Send(self, &probeTick{gen: gen}) })
}

func (a *probeActor) stopTimer() {
	if a.timer != nil {
		a.timer.Stop()
		a.timer = nil
	}
}

// run starts one probe off the mailbox. Its deadline is the probe's
// timeout plus a margin: the prober itself enforces timeoutSeconds.
func (a *probeActor) run(ctx actor.Context) {
	self, sys := ctx.Self(), ctx.ActorSystem()
	p, t := a.probe, probe.Target{ContainerID: a.target.ContainerID, Container: a.container, Host: a.target.Host}
	if ex, ok := capability[runtimeadapter.Execer](a.cfg.Runtime); ok {
		t.Execer = ex
	}
	id := a.target.ContainerID
	go func() {
		res := &probeResult{containerID: id, result: probe.Unknown}
		defer func() {
			if r := recover(); r != nil {
				res.result, res.err = probe.Unknown, fmt.Errorf("probe panicked: %v", r)
			}
			sys.Root.Send(self, res)
		}()
		c, cancel := context.WithTimeout(context.Background(), probe.Timeout(p)+5*time.Second)
		defer cancel()
		res.result, res.output, res.err = probe.Run(c, p, t)
	}()
}
