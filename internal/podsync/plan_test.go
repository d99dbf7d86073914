package podsync

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

const node = "n1"

func testPod(policy v1.RestartPolicy, names ...string) *v1.Pod {
	p := &v1.Pod{}
	p.Name, p.Namespace, p.UID = "web", "default", "uid-1234567890"
	p.Spec.RestartPolicy = policy
	for _, n := range names {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: n, Image: "img:1"})
	}
	return p
}

// inst builds an observed container: name "POD" is the sandbox.
func inst(pod *v1.Pod, name string, restarts int, state runtimeadapter.State, exit int) runtimeadapter.Container {
	var spec runtimeadapter.ContainerSpec
	if name == runtimeadapter.SandboxName {
		spec = SandboxSpec(node, pod, "pause:1", restarts)
	} else if strings.HasPrefix(name, "init") {
		// init containers run in sandbox "POD-0" unless named "initX@sb".
		sb := "POD-0"
		if i := strings.Index(name, "@"); i > 0 {
			name, sb = name[:i], name[i+1:]
		}
		for i := range pod.Spec.InitContainers {
			if pod.Spec.InitContainers[i].Name == name {
				spec = AsInit(AppSpec(node, pod, &pod.Spec.InitContainers[i], sb, restarts), sb)
			}
		}
	} else {
		for i := range pod.Spec.Containers {
			if pod.Spec.Containers[i].Name == name {
				spec = AppSpec(node, pod, &pod.Spec.Containers[i], "sb", restarts)
			}
		}
		if spec.Name == "" { // not in spec
			spec = AppSpec(node, pod, &v1.Container{Name: name, Image: "old:1"}, "sb", restarts)
		}
	}
	c := runtimeadapter.Container{
		ID: fmt.Sprintf("%s-%d", name, restarts), Name: spec.Name, Labels: spec.Labels, State: state,
		ExitCode: exit, CreatedAt: t0.Add(time.Duration(restarts) * time.Minute),
		StartedAt: t0.Add(time.Duration(restarts) * time.Minute),
	}
	switch state {
	case runtimeadapter.StateRunning:
		c.RawState = "running"
	case runtimeadapter.StateExited:
		c.RawState = "exited"
		c.FinishedAt = c.StartedAt.Add(time.Second)
	default:
		c.RawState = "created"
	}
	return c
}

// fixedBackoff: every exit may restart delay after it finished.
type fixedBackoff time.Duration

func (d fixedBackoff) RestartAt(_ *v1.Pod, _ string, dead runtimeadapter.Container) time.Time {
	return dead.FinishedAt.Add(time.Duration(d))
}

// summary renders a plan compactly so table rows stay readable.
func summary(p Plan) string {
	var parts []string
	for _, k := range p.Kill {
		parts = append(parts, "kill "+k.Container.ID+"("+k.Reason+")")
	}
	if p.CreateSandbox {
		parts = append(parts, fmt.Sprintf("sandbox#%d", p.SandboxAttempt))
	}
	if p.AdoptSandboxID != "" {
		parts = append(parts, "adopt sandbox "+p.AdoptSandboxID)
	}
	for _, s := range p.Start {
		if s.AdoptID != "" {
			parts = append(parts, "adopt "+s.AdoptID)
			continue
		}
		parts = append(parts, fmt.Sprintf("start %s#%d(%s)", s.Name, s.Restarts, s.Reason))
		if s.Init != strings.HasPrefix(s.Name, "init") {
			parts = append(parts, "(wrong Init flag)")
		}
	}
	for _, r := range p.Remove {
		parts = append(parts, "rm "+r.ID)
	}
	for n, w := range p.Waiting {
		parts = append(parts, "wait "+n+"("+w.Reason+")")
	}
	if !p.RequeueAt.IsZero() {
		parts = append(parts, "requeue+"+p.RequeueAt.Sub(t0).String())
	}
	if p.Done {
		parts = append(parts, "done")
	}
	if p.Terminated {
		parts = append(parts, "terminated")
	}
	return strings.Join(parts, "; ")
}

