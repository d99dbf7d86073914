package podsync

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/supervision"
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

// RestartAllContainers, step by step, on the documentation's
// restart-all-containers.yaml: under restartPolicy Never, the sidecar
// init2 exits 88, which its rule says restarts every container: the
// running app is killed (the sandbox stays), then the init containers run
// again in order in the same sandbox, then the app starts again (restart
// counts going on), and the old exit never asks again.
func TestComputeRestartAllContainers(t *testing.T) {
	pod := initPod(v1.RestartPolicyNever)
	pod.Spec.InitContainers[1].RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways)
	pod.Spec.InitContainers[1].RestartPolicyRules = []v1.ContainerRestartRule{
		rule(v1.ContainerRestartRuleActionRestartAllContainers, v1.ContainerRestartRuleOnExitCodesOpIn, 88)}
	R, X := runtimeadapter.StateRunning, runtimeadapter.StateExited
	sb := inst(pod, "POD", 0, R, 0)
	now := t0.Add(2 * time.Minute) // after every instance of attempt 0 or 1, before those of 3
	step := func(what string, now time.Time, hist supervision.Records, cs []runtimeadapter.Container, want string) Plan {
		t.Helper()
		p := Compute(Input{Node: node, Pod: pod, Containers: cs, Now: now, Backoff: policy, History: hist})
		if got := summary(p); got != want {
			t.Errorf("%s: plan\n got: %s\nwant: %s", what, got, want)
		}
		return p
	}
	cs := []runtimeadapter.Container{sb, inst(pod, "init1", 0, X, 0), inst(pod, "init2", 0, X, 88), inst(pod, "app", 0, R, 0)}
	p := step("the sidecar exits 88", now, nil, cs, "kill app-0(RestartAllContainers)")
	if r := rec(p.Records, restartAllKey); r.Exit.ContainerID != "init2-0" || !r.Exit.FinishedAt.Equal(now) {
		t.Fatalf("restart-all record %+v, want init2-0's at now", r.Exit)
	}
	hist := p.Records

	cs = []runtimeadapter.Container{sb, inst(pod, "init1", 0, X, 0), inst(pod, "init2", 0, X, 88), inst(pod, "app", 0, X, 137)}
	p = step("all stopped: the first init container again, no new trigger", now.Add(time.Second), hist, cs, "start init1#1(Init)")
	hist = p.Records

	cs = append(cs, inst(pod, "init1", 3, X, 0))
	p = step("then the sidecar", now.Add(time.Minute), hist, cs, "start init2#1(Init)")
	hist = p.Records

	cs = append(cs, inst(pod, "init2", 3, R, 0))
	step("then the app, whatever its old exit under Never", now.Add(2*time.Minute), hist, cs, "start app#1(RestartAllContainers)")

	// The old exit 137 of the app does not finish the pod meanwhile, and an
	// app's own exit asks for a restart of all too.
	pod.Spec.Containers[0].RestartPolicy = ptr.To(v1.ContainerRestartPolicyNever)
	pod.Spec.Containers[0].RestartPolicyRules = pod.Spec.InitContainers[1].RestartPolicyRules
	cs = []runtimeadapter.Container{sb, inst(pod, "init1", 0, X, 0), inst(pod, "init2", 0, R, 0), inst(pod, "app", 0, X, 88)}
	step("the app exits 88", now, nil, cs, "kill init2-0(RestartAllContainers)")
}
