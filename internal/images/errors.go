package images

import (
	"errors"
	"fmt"
	"time"
)

// The kubelet's container waiting reasons for image failures, as Reason
// returns them.
const (
	ReasonErrImagePull      = "ErrImagePull"
	ReasonImagePullBackOff  = "ImagePullBackOff"
	ReasonErrImageNeverPull = "ErrImageNeverPull"
	ReasonImageInspectError = "ImageInspectError"
	ReasonInvalidImageName  = "InvalidImageName"
)

// Sentinel errors of Ensure; test with errors.Is. Each matches one reason.
var (
	// ErrImagePull: a pull failed (ReasonErrImagePull). The error is a
	// *PullError, which also wraps the runtime's error.
	ErrImagePull = errors.New("image pull failed")
	// ErrImagePullBackOff: the image is in back-off after a failed pull and
	// was not pulled (ReasonImagePullBackOff). The error is a *BackOffError.
	ErrImagePullBackOff = errors.New("back-off pulling image")
	// ErrImageNeverPull: the image is absent and the pull policy is Never
	// (ReasonErrImageNeverPull).
	ErrImageNeverPull = errors.New("not present with pull policy Never")
	// ErrImageInspect: the runtime could not say whether the image is
	// present (ReasonImageInspectError); the runtime's error is wrapped too.
	ErrImageInspect = errors.New("inspect failed")
	// ErrInvalidImageName: the reference does not parse
	// (ReasonInvalidImageName).
	ErrInvalidImageName = errors.New("invalid image name")
	// ErrClosed: Ensure was called after Close, or Close cancelled the pull
	// it waited for. It has no reason of its own.
	ErrClosed = errors.New("image manager closed")
)

// reasons maps each sentinel to its reason, most specific first.
var reasons = []struct {
	err    error
	reason string
}{
	{ErrImagePullBackOff, ReasonImagePullBackOff},
	{ErrImageNeverPull, ReasonErrImageNeverPull},
	{ErrInvalidImageName, ReasonInvalidImageName},
	{ErrImageInspect, ReasonImageInspectError},
	{ErrImagePull, ReasonErrImagePull},
}

// Reason returns the kubelet's waiting reason for an error returned by
// Ensure (one of the Reason* constants), or "" for nil and for errors that
// have none (ErrClosed, the caller's context ending while a pull runs): the
// kubelet shows ContainerCreating then.
func Reason(err error) string {
	if err == nil {
		return ""
	}
	for _, r := range reasons {
		if errors.Is(err, r.err) {
			return r.reason
		}
	}
	return ""
}

// PullError is the error of a failed pull. errors.Is(err, ErrImagePull)
// holds, and so does errors.Is for the runtime's error Err (e.g.
// runtimeadapter.ErrNotFound for a missing tag).
type PullError struct {
	Image string // the reference as the caller gave it
	Err   error  // the runtime's error
	// Until is when the next pull of the image is allowed: the end of the
	// back-off this failure started or extended (zero when the back-off is
	// disabled, WithBackOff(0, …)).
	Until time.Time
}

func (e *PullError) Error() string {
	return fmt.Sprintf("failed to pull image %q: %v", e.Image, e.Err)
}

// Unwrap returns ErrImagePull and Err.
func (e *PullError) Unwrap() []error { return []error{ErrImagePull, e.Err} }

// InvalidNameError is the error of a reference that does not parse.
// errors.Is(err, ErrInvalidImageName) holds.
type InvalidNameError struct {
	Image string // the reference as the caller gave it
	Err   error  // the parser's error: why it does not parse
}

func (e *InvalidNameError) Error() string {
	return fmt.Sprintf("image %q: %v: %v", e.Image, ErrInvalidImageName, e.Err)
}

// Unwrap returns ErrInvalidImageName and Err.
func (e *InvalidNameError) Unwrap() []error { return []error{ErrInvalidImageName, e.Err} }

// BackOffError is returned by Ensure while an image is in back-off after a
// failed pull. errors.Is(err, ErrImagePullBackOff) holds, and so does
// errors.Is for the last pull's runtime error (Last), but not
// errors.Is(err, ErrImagePull): no pull was attempted.
type BackOffError struct {
	Image string    // the reference as the caller gave it
	Until time.Time // when the next pull is allowed
	Last  error     // the runtime's error of the last failed pull
}

func (e *BackOffError) Error() string {
	return fmt.Sprintf("back-off pulling image %q until %s: last pull failed: %v",
		e.Image, e.Until.Format(time.RFC3339), e.Last)
}

// Unwrap returns ErrImagePullBackOff and Last.
func (e *BackOffError) Unwrap() []error { return []error{ErrImagePullBackOff, e.Last} }