func TestCompute(t *testing.T) {
	always := testPod(v1.RestartPolicyAlways, "app")
	onFail := testPod(v1.RestartPolicyOnFailure, "app")
	never := testPod(v1.RestartPolicyNever, "app")
	two := testPod(v1.RestartPolicyAlways, "a", "b")
	changed := testPod(v1.RestartPolicyAlways, "app")
	changed.Spec.Containers[0].Image = "img:2"
	hostNet := testPod(v1.RestartPolicyAlways, "app")
	hostNet.Spec.HostNetwork = true
	sbRun := func(p *v1.Pod) runtimeadapter.Container { return inst(p, "POD", 0, runtimeadapter.StateRunning, 0) }
	R, X, U := runtimeadapter.StateRunning, runtimeadapter.StateExited, runtimeadapter.StateUnknown
	// The exited app "app-0" started at t0 and finished at t0+1s.
	now := t0.Add(2 * time.Second)

	tests := []struct {
		name    string
		pod     *v1.Pod
		cs      []runtimeadapter.Container
		backoff time.Duration
		now     time.Time
		want    string
	}{
		{"new pod: sandbox then containers in order", two, nil, 0, now,
			"sandbox#0; start a#0(Created); start b#0(Created)"},
		{"steady state: nothing", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 0, R, 0)}, 0, now, ""},
		{"missing container started", two, []runtimeadapter.Container{sbRun(two), inst(two, "a", 0, R, 0)}, 0, now,
			"start b#0(Created)"},
		{"Always restarts exit 0 after backoff", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 0, X, 0)}, time.Second, now,
			"start app#1(Restart)"},
		{"Always waits for the backoff deadline", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 0, X, 1)}, 10 * time.Second, now,
			"wait app(CrashLoopBackOff); requeue+11s"},
		{"restart exactly at the deadline", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 0, X, 1)}, 10 * time.Second, t0.Add(11 * time.Second),
			"start app#1(Restart)"},
		{"OnFailure restarts a failure", onFail, []runtimeadapter.Container{sbRun(onFail), inst(onFail, "app", 0, X, 2)}, 0, now,
			"start app#1(Restart)"},
		{"OnFailure success completes the pod and stops the sandbox", onFail, []runtimeadapter.Container{sbRun(onFail), inst(onFail, "app", 0, X, 0)}, 0, now,
			"kill POD-0(PodCompleted); done"},
		{"Never does not restart a failure", never, []runtimeadapter.Container{sbRun(never), inst(never, "app", 0, X, 1)}, 0, now,
			"kill POD-0(PodCompleted); done"},
		{"Never with nothing run yet starts", never, nil, 0, now, "sandbox#0; start app#0(Created)"},
		{"spec change kills and replaces without backoff", changed, []runtimeadapter.Container{sbRun(changed), inst(always, "app", 0, R, 0)}, time.Hour, now,
			"kill app-0(SpecChanged); start app#1(SpecChanged)"},
		{"spec change of an exited container skips backoff", changed, []runtimeadapter.Container{sbRun(changed), inst(always, "app", 0, X, 1)}, time.Hour, now,
			"start app#1(SpecChanged)"},
		{"dead sandbox: kill apps, new sandbox, restart apps", always, []runtimeadapter.Container{inst(always, "POD", 0, X, 0), inst(always, "app", 0, R, 0)}, time.Hour, now,
			"kill app-0(SandboxChanged); sandbox#1; start app#1(SandboxChanged)"},
		{"lost sandbox (removed)", always, []runtimeadapter.Container{inst(always, "app", 3, R, 0)}, 0, now,
			"kill app-3(SandboxChanged); sandbox#0; start app#4(SandboxChanged)"},
		{"hostNetwork change replaces the sandbox", hostNet, []runtimeadapter.Container{sbRun(always), inst(hostNet, "app", 0, R, 0)}, 0, now,
			"kill app-0(SandboxChanged); kill POD-0(SandboxChanged); sandbox#1; start app#1(SandboxChanged)"},
		{"duplicate running instance is killed (invariant 1)", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 1, R, 0), inst(always, "app", 0, R, 0)}, 0, now,
			"kill app-0(Duplicate)"},
		{"duplicate sandbox is killed", always, []runtimeadapter.Container{inst(always, "POD", 1, R, 0), sbRun(always), inst(always, "app", 0, R, 0)}, 0, now,
			"kill POD-0(Duplicate)"},
		{"half-created sandbox is adopted, not replaced", always, []runtimeadapter.Container{inst(always, "POD", 0, U, 0)}, 0, now,
			"adopt sandbox POD-0; start app#0(Created)"},
		{"half-created sandbox of an old spec is replaced", hostNet, []runtimeadapter.Container{inst(always, "POD", 0, U, 0)}, 0, now,
			"sandbox#1; start app#0(Created); rm POD-0"},
		// A created, never started container is removed, not stopped:
		// stopping it does nothing, and a kill would be planned again at
		// every sync (a busy loop found by the property tests).
		{"created duplicate next to the running instance is removed", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 1, R, 0), inst(always, "app", 0, U, 0)}, 0, now,
			"rm app-0"},
		{"created older sandbox next to the running one is removed", always, []runtimeadapter.Container{inst(always, "POD", 1, R, 0), inst(always, "POD", 0, U, 0), inst(always, "app", 0, R, 0)}, 0, now,
			"rm POD-0"},
		{"created sandbox of a removed pod is removed", nil, []runtimeadapter.Container{inst(always, "POD", 0, U, 0)}, 0, now,
			"rm POD-0"},
		{"created container of an old spec is removed and replaced", changed, []runtimeadapter.Container{sbRun(changed), inst(always, "app", 0, U, 0)}, 0, now,
			"start app#1(SpecChanged); rm app-0"},
		{"half-created container is adopted", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 2, U, 0)}, 0, now,
			"adopt app-2"},
		{"older dead instances removed, newest kept", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 2, R, 0), inst(always, "app", 1, X, 1), inst(always, "app", 0, X, 1)}, 0, now,
			"rm app-0"},
		{"container dropped from spec is killed and removed", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 0, R, 0), inst(always, "gone", 0, R, 0)}, 0, now,
			"kill gone-0(NotInSpec); rm gone-0"},
		{"removed pod: apps then sandbox, then remove all", nil, []runtimeadapter.Container{sbRun(always), inst(always, "app", 1, R, 0), inst(always, "app", 0, X, 1)}, 0, now,
			"kill app-1(PodRemoved); kill POD-0(PodRemoved); rm app-1; rm app-0; rm POD-0"},
		{"removed pod with nothing left is terminated", nil, nil, 0, now, "terminated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Compute(Input{Node: node, Pod: tt.pod, Containers: tt.cs, Now: tt.now, Backoff: fixedBackoff(tt.backoff), GC: true})
			if got := summary(p); got != tt.want {
				t.Errorf("plan\n got: %s\nwant: %s", got, tt.want)
			}
		})
	}
}

