package podsync

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/actorlet/actorlet/runtimeadapter"
)

func rule(action v1.ContainerRestartRuleAction, op v1.ContainerRestartRuleOnExitCodesOperator, codes ...int32) v1.ContainerRestartRule {
	return v1.ContainerRestartRule{Action: action, ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes}}
}

// ContainerRestarts, table-tested: the first matching rule decides, else
// the container's restartPolicy, else the pod's.
func TestContainerRestarts(t *testing.T) {
	const restart, all = v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleActionRestartAllContainers
	const in, notIn = v1.ContainerRestartRuleOnExitCodesOpIn, v1.ContainerRestartRuleOnExitCodesOpNotIn
	never, onFailure, always := ptr.To(v1.ContainerRestartPolicyNever), ptr.To(v1.ContainerRestartPolicyOnFailure), ptr.To(v1.ContainerRestartPolicyAlways)
	tests := []struct {
		name  string
		pod   v1.RestartPolicy
		own   *v1.ContainerRestartPolicy
		rules []v1.ContainerRestartRule
		exit  int
		want  bool
	}{
		{name: "pod Always", pod: v1.RestartPolicyAlways, exit: 0, want: true},
		{name: "pod OnFailure, success", pod: v1.RestartPolicyOnFailure, exit: 0, want: false},
		{name: "pod Never, failure", pod: v1.RestartPolicyNever, exit: 1, want: false},
		{name: "own Never beats pod Always", pod: v1.RestartPolicyAlways, own: never, exit: 1, want: false},
		{name: "own OnFailure under pod Never", pod: v1.RestartPolicyNever, own: onFailure, exit: 2, want: true},
		{name: "own Always under pod Never", pod: v1.RestartPolicyNever, own: always, exit: 0, want: true},
		{name: "Restart In: matches", pod: v1.RestartPolicyNever, own: never, rules: []v1.ContainerRestartRule{rule(restart, in, 42, 43)}, exit: 43, want: true},
		{name: "Restart In: no match, the policy", pod: v1.RestartPolicyNever, own: never, rules: []v1.ContainerRestartRule{rule(restart, in, 42)}, exit: 1, want: false},
		{name: "Restart NotIn: matches", pod: v1.RestartPolicyNever, own: never, rules: []v1.ContainerRestartRule{rule(restart, notIn, 0)}, exit: 1, want: true},
		{name: "Restart NotIn: no match", pod: v1.RestartPolicyNever, own: never, rules: []v1.ContainerRestartRule{rule(restart, notIn, 0)}, exit: 0, want: false},
		{name: "first matching rule decides", pod: v1.RestartPolicyNever, own: never,
			rules: []v1.ContainerRestartRule{rule(restart, in, 7), rule(restart, notIn, 7)}, exit: 7, want: true},
		{name: "a rule without exitCodes never matches", pod: v1.RestartPolicyNever, own: never,
			rules: []v1.ContainerRestartRule{{Action: restart}}, exit: 1, want: false},
		{name: "RestartAllContainers (refused at validation) decides nothing", pod: v1.RestartPolicyNever, own: onFailure,
			rules: []v1.ContainerRestartRule{rule(all, in, 88), rule(restart, in, 88)}, exit: 88, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := testPod(tt.pod, "app")
			c := &pod.Spec.Containers[0]
			c.RestartPolicy, c.RestartPolicyRules = tt.own, tt.rules
			if got := ContainerRestarts(pod, c, tt.exit); got != tt.want {
				t.Errorf("ContainerRestarts(exit %d) = %v, want %v", tt.exit, got, tt.want)
			}
		})
	}
}

// The plan follows the rules: a container whose own policy is Never is
// restarted (after CrashLoopBackOff) on an exit code its rule names and
// not on another; a pod whose every app is done for good is done, even
// under the pod's Always.
func TestComputeRestartRules(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	c := &pod.Spec.Containers[0]
	c.RestartPolicy = ptr.To(v1.ContainerRestartPolicyNever)
	c.RestartPolicyRules = []v1.ContainerRestartRule{rule(v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleOnExitCodesOpIn, 42)}
	sb := inst(pod, "POD", 0, runtimeadapter.StateRunning, 0)
	now := t0.Add(2 * time.Second)
	for exit, want := range map[int]string{
		42: "start app#1(Restart)",
		1:  "kill POD-0(PodCompleted); done",
	} {
		cs := []runtimeadapter.Container{sb, inst(pod, "app", 0, runtimeadapter.StateExited, exit)}
		if got := summary(Compute(Input{Node: node, Pod: pod, Containers: cs, Now: now, History: armed(cs, time.Second), Backoff: policy})); got != want {
			t.Errorf("exit %d: plan %q, want %q", exit, got, want)
		}
	}
}
