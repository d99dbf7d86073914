package actors

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	utilwait "k8s.io/apimachinery/pkg/util/wait"

	"github.com/actorlet/actorlet/internal/images"
	"github.com/actorlet/actorlet/internal/podstate"
	"github.com/actorlet/actorlet/internal/volumeprep"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// The kubelet's waiting reasons for a create that failed (its
// kuberuntime package's ErrCreateContainer and ErrCreateContainerConfig).
const (
	reasonCreateContainerError       = "CreateContainerError"
	reasonCreateContainerConfigError = "CreateContainerConfigError"
)

// startWait: the last start attempt of a container failed before the
// container ran (see podstate.StartWait, which holds it).
type startWait = podstate.StartWait

// retryAt is when a failed start attempt is tried again: the kubelet's
// requeue of a failed pod sync, 10 s plus up to 50 %.
func (w *worker) retryAt() time.Time {
	return w.cfg.Clock.Now().Add(utilwait.Jitter(failedStartRetry, failedStartJitter))
}

// recordWait records why c's start attempt failed (see startWait).
func (w *worker) recordWait(c *v1.Container, sw startWait) {
	if w.waits == nil {
		w.waits = map[string]startWait{}
	}
	w.waits[c.Name] = sw
	fields := []zap.Field{zap.String("container", c.Name), zap.String("reason", sw.Reason), zap.String("message", sw.Message)}
	if !sw.Until.IsZero() {
		fields = append(fields, zap.Time("retryAt", sw.Until))
	}
	w.log.Warn("container waits: its start attempt failed", fields...)
}

// failedStart records a create the runtime refused or could not be
// configured, with the kubelet's Failed event: the container waits with
// reason and msg, no instance is made, its restart count stays, and it is
// tried again on the failed-sync curve.
func (w *worker) failedStart(c *v1.Container, reason, msg string) {
	w.event(messages.EventWarning, "Failed", c.Name, "Error: "+msg)
	w.recordWait(c, startWait{Reason: reason, Message: msg, Until: w.retryAt()})
}

// failedMount records a start that waits for its pod's volumes: a
// ConfigMap or Secret (or a key) a volume needs is missing (err joins one
// *volumeprep.MountError per volume). As the kubelet: a Warning
// FailedMount event per volume, `MountVolume.SetUp failed for volume
// "config" : configmap "app" not found` (once per sync), and the
// container waits with reason ContainerCreating.
func (w *worker) failedMount(c *v1.Container, err error) {
	for _, msg := range mountMessages(err) {
		w.mountEvent(msg)
	}
	w.recordWait(c, startWait{Reason: podstate.ReasonContainerCreating, Until: w.retryAt()})
}

// mountEvent sends a FailedMount event once per worker.
func (w *worker) mountEvent(msg string) {
	if w.mountEvents[msg] {
		return
	}
	if w.mountEvents == nil {
		w.mountEvents = map[string]bool{}
	}
	w.mountEvents[msg] = true
	w.event(messages.EventWarning, "FailedMount", "", msg)
}

// mountMessages lists the messages of the *volumeprep.MountError values
// err holds (errors.Join'ed).
func mountMessages(err error) []string {
	var out []string
	var me *volumeprep.MountError
	if errors.As(err, &me) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				if errors.As(e, &me) {
					out = append(out, me.Error())
				}
			}
		} else {
			out = append(out, me.Error())
		}
	}
	return out
}

// refreshVolumes writes the pod's volumes of ConfigMaps and Secrets again
// (its objects changed): changed files are swapped whole, so running
// containers see them without a restart. A volume whose object is gone
// keeps its files, with a FailedMount event, as the kubelet's.
func (w *worker) refreshVolumes() error {
	err := volumeprep.PrepareWith(w.cfg.Spec, w.objects, w.pod)
	var me *volumeprep.MountError
	if err != nil && !errors.As(err, &me) {
		return fmt.Errorf("pod %s: %w", w.podName(), err)
	}
	for _, msg := range volumeprep.MissingObjects(w.cfg.Spec, w.objects, w.pod) {
		w.mountEvent(msg)
	}
	w.log.Info("volumes of ConfigMaps and Secrets written", zap.Stringer("objects", w.objects))
	return nil
}

