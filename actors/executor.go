package actors

// The executor of a pod's plans: a worker carries out one plan (kills,
// the sandbox, image pulls, creates and starts, removals) against the
// runtime, off the pod actor, then lists the pod's containers; the actor
// hears the outcome as one message.

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/actorlet/actorlet/internal/podstate"
	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/internal/volumeprep"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// worker carries out one plan against the runtime, off the actor.
type worker struct {
	waits   map[string]startWait
	started []string
	hookPod *v1.Pod // the spec hooks come from (also for a removed pod)
	// removedAs names an orphan pod being removed (no spec), for errors.
	removedAs string
	halt      context.Context
	// abort, a child of halt, is cancelled when the pod is removed or its
	// spec changes: image waits, creates and starts end or are skipped;
	// stops and removals go on (on halt).
	abort    context.Context
	pulling  string    // the container whose image is being pulled
	podStart time.Time // the pod's start time, kept in its sandboxes' labels
	// killMessages: container ID → the Killing event's message, for kills
	// the actor decided (a failed probe). Read only.
	killMessages map[string]string

	cfg       Config
	pod       *v1.Pod
	uid       types.UID
	log       *zap.Logger
	sandboxID string
	// sandboxAddr is the address of sandbox sandboxAddrOf (see sandboxIP).
	sandboxAddr, sandboxAddrOf string
	emit                       func(messages.EventType, string, string, string) // type, reason, container, message
	// objects are the pod's ConfigMaps and Secrets; refresh: they
	// changed, write its volumes of them again.
	objects podsync.Objects
	refresh bool
	// mountEvents: FailedMount messages sent by this worker (once each).
	mountEvents map[string]bool
	// slot: this worker's hold on the node's start slots while its plan
	// starts things (see startSlots).
	slot startSlot
	// ticket is this worker's place in the node's startOrder while its
	// plan starts an app beside its sandbox (ticketed).
	ticket   uint64
	ticketed bool
	// ready: containers made ready, and created, while the sandbox
	// started (see startAhead), by name.
	ready map[string]prepared
	// flushed: writeAhead has waited for the state file.
	flushed bool
}

// event records a pod event (no-op without an emitter).
func (w *worker) event(typ messages.EventType, reason, container, msg string) {
	if w.emit != nil {
		w.emit(typ, reason, container, msg)
	}
}

// call is the context of one runtime call: its deadline, cancelled
// early when the pod actor stops or restarts.
func (w *worker) call(timeout time.Duration) (context.Context, context.CancelFunc) {
	parent := w.halt
	if parent == nil {
		parent = context.Background()
	}
	return context.WithTimeout(parent, timeout)
}

// startCall is the context of a call that makes something of the pod
// exist or run (an image wait, a create, a start): call's, also ended
// when the pod is removed or its spec changes (see abortStarts).
func (w *worker) startCall(timeout time.Duration) (context.Context, context.CancelFunc) {
	if w.abort == nil {
		return w.call(timeout)
	}
	return context.WithTimeout(w.abort, timeout)
}

// aborted reports whether the worker's starts were aborted (or the actor
// stopped): it then creates and starts nothing more.
func (w *worker) aborted() bool {
	return w.halted() || (w.abort != nil && w.abort.Err() != nil)
}

