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
// OnFailure, Never), else the pod's (ShouldRestart).
//
// A matching action RestartAllContainers restarts it too, with every
// other container of the pod (see RestartsAll).
func ContainerRestarts(pod *v1.Pod, c *v1.Container, exitCode int) bool {
	switch ruleAction(c, exitCode) {
	case v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleActionRestartAllContainers:
		return true
	}
	if c.RestartPolicy != nil {
		return ShouldRestart(v1.RestartPolicy(*c.RestartPolicy), exitCode)
	}
	return ShouldRestart(pod.Spec.RestartPolicy, exitCode)
}

// RestartsAll says whether an exit of c with exitCode restarts every
// container of the pod in place (Kubernetes' RestartAllContainers): its
// first rule matching the exit has that action. The pod's containers are
// then all stopped, and run again from the first init container, in the
// same sandbox (see Compute).
func RestartsAll(c *v1.Container, exitCode int) bool {
	return ruleAction(c, exitCode) == v1.ContainerRestartRuleActionRestartAllContainers
}

// ruleAction is the action of c's first rule matching exitCode, "" when
// none matches.
func ruleAction(c *v1.Container, exitCode int) v1.ContainerRestartRuleAction {
	for _, r := range c.RestartPolicyRules {
		if r.ExitCodes != nil && exitCodesMatch(r.ExitCodes, exitCode) {
			return r.Action
		}
	}
	return ""
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
