package actors

import (
	"fmt"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/podsync"
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
// runtime's create no longer waits for the sandbox's start. If the
// sandbox's start fails, or the pod is removed or changed meanwhile, the
// container created ahead is removed: it would join a sandbox that never
// ran. nil when next cannot be made ahead (see canStartAhead).
func (w *worker) startAhead(next *podsync.Start) func(sandboxID string) func(error) {
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
			ctx, cancel := w.call(w.cfg.RuntimeTimeout)
			defer cancel()
			err := w.cfg.Runtime.Remove(ctx, p.id)
			w.log.Info("container created ahead removed: its sandbox did not start", zap.String("container", s.Name),
				zap.String("id", short(p.id)), zap.NamedError("sandboxError", sandboxErr), zap.NamedError("removeError", err))
		}
	}
}