// run executes plan: kills (apps in parallel, then sidecars one at a
// time in the plan's order, then sandboxes), the sandbox, starts in spec
// order, removals. It returns every error; a failed sandbox skips the
// starts.
func (w *worker) run(plan podsync.Plan) []error {
	var errs []error
	var apps, sidecars, sandboxes []podsync.Kill
	for _, k := range plan.Kill {
		switch {
		case k.Container.Labels[runtimeadapter.LabelContainerType] == string(runtimeadapter.TypeSandbox):
			sandboxes = append(sandboxes, k)
		case k.Sidecar:
			sidecars = append(sidecars, k)
		default:
			apps = append(apps, k)
		}
	}
	// The sidecars stop within the grace the apps had: each gets what is
	// left of it (at least minSidecarGrace), as the kubelet.
	deadline := w.cfg.Clock.Now().Add(maxGrace(plan.Kill))
	errs = append(errs, w.kill(apps)...)
	for _, k := range sidecars {
		if len(errs) > 0 || w.halted() {
			break
		}
		if left := deadline.Sub(w.cfg.Clock.Now()); left < k.Grace {
			k.Grace = max(left, minSidecarGrace)
		}
		errs = append(errs, w.kill([]podsync.Kill{k})...)
	}
	if len(errs) > 0 {
		// A container that did not stop must not get a second instance
		// (invariant 1), nor lose its sandbox: retry the whole plan later.
		return errs
	}
	if w.halted() {
		return nil
	}
	errs = append(errs, w.kill(sandboxes)...)
	if len(errs) > 0 || w.halted() {
		return errs
	}

	// Standbys that are not their container's next instance go before
	// any start: a start may reuse the runtime name of one.
	for _, c := range plan.DropStandby {
		w.log.Info("removing standby", zap.String("container", c.Labels[runtimeadapter.LabelContainerName]), zap.String("id", short(c.ID)),
			zap.String("restartCount", c.Labels[runtimeadapter.LabelRestartCount]))
	}
	errs = append(errs, w.remove(plan.DropStandby)...)
	if plan.StartBeside && w.cfg.order != nil {
		// Its app goes before the sandboxes of the pods that start
		// beside theirs and asked later (see startOrder), from now: also
		// while it waits for a slot.
		w.ticket, w.ticketed = w.cfg.order.register(), true
		defer w.appTurnDone()
	}
	if needsStartSlot(plan) {
		// New pods start a few at a time, in order, until their sandbox
		// and first container run (see startSlots); waiting ends when the
		// pod is removed or changed.
		w.slot.slots = w.cfg.starts
		if w.abort != nil && w.slot.acquire(w.abort) != nil {
			return errs
		}
		defer w.slot.release(true)
	}
	if w.refresh && w.pod != nil && !w.aborted() {
		if err := w.refreshVolumes(); err != nil {
			errs = append(errs, err)
		}
	}
	if plan.AdoptSandboxID != "" {
		if w.aborted() {
			return errs
		}
		ctx, cancel := w.startCall(w.cfg.RuntimeTimeout)
		err := w.cfg.Runtime.Start(ctx, plan.AdoptSandboxID)
		cancel()
		if err != nil {
			return append(errs, fmt.Errorf("pod %s: start created sandbox %s: %w", w.podName(), short(plan.AdoptSandboxID), err))
		}
		w.sandboxID = plan.AdoptSandboxID
		w.log.Info("sandbox started", zap.String("id", short(w.sandboxID)), zap.String("reason", podsync.ReasonAdopt))
	}
	if plan.CreateSandbox && !w.aborted() {
		if plan.SandboxAttempt > 0 {
			w.event(messages.EventNormal, "SandboxChanged", "", "Pod sandbox changed, it will be killed and re-created.")
		}
		var next *podsync.Start
		if len(plan.Start) > 0 {
			next = &plan.Start[0]
		}
		id, err := w.createSandbox(plan.SandboxAttempt, next, plan.StartBeside)
		if err != nil && w.aborted() {
			return errs // the pod was removed or changed meanwhile: its next plan says what to do
		}
		if err != nil {
			w.event(messages.EventWarning, "FailedCreatePodSandBox", "", err.Error())
			return append(errs, err)
		}
		w.sandboxID = id
	}
	for _, s := range plan.Start {
		if w.aborted() {
			break // removals still run
		}
		if err := w.start(s); err != nil {
			errs = append(errs, err)
		}
		w.slot.release(true) // the sandbox and the first container run: the next pod's turn
	}
	w.slot.release(true)
	w.writeAhead() // before anything is created or removed
	for _, s := range plan.Standby {
		if w.aborted() {
			break
		}
		if err := w.standby(s); err != nil {
			errs = append(errs, err)
		}
	}
	return append(errs, w.remove(plan.Remove)...)
}

// appTurnDone ends the wait of the sandboxes queued behind this worker's
// app in the node's startOrder (its app started, pulls its image, or
// will not start beside its sandbox now); a no-op when done already.
func (w *worker) appTurnDone() {
	if w.ticketed {
		w.cfg.order.done(w.ticket)
	}
}

// writeAhead waits, once per worker, until the node's state file holds
// the records the plan changed (supervision.History.Flush).
func (w *worker) writeAhead() {
	if !w.flushed {
		w.flushed = true
		w.cfg.History.Flush()
	}
}

// standbyRestart: plan starts created standbys (restarts) and before
// them kills, removes and creates nothing. Its start calls need not wait
// for the state file: what they do is in the started containers' own
// labels (their restart count), and the exited instances whose records
// the file is to hold stay until the plan's removals, which wait for it.
func standbyRestart(plan podsync.Plan) bool {
	if len(plan.Kill) > 0 || len(plan.DropStandby) > 0 || plan.CreateSandbox || plan.AdoptSandboxID != "" || len(plan.Start) == 0 {
		return false
	}
	for _, s := range plan.Start {
		if !s.Standby || s.AdoptID == "" {
			return false
		}
	}
	return true
}