// Without GC, exited instances stay (the pod actor runs GC once a
// minute); a removed pod's containers go at once regardless.
func initPod(policy v1.RestartPolicy) *v1.Pod {
	p := testPod(policy, "app")
	p.Spec.InitContainers = []v1.Container{{Name: "init1", Image: "img:1"}, {Name: "init2", Image: "img:1"}}
	return p
}

func TestComputeInitContainers(t *testing.T) {
	always, never := initPod(v1.RestartPolicyAlways), initPod(v1.RestartPolicyNever)
	R, X := runtimeadapter.StateRunning, runtimeadapter.StateExited
	sb := func(p *v1.Pod) runtimeadapter.Container { return inst(p, "POD", 0, R, 0) }
	now := t0.Add(2 * time.Second)
	tests := []struct {
		name    string
		pod     *v1.Pod
		cs      []runtimeadapter.Container
		backoff time.Duration
		want    string
	}{
		{"new pod: sandbox and the first init container only", always, nil, 0,
			"sandbox#0; start init1#0(Init)"},
		{"first init running: wait", always, []runtimeadapter.Container{sb(always), inst(always, "init1", 0, R, 0)}, 0, ""},
		{"first init done: second starts", always, []runtimeadapter.Container{sb(always), inst(always, "init1", 0, X, 0)}, 0,
			"start init2#0(Init)"},
		{"all inits done: apps start", always, []runtimeadapter.Container{sb(always), inst(always, "init1", 0, X, 0), inst(always, "init2", 0, X, 0)}, 0,
			"start app#0(Created)"},
		{"done inits are not re-run while apps run", always, []runtimeadapter.Container{sb(always), inst(always, "init1", 0, X, 0), inst(always, "init2", 0, X, 0), inst(always, "app", 0, R, 0)}, 0,
			""},
		{"failed init retried after backoff", always, []runtimeadapter.Container{sb(always), inst(always, "init1", 0, X, 1)}, 0,
			"start init1#1(Restart)"},
		{"failed init waits for backoff", always, []runtimeadapter.Container{sb(always), inst(always, "init1", 0, X, 1)}, 10 * time.Second,
			"wait init1(CrashLoopBackOff); requeue+11s"},
		{"Never: failed init fails the pod", never, []runtimeadapter.Container{sb(never), inst(never, "init1", 0, X, 1)}, 0,
			"kill POD-0(PodCompleted); done"},
		{"new sandbox: inits run again, numbering continues", always, []runtimeadapter.Container{inst(always, "POD", 0, X, 0), inst(always, "init1", 0, X, 0), inst(always, "init2", 0, X, 0), inst(always, "app", 0, R, 0)}, 0,
			"kill app-0(SandboxChanged); sandbox#1; start init1#1(Init)"},
		{"inits of an old sandbox do not count", always, []runtimeadapter.Container{inst(always, "POD", 1, R, 0), inst(always, "init1@POD-0", 0, X, 0)}, 0,
			"start init1#1(Init)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Sandbox IDs are "POD-<attempt>"; the running one is the newest.
			p := Compute(Input{Node: node, Pod: tt.pod, Containers: tt.cs, Now: now, Backoff: fixedBackoff(tt.backoff)})
			if got := summary(p); got != tt.want {
				t.Errorf("plan\n got: %s\nwant: %s", got, tt.want)
			}
		})
	}
}

