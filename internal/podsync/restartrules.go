package podsync

import (
	"slices"

	v1 "k8s.io/api/core/v1"
)

// ContainerRestarts says whether app container c of pod, whose newest
// instance exited with exitCode, is restarted, as the kubelet decides it
// with Kubernetes' ContainerRestartRules: its restartPolicyRules in order,
// the first whose exitCodes match deciding (action Restart: restarted);
// when none matches, the container's own restartPolicy (Always,
// OnFailure, Never), else the pod's (ShouldRestart). An action this
// actorlet does not take (RestartAllContainers, refused at validation)
// decides nothing: the policy does.
func ContainerRestarts(pod *v1.Pod, c *v1.Container, exitCode int) bool {
	for _, r := range c.RestartPolicyRules {
		if r.ExitCodes == nil || !exitCodesMatch(r.ExitCodes, exitCode) {
			continue
		}
		if r.Action == v1.ContainerRestartRuleActionRestart {
			return true
		}
		break
	}
	if c.RestartPolicy != nil {
		return ShouldRestart(v1.RestartPolicy(*c.RestartPolicy), exitCode)
	}
	return ShouldRestart(pod.Spec.RestartPolicy, exitCode)
}

// exitCodesMatch: In, exitCode is one of the values; NotIn, none of them.
func exitCodesMatch(e *v1.ContainerRestartRuleOnExitCodes, exitCode int) bool {
	in := slices.Contains(e.Values, int32(exitCode))
	switch e.Operator {
	case v1.ContainerRestartRuleOnExitCodesOpIn:
		return in
	case v1.ContainerRestartRuleOnExitCodesOpNotIn:
		return !in
	}
	return false
}