// remove removes cs (gone already is fine), unless the actor stopped.
func (w *worker) remove(cs []runtimeadapter.Container) []error {
	var errs []error
	for _, c := range cs {
		if w.halted() {
			return errs
		}
		ctx, cancel := w.call(w.cfg.RuntimeTimeout)
		err := w.cfg.Runtime.Remove(ctx, c.ID)
		cancel()
		if err != nil && !errors.Is(err, runtimeadapter.ErrNotFound) {
			errs = append(errs, fmt.Errorf("pod %s: remove container %s: %w", w.podName(), c.Name, err))
		}
	}
	return errs
}

// standby creates, and does not start, the next instance of the app
// container of s (podsync's Plan.Standby), labelled as a standby made
// from the inputs whose hash is s.Config. It makes no event: the restart
// that starts it does. A name taken already is left to the next listing
// and plan.
func (w *worker) standby(s podsync.Start) error {
	c := w.specContainer(s)
	if c == nil {
		return fmt.Errorf("pod %s: standby of container %s: not in spec", w.podName(), s.Name)
	}
	spec, err := w.appSpec(c, s)
	if w.aborted() {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pod %s: standby of container %s: %w", w.podName(), s.Name, err)
	}
	spec = podsync.AsStandby(spec, s.Config)
	ctx, cancel := w.startCall(w.cfg.RuntimeTimeout)
	defer cancel()
	id, err := w.cfg.Runtime.Create(ctx, spec)
	switch {
	case errors.Is(err, runtimeadapter.ErrNameConflict), err != nil && w.aborted():
		return nil
	case err != nil:
		return fmt.Errorf("pod %s: standby of container %s: %w", w.podName(), s.Name, err)
	}
	w.log.Debug("standby created", zap.String("container", s.Name), zap.String("id", short(id)), zap.Int("restartCount", s.Restarts))
	return nil
}

// specContainer is the spec container s starts (nil: not in the spec).
func (w *worker) specContainer(s podsync.Start) *v1.Container {
	list := w.pod.Spec.Containers
	if s.Init {
		list = w.pod.Spec.InitContainers
	}
	for i := range list {
		if list[i].Name == s.Name {
			return &list[i]
		}
	}
	return nil
}

// appSpec is the runtime spec of the instance of c that s starts.
func (w *worker) appSpec(c *v1.Container, s podsync.Start) (runtimeadapter.ContainerSpec, error) {
	ip, err := w.sandboxIP(c)
	if err != nil {
		return runtimeadapter.ContainerSpec{}, err
	}
	d := w.cfg.Spec.DownwardFor(w.cfg.NodeName, w.pod, ip)
	d.Objects = w.objects
	spec, err := podsync.AppSpecFor(w.cfg.Spec, d, w.pod, c, w.sandboxID, s.Restarts)
	if err != nil {
		return spec, err
	}
	if s.Init {
		spec = podsync.AsInit(spec, w.sandboxID)
		if podsync.IsSidecar(c) {
			spec = podsync.AsSidecar(spec, slices.IndexFunc(w.pod.Spec.InitContainers, func(ic v1.Container) bool { return ic.Name == c.Name }))
		}
	}
	spec.Labels = withPodStart(spec.Labels, w.podStart)
	return spec, nil
}

// minSidecarGrace is the least grace a sidecar is stopped with, however
// long the apps took (the kubelet's minimum grace period).
const minSidecarGrace = 2 * time.Second

func maxGrace(ks []podsync.Kill) time.Duration {
	var g time.Duration
	for _, k := range ks {
		g = max(g, k.Grace)
	}
	return g
}

func (w *worker) podName() string {
	switch {
	case w.pod != nil:
		return w.pod.Namespace + "/" + w.pod.Name
	case w.hookPod != nil:
		return w.hookPod.Namespace + "/" + w.hookPod.Name
	case w.removedAs != "":
		return w.removedAs
	}
	return string(w.uid)
}