func TestComputeRemovesOldDeadOnlyOnGC(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	cs := []runtimeadapter.Container{inst(pod, "POD", 0, runtimeadapter.StateRunning, 0), inst(pod, "app", 2, runtimeadapter.StateRunning, 0),
		inst(pod, "app", 1, runtimeadapter.StateExited, 1), inst(pod, "app", 0, runtimeadapter.StateExited, 1)}
	if got := summary(Compute(Input{Node: node, Pod: pod, Containers: cs, Now: t0})); got != "" {
		t.Errorf("without GC: %s, want nothing", got)
	}
	if got := summary(Compute(Input{Node: node, Pod: pod, Containers: cs, Now: t0, GC: true})); got != "rm app-0" {
		t.Errorf("with GC: %s, want rm app-0", got)
	}
	if got := summary(Compute(Input{Node: node, Pod: nil, Containers: cs[3:], Now: t0})); got != "rm app-0" {
		t.Errorf("removed pod: %s, want rm app-0", got)
	}
}

func TestComputeIgnoresForeignContainers(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	foreign := runtimeadapter.Container{ID: "x", State: runtimeadapter.StateRunning, Labels: map[string]string{"other": "1"}}
	p := Compute(Input{Node: node, Pod: nil, Containers: []runtimeadapter.Container{foreign}, Now: t0})
	if !p.Terminated || len(p.Kill) != 0 || len(p.Remove) != 0 {
		t.Fatalf("foreign container touched: %s", summary(p))
	}
	_ = pod
}

func TestShouldRestart(t *testing.T) {
	for _, tt := range []struct {
		policy v1.RestartPolicy
		exit   int
		want   bool
	}{
		{v1.RestartPolicyAlways, 0, true}, {v1.RestartPolicyAlways, 1, true},
		{v1.RestartPolicyOnFailure, 0, false}, {v1.RestartPolicyOnFailure, 137, true},
		{v1.RestartPolicyNever, 0, false}, {v1.RestartPolicyNever, 1, false},
	} {
		if got := ShouldRestart(tt.policy, tt.exit); got != tt.want {
			t.Errorf("ShouldRestart(%s, %d) = %v", tt.policy, tt.exit, got)
		}
	}
}

func TestHasGarbage(t *testing.T) {
	p := testPod(v1.RestartPolicyAlways, "app")
	R, X := runtimeadapter.StateRunning, runtimeadapter.StateExited
	sb := inst(p, "POD", 0, R, 0)
	for _, tc := range []struct {
		name string
		cs   []runtimeadapter.Container
		want bool
	}{
		{"running only", []runtimeadapter.Container{sb, inst(p, "app", 0, R, 0)}, false},
		{"one exited instance is kept", []runtimeadapter.Container{sb, inst(p, "app", 1, R, 0), inst(p, "app", 0, X, 1)}, false},
		{"two exited instances: the older goes", []runtimeadapter.Container{sb, inst(p, "app", 2, R, 0), inst(p, "app", 1, X, 1), inst(p, "app", 0, X, 1)}, true},
		{"an older exited sandbox goes", []runtimeadapter.Container{inst(p, "POD", 1, R, 0), inst(p, "POD", 0, X, 0), inst(p, "app", 1, X, 0)}, true},
	} {
		if got := HasGarbage(p, tc.cs); got != tc.want {
			t.Errorf("%s: HasGarbage = %v, want %v", tc.name, got, tc.want)
		}
		plan := Compute(Input{Node: node, Pod: p, Containers: tc.cs, Now: t0, GC: true})
		if got := len(plan.Remove) > 0; got != tc.want {
			t.Errorf("%s: HasGarbage = %v, but a GC plan removes %d", tc.name, tc.want, len(plan.Remove))
		}
	}
}
