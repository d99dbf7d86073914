package podstate

import (
	"fmt"
	"time"

	"github.com/actorlet/actorlet/internal/podsync"
)

// StartWait: the last start attempt of a container failed before the
// container ran, for its image or its create. The container shows Reason
// and Message while it waits, and is tried again at Until; a zero Until
// (InvalidImageName) means not before the pod's spec changes, which ends
// every wait.
type StartWait struct {
	Reason, Message string
	Until           time.Time
	// A failed pull only (ErrImagePull): from BackOffAt on (when the
	// kubelet's pod worker would sync the pod again) the container shows
	// BackOffReason (ImagePullBackOff) with BackOffMessage until the
	// image's back-off ends.
	BackOffAt      time.Time
	BackOffReason  string
	BackOffMessage string
	Image          string // the image pulled
	Evented        bool   // its back-off events were sent
}

// holdForWaits takes out of the plan the starts of containers whose last
// attempt failed and whose retry is not due, and requeues when that
// changes. Until a start succeeds the container shows the kubelet's reason
// for the last failure, also while the retry runs (the kubelet shows the
// last sync's error until a sync succeeds).
func (p *Pod) holdForWaits(out *effects, plan *podsync.Plan, now time.Time) {
	if len(p.waits) == 0 {
		return
	}
	kept := plan.Start[:0:0]
	for _, s := range plan.Start {
		w, ok := p.waits[s.Name]
		if !ok || s.AdoptID != "" {
			kept = append(kept, s)
			continue
		}
		due := !w.Until.IsZero() && !now.Before(w.Until)
		reason, msg, next := w.Reason, w.Message, w.Until
		if !w.BackOffAt.IsZero() {
			if now.Before(w.BackOffAt) {
				next = minTime(w.BackOffAt, w.Until)
			} else {
				reason, msg = w.BackOffReason, w.BackOffMessage
				if !w.Evented && !due {
					w.Evented = true
					put(&p.waits, s.Name, w)
					out.add(Emit{Reason: "BackOff", Container: s.Name, Message: fmt.Sprintf("Back-off pulling image %q", w.Image)})
					out.add(Emit{Warning: true, Reason: "Failed", Container: s.Name, Message: "Error: " + w.BackOffReason})
				}
			}
		}
		plan.Waiting[s.Name] = podsync.Waiting{Reason: reason, Message: msg}
		if due {
			kept = append(kept, s) // tried again now
			continue
		}
		if !next.IsZero() {
			p.schedule(out, next)
		}
	}
	plan.Start = kept
}

// minTime is the earlier of a and b.
func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// Waiting reasons of a start that waits for a ConfigMap or Secret: a
// volume that cannot be set up (the kubelet's pod stays
// ContainerCreating, with FailedMount events) or env that cannot be
// resolved (CreateContainerConfigError).
const (
	ReasonContainerCreating          = "ContainerCreating"
	ReasonCreateContainerConfigError = "CreateContainerConfigError"
)

// retryObjectWaits ends the waits of starts that may wait for a
// ConfigMap or Secret: the pod's objects changed, so they are tried again
// at once.
func (p *Pod) retryObjectWaits() {
	for name, w := range p.waits {
		if w.Reason == ReasonContainerCreating || w.Reason == ReasonCreateContainerConfigError {
			delete(p.waits, name)
		}
	}
}