func (w *worker) kill(ks []podsync.Kill) []error {
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, k := range ks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil { // never let a panic here end the process
					mu.Lock()
					errs = append(errs, fmt.Errorf("pod %s: stop container %s panicked: %v", w.podName(), k.Container.Name, p))
					mu.Unlock()
				}
			}()
			name := k.Container.Labels[runtimeadapter.LabelContainerName]
			w.log.Info("killing container", zap.String("container", name),
				zap.String("id", short(k.Container.ID)), zap.String("reason", k.Reason), zap.Duration("grace", k.Grace))
			if name != runtimeadapter.SandboxName {
				w.event(messages.EventNormal, "Killing", name, w.killMessage(k, name))
			}
			grace := w.preStop(k.Container, name, k.Grace)
			ctx, cancel := w.call(grace + w.cfg.RuntimeTimeout)
			defer cancel()
			if err := w.cfg.Runtime.Stop(ctx, k.Container.ID, grace); err != nil && !errors.Is(err, runtimeadapter.ErrNotFound) {
				mu.Lock()
				errs = append(errs, fmt.Errorf("pod %s: stop container %s: %w", w.podName(), k.Container.Name, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errs
}

// errExistsExited: a create found its deterministic name taken by an
// instance that already ran: this attempt happened, and the plan that
// asked for it was made on a stale listing.
var errExistsExited = errors.New("an instance of that name already ran; listing again")

// createAndStart creates spec and starts it. A container of the same
// deterministic name (a retried create after a crash or a lost answer) is
// adopted if it was created and never started (it is started) or runs
// (it is left alone); one that already ran is never started again (its
// exit would be lost, restartCount and CrashLoopBackOff with it). ahead,
// when not nil, holds the create (and maybe the start) already made (see
// startAhead);
// meanwhile, when not nil, runs once the container is created, and the
// function it returns once its start has returned, with the start's
// error.
func (w *worker) createAndStart(spec runtimeadapter.ContainerSpec, ahead *prepared, meanwhile func(id string) func(error)) (string, error) {
	if ahead != nil && ahead.started {
		if ahead.startErr != nil {
			return ahead.id, w.startFailure(ahead.id, spec.Name, ahead.startErr)
		}
		return ahead.id, nil
	}
	ctx, cancel := w.startCall(w.cfg.RuntimeTimeout)
	defer cancel()
	var id string
	var err error
	if ahead != nil && ahead.created {
		id, err = ahead.id, ahead.createErr
	} else {
		id, err = w.cfg.Runtime.Create(ctx, spec)
	}
	var conflict *runtimeadapter.NameConflictError
	if errors.As(err, &conflict) && conflict.ID != "" {
		existing, ierr := w.cfg.Runtime.Inspect(ctx, conflict.ID)
		if ierr == nil && podsync.IsStandby(&existing) {
			// A standby the plan did not see (a stale listing), made from
			// inputs that may be stale too: made again.
			w.log.Info("replacing standby", zap.String("name", spec.Name), zap.String("id", short(conflict.ID)))
			if err = w.cfg.Runtime.Remove(ctx, conflict.ID); err == nil || errors.Is(err, runtimeadapter.ErrNotFound) {
				id, err = w.cfg.Runtime.Create(ctx, spec)
			}
			conflict = nil
			if errors.As(err, &conflict) && conflict.ID != "" {
				existing, ierr = w.cfg.Runtime.Inspect(ctx, conflict.ID)
			}
		}
		switch {
		case conflict == nil || conflict.ID == "":
		case ierr != nil:
			return "", fmt.Errorf("pod %s: create container %s: inspect the existing %s: %w", w.podName(), spec.Name, short(conflict.ID), ierr)
		case podsync.AdoptionOf(&existing) == podsync.AdoptRunning:
			w.log.Info("adopting running container", zap.String("name", spec.Name), zap.String("id", short(conflict.ID)))
			return conflict.ID, nil
		case podsync.AdoptionOf(&existing) == podsync.AdoptCreated:
			w.log.Info("adopting created container", zap.String("name", spec.Name), zap.String("id", short(conflict.ID)))
			id, err = conflict.ID, nil
		default: // it ran, or its start failed: that attempt happened
			return "", fmt.Errorf("pod %s: create container %s: %s is %s: %w", w.podName(), spec.Name, short(conflict.ID), existing.RawState, errExistsExited)
		}
	}
	if err != nil {
		if w.aborted() {
			return "", errAborted
		}
		return "", createError(w.podName(), spec.Name, err)
	}
	if w.aborted() {
		// Stopped, or the pod removed or changed, between create and
		// start: leave the created container to the next plan, incarnation
		// or agent (it adopts or removes it).
		return id, fmt.Errorf("pod %s: container %s created, not started: %w", w.podName(), spec.Name, errAborted)
	}
	joined := func(error) {}
	if meanwhile != nil {
		joined = meanwhile(id)
	}
	err = w.cfg.Runtime.Start(ctx, id)
	joined(err)
	if err != nil {
		return id, w.startFailure(id, spec.Name, err)
	}
	return id, nil
}

// startFailedError: the runtime tried to start a container and could not
// (its command does not exist, cannot run …), and says why in the
// container (Docker's State.Error). That is the container's outcome, not
// a failed sync: the plan sees it in the next listing as a StartError
// exit, and restartPolicy decides.
type startFailedError struct {
	msg string // the runtime's message
	err error
}

func (e *startFailedError) Error() string { return e.err.Error() }

func (e *startFailedError) Unwrap() error { return e.err }

// startFailure wraps the error of a failed start of container id, as a
// *startFailedError when the runtime shows the container's start failed.
func (w *worker) startFailure(id, name string, err error) error {
	err = fmt.Errorf("pod %s: start container %s: %w", w.podName(), name, err)
	if errors.Is(err, runtimeadapter.ErrUnavailable) {
		return err
	}
	ctx, cancel := w.call(w.cfg.RuntimeTimeout)
	defer cancel()
	if c, ierr := w.cfg.Runtime.Inspect(ctx, id); ierr == nil && c.Error != "" && c.State != runtimeadapter.StateRunning {
		return &startFailedError{msg: c.Error, err: err}
	}
	return err
}

// startFailed reports, as the kubelet does (a Warning "Failed" event with
// the runtime's message), a container whose start failed when err is such
// a failure, and reports whether it was.
func (w *worker) startFailed(name, id string, err error) bool {
	var sf *startFailedError
	if !errors.As(err, &sf) {
		return false
	}
	w.event(messages.EventWarning, "Failed", name, "Error: "+sf.msg)
	w.log.Info("container could not start", zap.String("container", name), zap.String("id", short(id)), zap.String("error", sf.msg))
	return true
}

// sandboxIP is the address of the pod's sandbox when c's env names it
// (status.podIP(s)), read from the runtime once per sandbox; "" when c
// does not need it or the pod uses the host's network.
func (w *worker) sandboxIP(c *v1.Container) (string, error) {
	if w.pod.Spec.HostNetwork || !podsync.NeedsPodIP(c) || w.sandboxID == "" {
		return "", nil
	}
	if w.sandboxAddrOf == w.sandboxID {
		return w.sandboxAddr, nil
	}
	ctx, cancel := w.startCall(w.cfg.RuntimeTimeout)
	defer cancel()
	sb, err := w.cfg.Runtime.Inspect(ctx, w.sandboxID)
	if err != nil {
		return "", fmt.Errorf("sandbox %s: its address: %w", short(w.sandboxID), err)
	}
	w.sandboxAddr, w.sandboxAddrOf = sb.IP, w.sandboxID
	return sb.IP, nil
}

// createSandbox creates and starts the pod's sandbox; next, the plan's
// first start, if any, is made ready and created while the sandbox
// starts, and with beside started too (see startAhead).
func (w *worker) createSandbox(attempt int, next *podsync.Start, beside bool) (string, error) {
	ctx, cancel := w.startCall(w.cfg.RuntimeTimeout)
	err := w.cfg.Runtime.EnsureImage(ctx, w.cfg.PodInfraImage)
	cancel()
	if err != nil {
		return "", fmt.Errorf("pod %s: sandbox image %s: %w", w.podName(), w.cfg.PodInfraImage, err)
	}
	spec := podsync.SandboxSpec(w.cfg.NodeName, w.pod, w.cfg.PodInfraImage, attempt)
	spec.Labels = withPodStart(spec.Labels, w.podStart)
	ahead := w.startAhead(next, beside)
	var meanwhile func(string) func(error)
	if ahead != nil {
		meanwhile = ahead.meanwhile
	}
	id, err := w.createAndStart(spec, nil, meanwhile)
	ahead.settle(err)
	if err == nil {
		w.log.Info("sandbox started", zap.String("id", short(id)), zap.Int("attempt", attempt))
	}
	return id, err
}

// prepared is a container made ready for its create: its spec, or why
// it is not created now (ok false: err is a failed sync, nil when the
// container waits, w.waits says why, or the pod changed).
type prepared struct {
	c    *v1.Container
	spec runtimeadapter.ContainerSpec
	ok   bool
	err  error
	// created: the create was made ahead, while the sandbox started (see
	// startAhead), with this outcome.
	created   bool
	id        string
	createErr error
	// started: the container was also started beside its sandbox (see
	// startAhead), with this outcome.
	started  bool
	startErr error
}

// prepare makes start s (not an adoption) ready for its create: the
// container's image, its config and its pod's volumes.
func (w *worker) prepare(s podsync.Start) prepared {
	c := w.specContainer(s)
	if c == nil {
		return prepared{err: fmt.Errorf("pod %s: container %s: not in spec", w.podName(), s.Name)}
	}
	if ok, err := w.image(c); !ok || w.aborted() {
		return prepared{err: err} // nil: the container waits for its image (not a sync error), or the pod changed
	}
	spec, err := w.appSpec(c, s)
	if w.aborted() {
		return prepared{}
	}
	// Volumes first, as the kubelet mounts them before it makes any
	// container's config.
	prepErr := volumeprep.PrepareWith(w.cfg.Spec, w.objects, w.pod)
	var me *volumeprep.MountError
	if errors.As(prepErr, &me) {
		// As the kubelet: the pod's volumes are not ready, the container
		// waits (ContainerCreating) and FailedMount says why; tried again
		// on the failed-sync curve, and at once when the pod's objects
		// change.
		w.failedMount(c, prepErr)
		return prepared{}
	}
	if err == nil {
		err = prepErr
	}
	var oe *podsync.ObjectError
	switch {
	case errors.As(err, &oe):
		// The kubelet's words (`secret "db" not found`), which name no
		// value; the log has the field too.
		w.log.Info("container's env needs a ConfigMap or Secret", zap.String("container", c.Name), zap.Error(err))
		w.failedStart(c, reasonCreateContainerConfigError, oe.Msg)
		return prepared{}
	case err != nil:
		// The kubelet's CreateContainerConfigError: retried on the
		// failed-sync curve, not a sync error.
		w.failedStart(c, reasonCreateContainerConfigError, fmt.Sprintf("pod %s: %v", w.podName(), err))
		return prepared{}
	}
	w.envFromSkipped(c)
	return prepared{c: c, spec: spec, ok: true}
}

func (w *worker) start(s podsync.Start) error {
	if s.AdoptID != "" {
		var c *v1.Container
		if w.pod != nil {
			c = w.specContainer(s)
		}
		if s.Standby && c != nil {
			// Its image is present (the standby was created from it, and
			// never pulls first: podsync makes none then).
			w.imagePresent(c)
			w.envFromSkipped(c)
		}
		ctx, cancel := w.startCall(w.cfg.RuntimeTimeout)
		defer cancel()
		debug := w.log.Core().Enabled(zap.DebugLevel)
		if debug { // the stages of a restart (bench/dockerbench's trace)
			w.log.Debug("start call", zap.String("id", short(s.AdoptID)), zap.String("reason", s.Reason))
		}
		err := w.cfg.Runtime.Start(ctx, s.AdoptID)
		if debug {
			w.log.Debug("start returned", zap.String("id", short(s.AdoptID)), zap.Error(err))
		}
		if err != nil {
			if w.aborted() {
				return nil // the pod was removed or changed: its next plan says what to do
			}
			err = w.startFailure(s.AdoptID, s.Name, err)
			if s.Standby {
				var sf *startFailedError
				if errors.As(err, &sf) { // as a new instance's: Created, then Failed
					w.event(messages.EventNormal, "Created", s.Name, "Created container: "+s.Name)
				}
			}
			if w.startFailed(s.Name, s.AdoptID, err) {
				return nil
			}
			w.event(messages.EventWarning, "Failed", s.Name, "Error: "+err.Error())
			return err
		}
		if s.Standby && c != nil {
			// The restart of c: what follows a new instance's start.
			return w.afterStart(c, s.AdoptID, s)
		}
		w.event(messages.EventNormal, "Started", s.Name, "Started container "+s.Name)
		w.log.Info("container started", zap.String("container", s.Name), zap.String("id", short(s.AdoptID)),
			zap.Int("restartCount", s.Restarts), zap.String("reason", s.Reason))
		return nil
	}
	p, ahead := w.ready[s.Name]
	if !ahead {
		p = w.prepare(s)
	}
	if !p.ok {
		return p.err
	}
	c, spec := p.c, p.spec
	id, err := w.createAndStart(spec, &p, nil)
	var refused *createRefusedError
	var sf *startFailedError
	switch {
	case errors.Is(err, errAborted):
		return nil // the pod was removed or changed: its next plan says what to do
	case errors.As(err, &refused):
		w.failedStart(c, reasonCreateContainerError, refused.Err.Error())
		return nil
	case errors.As(err, &sf):
		w.event(messages.EventNormal, "Created", c.Name, "Created container: "+c.Name) // then Failed, as the kubelet
		w.startFailed(c.Name, id, err)
		return nil
	case err != nil:
		w.event(messages.EventWarning, "Failed", c.Name, "Error: "+err.Error())
		return err
	}
	return w.afterStart(c, id, s)
}

// envFromSkipped warns of the envFrom keys c's new instance skips.
func (w *worker) envFromSkipped(c *v1.Container) {
	for _, msg := range podsync.EnvFromSkipped(w.objects, w.pod, c) {
		w.event(messages.EventWarning, "InvalidEnvironmentVariableNames", c.Name, msg)
	}
}

// afterStart follows the start of instance id of c, new or a standby:
// its events, postStart hook, log line and restart metric.
func (w *worker) afterStart(c *v1.Container, id string, s podsync.Start) error {
	w.started = append(w.started, c.Name)
	w.event(messages.EventNormal, "Created", c.Name, "Created container: "+c.Name)
	w.event(messages.EventNormal, "Started", c.Name, "Started container "+c.Name)
	if c.Lifecycle != nil && c.Lifecycle.PostStart != nil {
		// As the kubelet: a failed postStart hook kills the container,
		// which then restarts per restartPolicy.
		if err := w.runHook(c.Lifecycle.PostStart, c, id, podsync.GracePeriod(w.pod)+w.cfg.RuntimeTimeout); err != nil {
			w.event(messages.EventWarning, "FailedPostStartHook", c.Name, fmt.Sprintf("PostStart hook for container %s failed: %v", c.Name, err))
			ctx, cancel := w.call(podsync.GracePeriod(w.pod) + w.cfg.RuntimeTimeout)
			defer cancel()
			_ = w.cfg.Runtime.Stop(ctx, id, podsync.GracePeriod(w.pod))
			return fmt.Errorf("pod %s: container %s: postStart hook: %w", w.podName(), c.Name, err)
		}
	}
	w.log.Info("container started", zap.String("container", c.Name), zap.String("id", short(id)),
		zap.Int("restartCount", s.Restarts), zap.String("reason", s.Reason))
	if s.Restarts > 0 && (!s.Init || (podsync.IsSidecar(c) && s.Reason == podsync.ReasonRestart)) {
		w.cfg.Metrics.IncRestart(w.pod.Namespace, w.pod.Name, c.Name)
	}
	return nil
}

// list reads the pod's containers (after the plan ran), with the span of
// the call.
func (w *worker) list() (podstate.Listing, error) {
	ctx, cancel := w.call(w.cfg.ListTimeout)
	defer cancel()
	from := w.cfg.Clock.Now()
	res, err := w.cfg.Runtime.List(ctx, runtimeadapter.ListOptions{Node: w.cfg.NodeName, PodUID: string(w.uid), All: true})
	if err != nil {
		return podstate.Listing{}, fmt.Errorf("pod %s: list containers: %w", w.podName(), err)
	}
	return podstate.Listing{Containers: res.Containers, From: from, Until: w.cfg.Clock.Now(), Version: res.Version}, nil
}

func short(id string) string {
	if _, after, ok := strings.Cut(id, "://"); ok { // "docker://", "containerd://"
		id = after
	}
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// halted reports whether the actor that started this worker has stopped
// (or restarted): the worker then starts no further runtime call.
func (w *worker) halted() bool { return w.halt != nil && w.halt.Err() != nil }

// executor runs a pod actor's one worker at a time, off its mailbox; the
// worker's outcome comes back to the actor as a syncDone.
type executor struct {
	// done is closed when the running worker's goroutine ends (nil: none
	// runs).
	done chan struct{}
	// halt is the running worker's context: cancelled when the actor
	// stops, its calls end and it starts no other. abort, its child, is
	// also cancelled by abortStarts.
	cancelHalt  context.CancelFunc
	cancelAbort context.CancelFunc
}

// workerStopWait bounds how long a stopping or restarting pod actor waits
// for its worker, whose runtime calls are cancelled: a call still under
// way when a new incarnation or a new node plans could, for instance,
// start a second instance of a container (invariant 1).
const workerStopWait = 10 * time.Second

// worker makes the worker of an effect: run's plan, or a list (run nil).
func (a *podActor) worker(ctx actor.Context, run *podstate.Run) *worker {
	w := &worker{cfg: a.cfg.Config, uid: a.uid, log: a.logger()}
	if run != nil {
		w.pod, w.hookPod, w.removedAs = run.Pod, run.HookPod, run.RemovedAs
		w.objects, w.refresh = run.Objects, run.Refresh
		w.sandboxID, w.podStart, w.killMessages = run.Plan.SandboxID, run.PodStart, run.KillMessages
		w.emit = a.emitter(ctx)
	}
	return w
}

// list lists the pod's containers off the mailbox.
func (x *executor) list(ctx actor.Context, w *worker, inc uint32, received uint64) {
	w.halt, _ = x.contexts()
	x.launch(ctx, inc, func(d *podstate.WorkDone) {
		defer func() {
			if r := recover(); r != nil {
				d.ListErr = fmt.Errorf("pod %s: list panicked: %v", w.uid, r)
			}
		}()
		d.Listing, d.ListErr = w.list()
		d.Listing.Received = received
	})
}

// run carries out plan off the mailbox, then lists the pod's containers.
func (x *executor) run(ctx actor.Context, w *worker, plan podsync.Plan, inc uint32, received uint64) {
	w.halt, w.abort = x.contexts()
	x.launch(ctx, inc, func(d *podstate.WorkDone) {
		defer func() {
			if r := recover(); r != nil {
				d.Errs = append(d.Errs, fmt.Errorf("pod %s: sync panicked: %v\n%s", w.uid, r, debug.Stack()))
			}
		}()
		// Write-ahead: the records the plan changed (an exit seen, a
		// restart decided) are in the state file before the runtime acts
		// on them (a GC removing the exited instance, say), as when the
		// actor wrote them itself; the wait is off its mailbox. A restart
		// that starts standbys and nothing else destructive first waits
		// for the file after its start calls (see writeAhead).
		if !standbyRestart(plan) {
			w.writeAhead()
		}
		d.Errs = w.run(plan)
		d.Waits, d.Started = w.waits, w.started
		if w.halted() {
			d.ListErr = errors.New("pod actor stopped")
			return
		}
		d.Listing, d.ListErr = w.list()
		d.Listing.Received = received
	})
}

// contexts makes the contexts of a new worker: halt, cancelled when the
// actor stops or restarts, or once the worker has ended; and abort, its
// child, also cancelled by abortStarts. (One per worker, not per actor: an
// idle pod holds no context.)
func (x *executor) contexts() (halt, abort context.Context) {
	halt, x.cancelHalt = context.WithCancel(context.Background())
	abort, x.cancelAbort = context.WithCancel(halt)
	return halt, abort
}

func (x *executor) launch(ctx actor.Context, inc uint32, work func(*podstate.WorkDone)) {
	self, sys := ctx.Self(), ctx.ActorSystem()
	finished := make(chan struct{})
	x.done = finished
	go func() {
		msg := &syncDone{inc: inc}
		defer func() {
			close(finished)
			sys.Root.Send(self, msg)
		}()
		work(&msg.done)
	}()
}

// ended: the worker's syncDone arrived; release its contexts.
func (x *executor) ended() {
	x.done = nil
	if x.cancelHalt != nil {
		x.cancelHalt()
		x.cancelHalt, x.cancelAbort = nil, nil
	}
}

// abortStarts ends the running worker's image waits, creates and starts
// (those under way return, the rest are skipped), as the kubelet cancels a
// pod's sync under way when the pod starts terminating: the pod was
// removed or its spec changed, so what the worker was starting is no
// longer wanted. Its stops go on for their whole grace period. A pull it
// waited for goes on for the other pods that wait for the image.
func (x *executor) abortStarts() {
	if x.cancelAbort != nil {
		x.cancelAbort()
	}
}

// stop cancels the running worker's calls and waits for it to end, at
// most workerStopWait.
func (x *executor) stop(clk clock.Clock, log *zap.Logger) {
	if x.cancelHalt != nil {
		x.cancelHalt()
	}
	if x.done == nil {
		return
	}
	t := clk.NewTimer(workerStopWait)
	defer t.Stop()
	select {
	case <-x.done:
	case <-t.C():
		log.Warn("pod actor stopping: its runtime call did not end within " + workerStopWait.String())
	}
	x.done = nil
}
