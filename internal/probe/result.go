package probe

import "fmt"

// Result is the outcome of one probe, or the state a Tracker reports.
type Result int

const (
	// Unknown: the probe could not be carried out (a probe error), or, as
	// a state, nothing is known yet (a startup probe that has not passed).
	// It is the zero value.
	Unknown Result = iota
	// Success: the container passed the probe.
	Success
	// Failure: the container failed the probe (non-zero exit, bad HTTP
	// status, refused or timed-out connection, timed-out exec).
	Failure
)

func (r Result) String() string {
	switch r {
	case Unknown:
		return "Unknown"
	case Success:
		return "Success"
	case Failure:
		return "Failure"
	default:
		return fmt.Sprintf("Result(%d)", int(r))
	}
}

// Kind is what a probe is for.
type Kind string

const (
	Liveness  Kind = "liveness"
	Readiness Kind = "readiness"
	Startup   Kind = "startup"
)

// Initial returns the state a probe of kind k reports for a new container
// before its thresholds are met, as the kubelet: liveness Success (alive
// until proven dead), readiness Failure (not ready until proven ready),
// startup Unknown (not started yet).
func (k Kind) Initial() Result {
	switch k {
	case Liveness:
		return Success
	case Readiness:
		return Failure
	default:
		return Unknown
	}
}
