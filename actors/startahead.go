package actors

import (
	"errors"
	"fmt"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// canStartAhead reports whether start s of pod can be made ready and its
// container created while the pod's sandbox starts: not an adoption (that
// container exists), and not a container whose env names the pod's IP,
// which is known once the sandbox runs.
func canStartAhead(pod *v1.Pod, c *v1.Container, s podsync.Start) bool {
	return pod != nil && c != nil && s.AdoptID == "" && (pod.Spec.HostNetwork || !podsync.NeedsPodIP(c))
}

// startAhead returns what runs while a new sandbox starts (see
// createAndStart's meanwhile): next, the plan's first start, is made
// ready (its image, its config, its volumes) and its container created,
// so that once the sandbox runs only the container's start is left — the
// runtime's create no longer waits for the sandbox's start. With beside
// (podsync's Plan.StartBeside: the container joins none of the sandbox's
// namespaces) it is started too, at once, so that its start and the
// sandbox's overlap; its events and postStart hook still come once the
// sandbox's start returned (see start). If the sandbox's start fails, the
// container made ahead is removed — stopped first when it was started
// beside — as the kubelet never runs a container of a sandbox that did
// not start. If the pod is removed or changed meanwhile, a container
// created ahead is removed; one started beside is left to the next plan
// (the pod's removal, or a new spec's). nil when next cannot be made
// ahead (see canStartAhead).
func (w *worker) startAhead(next *podsync.Start, beside bool) func(sandboxID string) func(error) {
	if next == nil || w.pod == nil {
		return nil
	}
	if c := w.specContainer(*next); !canStartAhead(w.pod, c, *next) {
		return nil
	}
	s := *next
	return func(sandboxID string) func(error) {
		w.sandboxID = sandboxID // the main goroutine sets the same once the start returns
		done := make(chan prepared, 1)
		go func() {
			var p prepared
			defer func() {
				if r := recover(); r != nil { // never let a panic here end the process
					p = prepared{err: fmt.Errorf("pod %s: container %s: made ready ahead: panicked: %v", w.podName(), s.Name, r)}
				}
				done <- p
			}()
			p = w.prepare(s)
			if !p.ok || w.aborted() {
				return
			}
			ctx, cancel := w.startCall(w.cfg.RuntimeTimeout)
			defer cancel()
			p.id, p.createErr = w.cfg.Runtime.Create(ctx, p.spec)
			p.created = true // createAndStart takes the outcome, a failure too
			if !beside || p.createErr != nil || w.aborted() {
				return // a name taken is settled by createAndStart, after the sandbox
			}
			w.log.Debug("starting container beside its sandbox", zap.String("container", s.Name), zap.String("id", short(p.id)),
				zap.String("sandbox", short(sandboxID)))
			p.startErr = w.cfg.Runtime.Start(ctx, p.id)
			p.started = true
		}()
		return func(sandboxErr error) {
			p := <-done
			if sandboxErr == nil && !w.aborted() {
				put(&w.ready, s.Name, p)
				return
			}
			if p.id == "" || p.createErr != nil {
				return
			}
			if p.started && p.startErr == nil {
				if w.aborted() {
					// The pod was removed or changed (or the actor
					// stopped): the next plan, or incarnation, stops
					// it with the pod's grace, or keeps it.
					w.log.Info("container started beside its sandbox left to the next plan: the pod changed",
						zap.String("container", s.Name), zap.String("id", short(p.id)))
					return
				}
				grace := podsync.GracePeriod(w.pod)
				ctx, cancel := w.call(grace + w.cfg.RuntimeTimeout)
				err := w.cfg.Runtime.Stop(ctx, p.id, grace)
				cancel()
				if err != nil && !errors.Is(err, runtimeadapter.ErrNotFound) {
					// Left running: the next plan sees a sandbox that
					// did not start and kills it (SandboxChanged).
					w.log.Warn("container started beside a sandbox that did not start: stop failed", zap.String("container", s.Name),
						zap.String("id", short(p.id)), zap.NamedError("sandboxError", sandboxErr), zap.Error(err))
					return
				}
			}
			ctx, cancel := w.call(w.cfg.RuntimeTimeout)
			defer cancel()
			err := w.cfg.Runtime.Remove(ctx, p.id)
			w.log.Info("container created ahead removed: its sandbox did not start", zap.String("container", s.Name),
				zap.String("id", short(p.id)), zap.Bool("startedBeside", p.started && p.startErr == nil),
				zap.NamedError("sandboxError", sandboxErr), zap.NamedError("removeError", err))
		}
	}
}