// errAborted: the worker's starts were aborted (the pod was removed or its
// spec changed, see abortStarts) or its actor stopped; not a sync error.
var errAborted = errors.New("pod removed, changed or its actor stopped")

// createRefusedError is a create the runtime refused (an invalid config, a
// missing image …): the kubelet's CreateContainerError. Err is the
// runtime's error.
type createRefusedError struct {
	Pod, Container string
	Err            error
}

func (e *createRefusedError) Error() string {
	return fmt.Sprintf("pod %s: create container %s: %v", e.Pod, e.Container, e.Err)
}

func (e *createRefusedError) Unwrap() error { return e.Err }

// createError classifies a failed create of container name: a runtime
// that cannot be reached, a call that timed out or a name conflict is a
// failed sync, retried as such; anything else the runtime refused.
func createError(pod, name string, err error) error {
	if errors.Is(err, runtimeadapter.ErrUnavailable) || errors.Is(err, runtimeadapter.ErrNameConflict) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("pod %s: create container %s: %w", pod, name, err)
	}
	return &createRefusedError{Pod: pod, Container: name, Err: err}
}

// image makes c's image available by its imagePullPolicy, with the
// kubelet's events (Pulling only for an attempt that pulls; Pulled;
// Failed; BackOff; InspectFailed; ErrImageNeverPull). It reports whether
// the container may be created. When it may not and err is nil, w.waits
// says why and when to try again (or the worker was aborted); err is a
// failure to retry as a failed sync (the image manager closed, a wait for a
// pull that outlasted the call's timeout).
// imagePresent is the kubelet's event for an instance of c whose image
// needed no pull (with an image manager, as image reports it).
func (w *worker) imagePresent(c *v1.Container) {
	if w.cfg.Images != nil {
		w.event(messages.EventNormal, "Pulled", c.Name, fmt.Sprintf("Container image %q already present on machine", c.Image))
	}
}

