package probe

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// The kubelet's probe defaults, applied by the functions below to fields
// that are zero (or negative).
const (
	DefaultPeriod           = 10 * time.Second
	DefaultTimeout          = 1 * time.Second
	DefaultSuccessThreshold = 1
	DefaultFailureThreshold = 3
)

// InitialDelay is p's initialDelaySeconds: how long after the container
// started no probe runs. Default 0; a nil p has the defaults.
func InitialDelay(p *v1.Probe) time.Duration {
	if p == nil || p.InitialDelaySeconds <= 0 {
		return 0
	}
	return seconds(p.InitialDelaySeconds)
}

// Period is p's periodSeconds: the interval between probes. Default 10 s.
func Period(p *v1.Probe) time.Duration {
	if p == nil || p.PeriodSeconds <= 0 {
		return DefaultPeriod
	}
	return seconds(p.PeriodSeconds)
}

// Timeout is p's timeoutSeconds: how long one probe may take before it
// counts as failed. Default 1 s.
func Timeout(p *v1.Probe) time.Duration {
	if p == nil || p.TimeoutSeconds <= 0 {
		return DefaultTimeout
	}
	return seconds(p.TimeoutSeconds)
}

// SuccessThreshold is p's successThreshold: the successes in a row that
// make a failed probe pass. Default 1. (Kubernetes requires 1 for
// liveness and startup probes; that is validation's business.)
func SuccessThreshold(p *v1.Probe) int {
	if p == nil || p.SuccessThreshold <= 0 {
		return DefaultSuccessThreshold
	}
	return int(p.SuccessThreshold)
}

// FailureThreshold is p's failureThreshold: the failures in a row that
// make a passing probe fail. Default 3.
func FailureThreshold(p *v1.Probe) int {
	if p == nil || p.FailureThreshold <= 0 {
		return DefaultFailureThreshold
	}
	return int(p.FailureThreshold)
}

// FirstDelay is how long after its container started a probe first runs:
// InitialDelay plus jitter times Period, so that the probes of containers
// started together spread over one period, as the kubelet's workers do.
// jitter is a random number in [0, 1) supplied by the caller (e.g.
// rand.Float64()); values outside are clamped into that range. Later
// probes follow every Period.
func FirstDelay(p *v1.Probe, jitter float64) time.Duration {
	jitter = max(0, min(jitter, 1))
	d := time.Duration(jitter * float64(Period(p)))
	if d >= Period(p) { // jitter == 1, or rounding
		d = Period(p) - 1
	}
	return InitialDelay(p) + d
}

// KillGrace is the grace period for killing a container whose liveness or
// startup probe p failed: p's terminationGracePeriodSeconds when set (0
// and negative mean at once), else podGrace, the pod's
// terminationGracePeriodSeconds.
func KillGrace(p *v1.Probe, podGrace time.Duration) time.Duration {
	if p == nil || p.TerminationGracePeriodSeconds == nil {
		return podGrace
	}
	return max(0, time.Duration(*p.TerminationGracePeriodSeconds)*time.Second)
}

func seconds(s int32) time.Duration { return time.Duration(s) * time.Second }
