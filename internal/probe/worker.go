package probe

import v1 "k8s.io/api/core/v1"

// Change is what a probe worker must tell its pod actor: the reported
// state of the Kind probe of container ContainerID is now State.
type Change struct {
	Kind        Kind
	ContainerID string
	State       Result
}

// Kill reports whether c means the container must be killed (and then
// restarted per restartPolicy): its liveness or startup probe failed.
func (c Change) Kill() bool {
	return (c.Kind == Liveness || c.Kind == Startup) && c.State == Failure
}

// Worker is the decision logic of one probe worker: one probe kind of one
// container of a pod, across that container's instances. It owns no
// timer and runs no probe. Its driver (the probe actor) tells it which
// container instance runs (SetContainer), when the startup probe passed
// (StartupPassed), asks it on every period tick whether to probe (Tick),
// runs the probe off its mailbox, and hands the result back (Done). Every
// Change it returns goes to the pod actor.
//
// Rules, as the kubelet's worker:
//   - A new container instance starts over: thresholds reset, state back
//     to the kind's initial one, hold lifted.
//   - No probe runs while the container is not running, while the worker
//     is on hold, or while the previous probe is still in flight (so a
//     hung exec never piles up a second one).
//   - Liveness and readiness probes of a container that has a startup
//     probe wait until StartupPassed; a startup probe stops once it
//     passed.
//   - A liveness or startup probe that fails (Change.Kill) puts the worker
//     on hold until a new container instance appears.
//   - When its container stops running, a readiness worker reports
//     Failure (not ready); liveness and startup workers just pause.
//
// A Worker is not safe for concurrent use; its actor serialises calls.
type Worker struct {
	kind           Kind
	waitForStartup bool
	tracker        Tracker

	containerID string
	running     bool
	started     bool // liveness/readiness: the startup probe passed (or there is none)
	onHold      bool
	inFlight    bool
}

// NewWorker returns the worker of probe p of kind k, with no container
// yet. waitForStartup must be true for the liveness and readiness workers
// of a container that has a startup probe (it is ignored for k ==
// Startup).
func NewWorker(k Kind, p *v1.Probe, waitForStartup bool) *Worker {
	return &Worker{kind: k, waitForStartup: waitForStartup && k != Startup, tracker: NewTracker(k, p)}
}

// Kind returns the worker's probe kind.
func (w *Worker) Kind() Kind { return w.kind }

// ContainerID returns the container instance the worker probes ("" for
// none).
func (w *Worker) ContainerID() string { return w.containerID }

// State returns the reported state for the current container instance.
func (w *Worker) State() Result { return w.tracker.State() }

// InFlight reports whether a probe started by Tick has not been Done yet.
func (w *Worker) InFlight() bool { return w.inFlight }

// SetContainer tells the worker the container's current instance (id,
// "" when there is none) and whether it is running. A new non-empty id
// starts over and reports the kind's initial state for it; a readiness
// worker whose container stopped running reports Failure. It returns
// whether there is a change to report.
func (w *Worker) SetContainer(id string, running bool) (Change, bool) {
	if id != w.containerID {
		w.containerID, w.running = id, running && id != ""
		w.tracker.Reset()
		w.onHold = false
		w.started = !w.waitForStartup
		if id == "" {
			return Change{}, false
		}
		return w.change(), true
	}
	w.running = running && id != ""
	if !w.running && w.kind == Readiness && w.tracker.state != Failure {
		w.tracker.state = Failure
		return w.change(), true
	}
	return Change{}, false
}

// StartupPassed tells a liveness or readiness worker that container
// instance id passed its startup probe, which lets it begin probing. It
// is ignored for another instance and by startup workers.
func (w *Worker) StartupPassed(id string) {
	if id != "" && id == w.containerID {
		w.started = true
	}
}

// Tick is called on every period tick (the first one FirstDelay after the
// container started). It reports whether to start a probe now; if so the
// probe is in flight until Done.
func (w *Worker) Tick() bool {
	if !w.active() || w.inFlight {
		return false
	}
	w.inFlight = true
	return true
}

// active reports whether the current instance is to be probed.
func (w *Worker) active() bool {
	switch {
	case !w.running || w.onHold:
		return false
	case w.kind == Startup:
		return w.tracker.state != Success
	default:
		return w.started
	}
}

// Counts reports whether a result of container id would count now: it is
// the watched container and probing is active (not on hold after a kill,
// not waiting for the startup probe). Call it before Done.
func (w *Worker) Counts(id string) bool {
	return id != "" && id == w.containerID && w.active()
}

// Done records the result of the probe started by the last Tick, which
// ran against container instance id, and returns whether the reported
// state changed. It ends the probe's flight even when the result no longer
// matters (another instance, container stopped, worker on hold).
func (w *Worker) Done(id string, r Result) (Change, bool) {
	w.inFlight = false
	if id != w.containerID || !w.active() {
		return Change{}, false
	}
	if _, changed := w.tracker.Observe(r); !changed {
		return Change{}, false
	}
	c := w.change()
	if c.Kill() {
		w.onHold = true
	}
	return c, true
}

func (w *Worker) change() Change {
	return Change{Kind: w.kind, ContainerID: w.containerID, State: w.tracker.State()}
}