func (w *worker) image(c *v1.Container) (bool, error) {
	if _, err := images.Normalize(c.Image); err != nil {
		// As the kubelet: not retried until the spec changes.
		why := err
		var ne *images.InvalidNameError
		if errors.As(err, &ne) {
			why = ne.Err
		}
		msg := fmt.Sprintf("Failed to apply default image tag %q: couldn't parse image name %q: %v", c.Image, c.Image, why)
		w.event(messages.EventWarning, "InspectFailed", c.Name, msg)
		w.event(messages.EventWarning, "Failed", c.Name, "Error: "+images.ReasonInvalidImageName)
		w.recordWait(c, startWait{Reason: images.ReasonInvalidImageName, Message: msg})
		return false, nil
	}
	ctx, cancel := w.startCall(w.cfg.RuntimeTimeout)
	defer cancel()
	if w.cfg.Images == nil {
		if c.ImagePullPolicy == v1.PullNever {
			return true, nil // create fails clearly if it is absent
		}
		if err := w.cfg.Runtime.EnsureImage(ctx, c.Image); err != nil {
			if w.aborted() {
				return false, nil
			}
			w.failedPull(c, err, time.Time{})
			return false, nil
		}
		return true, nil
	}
	policy := c.ImagePullPolicy
	if policy == "" {
		policy = images.DefaultPolicy(c.Image)
	}
	start := w.cfg.Clock.Now()
	pulled := false
	var release func()
	held := w.slot.held
	err := w.cfg.Images.EnsureNotify(ctx, c.Image, policy, func() {
		pulled = true
		w.slot.release(false) // a pull holds no start slot: other pods start meanwhile
		w.appTurnDone()       // nor holds back other pods' sandboxes (see startOrder)
		w.event(messages.EventNormal, "Pulling", c.Name, fmt.Sprintf("Pulling image %q", c.Image))
		if w.cfg.progress != nil {
			w.pulling = c.Name
			release = w.cfg.progress.wait(c.Image, w)
		}
	})
	if release != nil {
		release() // only this waiter detaches; the pull goes on for the others
	}
	if held {
		if err := w.slot.acquire(ctx); err != nil {
			if w.aborted() {
				return false, nil // the pod was removed or changed while it waited
			}
			return false, fmt.Errorf("pod %s: container %s: wait for a start slot after its image's pull: %w", w.podName(), c.Name, err)
		}
	}
	var pe *images.PullError
	var bo *images.BackOffError
	switch reason := images.Reason(err); {
	case err == nil && pulled:
		w.event(messages.EventNormal, "Pulled", c.Name, fmt.Sprintf("Successfully pulled image %q in %s", c.Image, w.cfg.Clock.Since(start).Round(time.Millisecond)))
		return true, nil
	case err == nil:
		w.imagePresent(c)
		return true, nil
	case w.aborted():
		return false, nil // the pod was removed or changed
	case errors.As(err, &bo):
		msg := fmt.Sprintf("Back-off pulling image %q: %s: %v", c.Image, images.ReasonErrImagePull, bo.Last)
		w.event(messages.EventNormal, "BackOff", c.Name, fmt.Sprintf("Back-off pulling image %q", c.Image))
		w.event(messages.EventWarning, "Failed", c.Name, "Error: "+images.ReasonImagePullBackOff)
		w.recordWait(c, startWait{Reason: images.ReasonImagePullBackOff, Message: msg, Until: bo.Until, Evented: true})
	case errors.As(err, &pe):
		w.failedPull(c, pe.Err, pe.Until)
	case reason == images.ReasonErrImageNeverPull:
		msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image)
		w.event(messages.EventWarning, "ErrImageNeverPull", c.Name, msg)
		w.event(messages.EventWarning, "Failed", c.Name, "Error: "+reason)
		w.recordWait(c, startWait{Reason: reason, Message: msg, Until: w.retryAt()})
	case reason == images.ReasonImageInspectError:
		msg := fmt.Sprintf("Failed to inspect image %q: %v", c.Image, lastCause(err))
		w.event(messages.EventWarning, "InspectFailed", c.Name, msg)
		w.event(messages.EventWarning, "Failed", c.Name, "Error: "+reason)
		w.recordWait(c, startWait{Reason: reason, Message: msg, Until: w.retryAt()})
	default:
		return false, fmt.Errorf("pod %s: container %s: %w", w.podName(), c.Name, err)
	}
	return false, nil
}

// failedPull records a pull of c's image that failed with the runtime's
// error cause (the kubelet's ErrImagePull): the next pull is allowed at
// until (the image's back-off; zero: none known).
func (w *worker) failedPull(c *v1.Container, cause error, until time.Time) {
	w.event(messages.EventWarning, "Failed", c.Name, fmt.Sprintf("Failed to pull image %q: %v", c.Image, cause))
	w.event(messages.EventWarning, "Failed", c.Name, "Error: "+images.ReasonErrImagePull)
	next := w.retryAt()
	if until.IsZero() {
		until = next
	}
	w.recordWait(c, startWait{Reason: images.ReasonErrImagePull, Message: cause.Error(), Until: until, BackOffAt: next, Image: c.Image, BackOffReason: images.ReasonImagePullBackOff,
		BackOffMessage: fmt.Sprintf("Back-off pulling image %q: %s: %v", c.Image, images.ReasonErrImagePull, cause)})
}

// lastCause is the last error err wraps with fmt.Errorf's %w (the
// runtime's, in the image manager's errors), else err.
func lastCause(err error) error {
	if u, ok := err.(interface{ Unwrap() []error }); ok {
		if errs := u.Unwrap(); len(errs) > 0 {
			return errs[len(errs)-1]
		}
	}
	return err
}
