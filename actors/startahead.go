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

// aheadStart is the plan's first start made ready, created (and, beside
// its sandbox, started) while the pod's new sandbox is made: see
// startAhead.
type aheadStart struct {
	w      *worker
	s      podsync.Start
	beside bool
	// created, when not nil, yields the outcome of the prepare and create
	// begun before the sandbox's create (early).
	created chan prepared
	// done yields the whole outcome once meanwhile ran; nil before.
	done   chan prepared
	joined bool
}

// startAhead returns what runs while a new sandbox is made (see
// createAndStart's meanwhile): next, the plan's first start, is made
// ready (its image, its config, its volumes) and its container created,
// so that once the sandbox runs only the container's start is left — the
// runtime's create no longer waits for the sandbox's start. With beside
// (podsync's Plan.StartBeside: the container joins none of the sandbox's
// namespaces) it is created at the same time as the sandbox (an init
// container, which records its sandbox's ID, once the sandbox exists),
// and started as soon as both exist, so that its start and the sandbox's
// overlap; its events and postStart hook still come once the sandbox's
// start returned (see start). If the sandbox's create or start fails, the
// container made ahead is removed — stopped first when it was started —
// as the kubelet never runs a container of a sandbox that did not start.
// If the pod is removed or changed meanwhile, a container created ahead
// is removed; one started beside is left to the next plan (the pod's
// removal, or a new spec's). nil when next cannot be made ahead (see
// canStartAhead). settle must be called once the sandbox's
// createAndStart returned.
func (w *worker) startAhead(next *podsync.Start, beside bool) *aheadStart {
	if next == nil || w.pod == nil {
		w.appTurnDone()
		return nil
	}
	if c := w.specContainer(*next); !canStartAhead(w.pod, c, *next) {
		w.appTurnDone() // its start waits for the sandbox: none may wait for it
		return nil
	}
	a := &aheadStart{w: w, s: *next, beside: beside}
	if beside && !next.Init {
		a.created = make(chan prepared, 1)
		go func() { a.created <- a.prepareAndCreate() }()
	}
	return a
}

// prepareAndCreate makes a.s ready and creates its container.
func (a *aheadStart) prepareAndCreate() (p prepared) {
	w, s := a.w, a.s
	defer func() {
		if r := recover(); r != nil { // never let a panic here end the process
			p = prepared{err: fmt.Errorf("pod %s: container %s: made ready ahead: panicked: %v", w.podName(), s.Name, r)}
		}
	}()
	p = w.prepare(s)
	if !p.ok || w.aborted() {
		return p
	}
	ctx, cancel := w.startCall(w.cfg.RuntimeTimeout)
	defer cancel()
	p.id, p.createErr = w.cfg.Runtime.Create(ctx, p.spec)
	p.created = true // createAndStart takes the outcome, a failure too
	return p
}

// meanwhile runs once the sandbox sandboxID is created, while it starts:
// the container is created (unless it was, early) and, beside, started.
// It returns join.
func (a *aheadStart) meanwhile(sandboxID string) func(error) {
	w, s := a.w, a.s
	if a.created == nil {
		w.sandboxID = sandboxID // the main goroutine sets the same once the start returns
	}
	a.done = make(chan prepared, 1)
	go func() {
		var p prepared
		defer func() {
			if r := recover(); r != nil { // never let a panic here end the process
				p = prepared{err: fmt.Errorf("pod %s: container %s: started ahead: panicked: %v", w.podName(), s.Name, r)}
			}
			if a.beside {
				// The app started (or will not start beside): the pod's
				// start slot goes to the next pod now, and the sandboxes
				// queued behind it may start (see startOrder).
				w.appTurnDone()
				w.slot.release(true)
			}
			a.done <- p
		}()
		if a.created != nil {
			p = <-a.created
		} else {
			p = a.prepareAndCreate()
		}
		if !a.beside || !p.created || p.createErr != nil || w.aborted() {
			return // a name taken is settled by createAndStart, after the sandbox
		}
		w.log.Debug("starting container beside its sandbox", zap.String("container", s.Name), zap.String("id", short(p.id)),
			zap.String("sandbox", short(sandboxID)))
		// Its slot goes to the next pod now: the slots bound the pods
		// being created at once; the starts of containers beside their
		// sandboxes go to the runtime as soon as they are created, ahead of
		// the sandboxes (see startOrder).
		w.slot.release(true)
		ctx, cancel := w.startCall(w.cfg.RuntimeTimeout)
		defer cancel()
		p.startErr = w.cfg.Runtime.Start(ctx, p.id)
		p.started = true
	}()
	if a.beside {
		a.awaitTurn()
	}
	return a.join
}

// awaitTurn holds the sandbox's start, in a burst, until the apps of the
// pods that start beside their sandbox and were queued before it have
// started (see startOrder); the pod's own app's start is under way.
func (a *aheadStart) awaitTurn() {
	w := a.w
	if !w.ticketed {
		return
	}
	bar, n := w.cfg.order.bar(w.ticket)
	if n == 0 {
		return
	}
	w.log.Debug("sandbox start waits behind other pods' apps", zap.Int("apps", n))
	ctx, cancel := w.startCall(w.cfg.RuntimeTimeout)
	defer cancel()
	if err := w.cfg.order.wait(ctx, bar, w.ticket); err != nil {
		w.log.Debug("sandbox start no longer waits", zap.Error(err))
	}
}

// settle ends the start ahead once the sandbox's createAndStart returned
// with sandboxErr: when meanwhile never ran (the sandbox's create failed,
// or found the sandbox running already), a container created early is
// handed to the plan's starts, or removed.
func (a *aheadStart) settle(sandboxErr error) {
	if a == nil || a.joined {
		return
	}
	if a.done == nil {
		if a.created == nil {
			return // nothing was made
		}
		a.done = make(chan prepared, 1)
		a.done <- <-a.created
	}
	a.join(sandboxErr)
}

// join takes the outcome once the sandbox's start returned with
// sandboxErr: the container made ahead goes to the plan's starts (see
// start), or is removed.
func (a *aheadStart) join(sandboxErr error) {
	w, s := a.w, a.s
	a.joined = true
	p := <-a.done
	if sandboxErr == nil && !w.aborted() {
		put(&w.ready, s.Name, p)
		return
	}
	if p.id == "" || p.createErr != nil {
		return
	}
	if p.started && p.startErr == nil {
		if w.aborted() {
			// The pod was removed or changed (or the actor stopped): the
			// next plan, or incarnation, stops it with the pod's grace,
			// or keeps it.
			w.log.Info("container started beside its sandbox left to the next plan: the pod changed",
				zap.String("container", s.Name), zap.String("id", short(p.id)))
			return
		}
		grace := podsync.GracePeriod(w.pod)
		ctx, cancel := w.call(grace + w.cfg.RuntimeTimeout)
		err := w.cfg.Runtime.Stop(ctx, p.id, grace)
		cancel()
		if err != nil && !errors.Is(err, runtimeadapter.ErrNotFound) {
			// Left running: the next plan sees a sandbox that did not
			// start and kills it (SandboxChanged).
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
