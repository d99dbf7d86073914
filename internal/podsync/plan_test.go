package podsync

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/supervision"
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
				if IsSidecar(&pod.Spec.InitContainers[i]) {
					spec = AsSidecar(spec, i)
				}
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

// policy is the CrashLoopBackOff of the plan tests: the kubelet's.
var policy = supervision.DefaultBackoffPolicy()

// armed is a history in which every container of cs has a live back-off
// entry of delay d (its last restart decided at t0): its next exit waits
// d. A zero d is no history: a first exit, restarted at once.
func armed(cs []runtimeadapter.Container, d time.Duration) supervision.Records {
	return armedAt(cs, d, t0)
}

// armedAt is armed with the last restart decided at lastUpdate.
func armedAt(cs []runtimeadapter.Container, d time.Duration, lastUpdate time.Time) supervision.Records {
	if d == 0 {
		return nil
	}
	var h supervision.Records
	for _, c := range cs {
		if name := c.Labels[runtimeadapter.LabelContainerName]; name != runtimeadapter.SandboxName {
			h = h.Set(name, supervision.ContainerRecord{Backoff: supervision.BackoffEntry{Hash: labelHash(&c), Delay: d, LastUpdate: lastUpdate}})
		}
	}
	return h
}

// recorded is the history of one exit of inst (whose instance may then be
// removed), its back-off entry armed with delay d since its start.
func recorded(inst runtimeadapter.Container, d time.Duration) supervision.Records {
	r := supervision.ContainerRecord{Exit: exitOf(&inst), RestartAt: inst.FinishedAt.Add(d)}
	if d > 0 {
		r.Backoff = supervision.BackoffEntry{Hash: labelHash(&inst), Delay: d, LastUpdate: inst.StartedAt}
	}
	return supervision.Records{{Name: inst.Labels[runtimeadapter.LabelContainerName], Record: r}}
}

// startFailedInst is inst after a start that failed, as Docker shows it.
func startFailedInst(inst runtimeadapter.Container) runtimeadapter.Container {
	inst.State, inst.RawState, inst.ExitCode = runtimeadapter.StateUnknown, "created", 127
	inst.StartedAt, inst.FinishedAt = time.Time{}, time.Time{}
	inst.Error = `exec: "/does-not-exist": stat /does-not-exist: no such file or directory`
	return inst
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
	for _, c := range p.DropStandby {
		parts = append(parts, "drop "+c.ID)
	}
	for _, s := range p.Start {
		if s.AdoptID != "" && s.Standby {
			parts = append(parts, fmt.Sprintf("adopt %s(%s, standby)", s.AdoptID, s.Reason))
			continue
		}
		if s.AdoptID != "" {
			parts = append(parts, "adopt "+s.AdoptID)
			continue
		}
		parts = append(parts, fmt.Sprintf("start %s#%d(%s)", s.Name, s.Restarts, s.Reason))
		if s.Init != strings.HasPrefix(s.Name, "init") {
			parts = append(parts, "(wrong Init flag)")
		}
	}
	for _, s := range p.Standby {
		parts = append(parts, fmt.Sprintf("standby %s#%d", s.Name, s.Restarts))
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
		backoff time.Duration // the wait of the next exit (see armed)
		now     time.Time
		want    string
		hist    supervision.Records // instead of armed(cs, backoff)
	}{
		{"new pod: sandbox then containers in order", two, nil, 0, now,
			"sandbox#0; start a#0(Created); start b#0(Created)", nil},
		{"steady state: nothing", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 0, R, 0)}, 0, now, "", nil},
		{"missing container started", two, []runtimeadapter.Container{sbRun(two), inst(two, "a", 0, R, 0)}, 0, now,
			"start b#0(Created)", nil},
		{"Always restarts exit 0 after backoff", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 0, X, 0)}, time.Second, now,
			"start app#1(Restart)", nil},
		{"Always waits for the backoff deadline", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 0, X, 1)}, 10 * time.Second, now,
			"wait app(CrashLoopBackOff); requeue+11s", nil},
		{"restart exactly at the deadline", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 0, X, 1)}, 10 * time.Second, t0.Add(11 * time.Second),
			"start app#1(Restart)", nil},
		{"OnFailure restarts a failure", onFail, []runtimeadapter.Container{sbRun(onFail), inst(onFail, "app", 0, X, 2)}, 0, now,
			"start app#1(Restart)", nil},
		{"OnFailure success completes the pod and stops the sandbox", onFail, []runtimeadapter.Container{sbRun(onFail), inst(onFail, "app", 0, X, 0)}, 0, now,
			"kill POD-0(PodCompleted); done", nil},
		{"Never does not restart a failure", never, []runtimeadapter.Container{sbRun(never), inst(never, "app", 0, X, 1)}, 0, now,
			"kill POD-0(PodCompleted); done", nil},
		{"Never with nothing run yet starts", never, nil, 0, now, "sandbox#0; start app#0(Created)", nil},
		{"spec change kills and replaces without backoff", changed, []runtimeadapter.Container{sbRun(changed), inst(always, "app", 0, R, 0)}, time.Hour, now,
			"kill app-0(SpecChanged); start app#1(SpecChanged)", nil},
		{"spec change of an exited container skips backoff", changed, []runtimeadapter.Container{sbRun(changed), inst(always, "app", 0, X, 1)}, time.Hour, now,
			"start app#1(SpecChanged)", nil},
		{"dead sandbox: kill apps, new sandbox, restart apps", always, []runtimeadapter.Container{inst(always, "POD", 0, X, 0), inst(always, "app", 0, R, 0)}, time.Hour, now,
			"kill app-0(SandboxChanged); sandbox#1; start app#1(SandboxChanged)", nil},
		{"lost sandbox (removed)", always, []runtimeadapter.Container{inst(always, "app", 3, R, 0)}, 0, now,
			"kill app-3(SandboxChanged); sandbox#0; start app#4(SandboxChanged)", nil},
		{"hostNetwork change replaces the sandbox", hostNet, []runtimeadapter.Container{sbRun(always), inst(hostNet, "app", 0, R, 0)}, 0, now,
			"kill app-0(SandboxChanged); kill POD-0(SandboxChanged); sandbox#1; start app#1(SandboxChanged)", nil},
		{"duplicate running instance is killed (invariant 1)", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 1, R, 0), inst(always, "app", 0, R, 0)}, 0, now,
			"kill app-0(Duplicate)", nil},
		{"duplicate sandbox is killed", always, []runtimeadapter.Container{inst(always, "POD", 1, R, 0), sbRun(always), inst(always, "app", 0, R, 0)}, 0, now,
			"kill POD-0(Duplicate)", nil},
		{"half-created sandbox is adopted, not replaced", always, []runtimeadapter.Container{inst(always, "POD", 0, U, 0)}, 0, now,
			"adopt sandbox POD-0; start app#0(Created)", nil},
		{"half-created sandbox of an old spec is replaced", hostNet, []runtimeadapter.Container{inst(always, "POD", 0, U, 0)}, 0, now,
			"sandbox#1; start app#0(Created); rm POD-0", nil},
		// A created, never started container is removed, not stopped:
		// stopping it does nothing, and a kill would be planned again at
		// every sync (a busy loop found by the property tests).
		{"created duplicate next to the running instance is removed", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 1, R, 0), inst(always, "app", 0, U, 0)}, 0, now,
			"rm app-0", nil},
		{"created older sandbox next to the running one is removed", always, []runtimeadapter.Container{inst(always, "POD", 1, R, 0), inst(always, "POD", 0, U, 0), inst(always, "app", 0, R, 0)}, 0, now,
			"rm POD-0", nil},
		{"created sandbox of a removed pod is removed", nil, []runtimeadapter.Container{inst(always, "POD", 0, U, 0)}, 0, now,
			"rm POD-0", nil},
		{"created container of an old spec is removed and replaced", changed, []runtimeadapter.Container{sbRun(changed), inst(always, "app", 0, U, 0)}, 0, now,
			"start app#1(SpecChanged); rm app-0", nil},
		{"half-created container is adopted", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 2, U, 0)}, 0, now,
			"adopt app-2", nil},
		{"older dead instances removed, newest kept", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 2, R, 0), inst(always, "app", 1, X, 1), inst(always, "app", 0, X, 1)}, 0, now,
			"rm app-0", nil},
		{"container dropped from spec is killed and removed", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 0, R, 0), inst(always, "gone", 0, R, 0)}, 0, now,
			"kill gone-0(NotInSpec); rm gone-0", nil},
		{"removed pod: apps then sandbox, then remove all", nil, []runtimeadapter.Container{sbRun(always), inst(always, "app", 1, R, 0), inst(always, "app", 0, X, 1)}, 0, now,
			"kill app-1(PodRemoved); kill POD-0(PodRemoved); rm app-1; rm app-0; rm POD-0", nil},
		{"removed pod with nothing left is terminated", nil, nil, 0, now, "terminated", nil},

		// CrashLoopBackOff as the kubelet's: a first exit (no back-off
		// entry) is restarted at once, whatever the policy.
		{"first exit restarts at once", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 0, X, 1)}, 0, t0.Add(time.Second),
			"start app#1(Restart)", nil},
		{"an exit long after the last restart (expired entry) restarts at once", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 0, X, 1)}, 0, now,
			"start app#1(Restart)", supervision.RecordsOf(map[string]supervision.ContainerRecord{"app": {Backoff: supervision.BackoffEntry{
				Hash: ContainerHash(&always.Spec.Containers[0]), Delay: 40 * time.Second, LastUpdate: t0.Add(time.Second - 600*time.Second - 1)}}})},
		{"an exit 600 s after the last restart (live entry) waits", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 0, X, 1)}, 0, now,
			"wait app(CrashLoopBackOff); requeue+41s", supervision.RecordsOf(map[string]supervision.ContainerRecord{"app": {Backoff: supervision.BackoffEntry{
				Hash: ContainerHash(&always.Spec.Containers[0]), Delay: 40 * time.Second, LastUpdate: t0.Add(time.Second - 600*time.Second)}}})},

		// Exits remembered after their instance was removed (docker rm,
		// GC): completed work is not run again; counts go on.
		{"OnFailure: completed, removed: not run again, the pod completes", onFail, []runtimeadapter.Container{sbRun(onFail)}, 0, now,
			"kill POD-0(PodCompleted); done", recorded(inst(onFail, "app", 0, X, 0), 0)},
		{"Never: failed, removed: not run again", never, []runtimeadapter.Container{sbRun(never)}, 0, now,
			"kill POD-0(PodCompleted); done", recorded(inst(never, "app", 0, X, 1), 0)},
		{"Never: completed, removed, beside a running one: nothing", testPod(v1.RestartPolicyNever, "a", "b"),
			[]runtimeadapter.Container{sbRun(never), inst(testPod(v1.RestartPolicyNever, "a", "b"), "b", 0, R, 0)}, 0, now,
			"", recorded(inst(testPod(v1.RestartPolicyNever, "a", "b"), "a", 0, X, 0), 0)},
		{"Always: removed exit waits its back-off", always, []runtimeadapter.Container{sbRun(always)}, 0, now,
			"wait app(CrashLoopBackOff); requeue+3m11s", recorded(inst(always, "app", 3, X, 1), 10*time.Second)},
		{"Always: removed exit restarts at its deadline, the count going on", always, []runtimeadapter.Container{sbRun(always)}, 0, t0.Add(191 * time.Second),
			"start app#4(Restart)", recorded(inst(always, "app", 3, X, 1), 10*time.Second)},
		{"a recorded exit newer than the listed one wins (which GC removes)", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 2, X, 1)}, 0, t0.Add(191 * time.Second),
			"start app#4(Restart); rm app-2", recorded(inst(always, "app", 3, X, 1), 10*time.Second)},
		{"a listed exit newer than the record is the one", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 4, X, 1)}, 0, t0.Add(241 * time.Second),
			"wait app(CrashLoopBackOff); requeue+4m11s", recorded(inst(always, "app", 3, X, 1), 10*time.Second)},
		{"lost sandbox: a completed, removed OnFailure container stays done", testPod(v1.RestartPolicyOnFailure, "a", "b"),
			[]runtimeadapter.Container{inst(onFail, "POD", 0, X, 0), inst(testPod(v1.RestartPolicyOnFailure, "a", "b"), "b", 2, R, 0)}, 0, now,
			"kill b-2(SandboxChanged); sandbox#1; start b#3(SandboxChanged)", recorded(inst(testPod(v1.RestartPolicyOnFailure, "a", "b"), "a", 0, X, 0), 0)},
		{"a record of a container no longer in the spec is not shown nor acted on", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 0, R, 0)}, 0, now,
			"", recorded(inst(always, "gone", 0, X, 1), 0)},

		// A start that failed: an exit (StartError), never started again.
		{"StartError under Never fails the pod", never, []runtimeadapter.Container{sbRun(never), startFailedInst(inst(never, "app", 0, U, 0))}, 0, now,
			"kill POD-0(PodCompleted); done", nil},
		{"StartError under Always: a new instance at once (first exit)", always, []runtimeadapter.Container{sbRun(always), startFailedInst(inst(always, "app", 0, U, 0))}, 0, now,
			"start app#1(Restart)", nil},
		{"StartError under Always: the next waits the back-off", always, []runtimeadapter.Container{sbRun(always), startFailedInst(inst(always, "app", 1, U, 0))}, 10 * time.Second, now,
			"wait app(CrashLoopBackOff); requeue+12s", nil},
		{"StartError under OnFailure is a failure", onFail, []runtimeadapter.Container{sbRun(onFail), startFailedInst(inst(onFail, "app", 0, U, 0))}, 0, now,
			"start app#1(Restart)", nil},
		{"a sandbox whose start failed is replaced, not adopted", always, []runtimeadapter.Container{startFailedInst(inst(always, "POD", 0, U, 0))}, 0, now,
			"sandbox#1; start app#0(Created); rm POD-0", nil},
		{"a start-failed older instance is collected", always, []runtimeadapter.Container{sbRun(always), inst(always, "app", 2, R, 0), inst(always, "app", 1, X, 1), startFailedInst(inst(always, "app", 0, U, 0))}, 0, now,
			"rm app-0", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hist := tt.hist
			if hist == nil {
				hist = armed(tt.cs, tt.backoff)
			}
			p := Compute(Input{Node: node, Pod: tt.pod, Containers: tt.cs, Now: tt.now, Backoff: policy, History: hist, GC: true})
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
			p := Compute(Input{Node: node, Pod: tt.pod, Containers: tt.cs, Now: now, Backoff: policy, History: armed(tt.cs, tt.backoff)})
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

// Init containers remembered after their instance was removed: one that
// completed in the current sandbox is done; one of an old sandbox runs
// again in the new one, its numbering going on; a failed one waits its
// back-off.
func TestComputeInitContainersFromHistory(t *testing.T) {
	always, never := initPod(v1.RestartPolicyAlways), initPod(v1.RestartPolicyNever)
	R, X, U := runtimeadapter.StateRunning, runtimeadapter.StateExited, runtimeadapter.StateUnknown
	sb := func(p *v1.Pod) runtimeadapter.Container { return inst(p, "POD", 0, R, 0) }
	now := t0.Add(2 * time.Second)
	tests := []struct {
		name string
		pod  *v1.Pod
		cs   []runtimeadapter.Container
		hist supervision.Records
		want string
	}{
		{"completed, removed: the next one starts", always, []runtimeadapter.Container{sb(always)},
			recorded(inst(always, "init1", 0, X, 0), 0), "start init2#0(Init)"},
		{"all completed, both removed, apps running: nothing", always, []runtimeadapter.Container{sb(always), inst(always, "app", 0, R, 0)},
			merge(recorded(inst(always, "init1", 0, X, 0), 0), recorded(inst(always, "init2", 0, X, 0), 0)), ""},
		{"completed in an old sandbox: runs again, numbering on", always, []runtimeadapter.Container{inst(always, "POD", 1, R, 0)},
			recorded(inst(always, "init1@POD-0", 4, X, 0), 0), "start init1#5(Init)"},
		{"failed, removed: waits its back-off", always, []runtimeadapter.Container{sb(always)},
			recorded(inst(always, "init1", 2, X, 1), 10*time.Second), "wait init1(CrashLoopBackOff); requeue+2m11s"},
		{"Never: failed, removed: the pod fails", never, []runtimeadapter.Container{sb(never)},
			recorded(inst(never, "init1", 0, X, 1), 0), "kill POD-0(PodCompleted); done"},
		{"a start that failed: retried as a new instance", always, []runtimeadapter.Container{sb(always), startFailedInst(inst(always, "init1", 0, U, 0))},
			nil, "start init1#1(Restart)"},
		{"Never: a start that failed fails the pod", never, []runtimeadapter.Container{sb(never), startFailedInst(inst(never, "init1", 0, U, 0))},
			nil, "kill POD-0(PodCompleted); done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Compute(Input{Node: node, Pod: tt.pod, Containers: tt.cs, Now: now, Backoff: policy, History: tt.hist})
			if got := summary(p); got != tt.want {
				t.Errorf("plan\n got: %s\nwant: %s", got, tt.want)
			}
		})
	}
}

func merge(hs ...supervision.Records) supervision.Records {
	var out supervision.Records
	for _, h := range hs {
		for _, n := range h {
			out = out.Set(n.Name, n.Record)
		}
	}
	return out
}

// The plan returns the exits it saw and the restarts it decided as
// records; it never modifies its input, and the same input gives the same
// records (so the shell writes only when something changed).
func TestComputeRecords(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	R, X, U := runtimeadapter.StateRunning, runtimeadapter.StateExited, runtimeadapter.StateUnknown
	sb := inst(pod, "POD", 0, R, 0)
	exit0 := inst(pod, "app", 0, X, 1) // finished t0+1s

	// First exit: recorded, restarted at once, the back-off armed (10 s).
	p := Compute(Input{Node: node, Pod: pod, Containers: []runtimeadapter.Container{sb, exit0}, Now: t0.Add(time.Second), Backoff: policy})
	r, ok := p.Records.Get("app")
	if !p.RecordsChanged || !ok || r.Exit.ContainerID != "app-0" || r.Exit.ExitCode != 1 || !r.Restarted ||
		r.Backoff.Delay != 10*time.Second || !r.Backoff.LastUpdate.Equal(t0.Add(time.Second)) {
		t.Fatalf("records after the first exit: %+v (changed %v)", p.Records, p.RecordsChanged)
	}
	// The same again, with those records: nothing changes.
	in := Input{Node: node, Pod: pod, Containers: []runtimeadapter.Container{sb, exit0}, Now: t0.Add(2 * time.Second), Backoff: policy, History: p.Records}
	before := slices.Clone(in.History)
	p2 := Compute(in)
	if p2.RecordsChanged || summary(p2) != "start app#1(Restart)" {
		t.Fatalf("the same exit again: changed %v, plan %s", p2.RecordsChanged, summary(p2))
	}
	if !in.History.Equal(before) {
		t.Fatal("Compute modified its input")
	}
	// The second exit waits 10 s; its record says so.
	exit1 := inst(pod, "app", 1, X, 1) // started t0+1m, finished t0+1m1s
	p3 := Compute(Input{Node: node, Pod: pod, Containers: []runtimeadapter.Container{sb, exit1}, Now: t0.Add(61 * time.Second), Backoff: policy, History: p.Records})
	if r := rec(p3.Records, "app"); r.Exit.ContainerID != "app-1" || r.Restarted || r.Delay() != 10*time.Second || summary(p3) != "wait app(CrashLoopBackOff); requeue+1m11s" {
		t.Fatalf("second exit: %+v, plan %s", r, summary(p3))
	}
	if !rec(p.Records, "app").Equal(r) {
		t.Fatal("Compute modified the records of an earlier plan")
	}
	// A start that failed is recorded when first seen, with that time.
	failed := startFailedInst(inst(pod, "app", 0, U, 0))
	p4 := Compute(Input{Node: node, Pod: pod, Containers: []runtimeadapter.Container{sb, failed}, Now: t0.Add(5 * time.Second), Backoff: policy})
	r = rec(p4.Records, "app")
	if r.Exit.Reason != ReasonStartError || r.Exit.ExitCode != ExitCodeStartError || r.Exit.Message != failed.Error ||
		!r.Exit.FinishedAt.Equal(t0.Add(5*time.Second)) || !r.Exit.StartedAt.IsZero() {
		t.Fatalf("start failure record %+v", r.Exit)
	}
	p5 := Compute(Input{Node: node, Pod: pod, Containers: []runtimeadapter.Container{sb, failed}, Now: t0.Add(9 * time.Second), Backoff: policy, History: p4.Records})
	if p5.RecordsChanged {
		t.Fatalf("the same start failure later changed its record: %+v", rec(p5.Records, "app"))
	}
	// A removed pod's plan keeps the records as they are (the shell forgets
	// them once the pod has terminated).
	if p6 := Compute(Input{Node: node, Containers: []runtimeadapter.Container{sb}, Now: t0, Backoff: policy, History: p.Records}); p6.RecordsChanged {
		t.Fatal("removal changed the records")
	}
}

// Through the plan, a container that exits 1 s after each start is
// restarted on the kubelet's nominal curve: 0, 10 s, 20 s, 40 s … 300 s.
func TestComputeFollowsTheKubeletCurve(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	sb := inst(pod, "POD", 0, runtimeadapter.StateRunning, 0)
	var hist supervision.Records
	start := t0
	var delays []time.Duration
	for i := 0; i < 8; i++ {
		c := inst(pod, "app", i, runtimeadapter.StateExited, 1)
		c.StartedAt, c.FinishedAt = start, start.Add(time.Second)
		now := c.FinishedAt
		for { // sync at the exit, then at each requeue
			p := Compute(Input{Node: node, Pod: pod, Containers: []runtimeadapter.Container{sb, c}, Now: now, Backoff: policy, History: hist})
			hist = p.Records
			if len(p.Start) == 1 {
				if p.Start[0].Restarts != i+1 {
					t.Fatalf("exit %d: start %+v", i, p.Start[0])
				}
				break
			}
			if p.RequeueAt.IsZero() {
				t.Fatalf("exit %d: neither a start nor a requeue: %s", i, summary(p))
			}
			now = p.RequeueAt
		}
		delays = append(delays, now.Sub(c.FinishedAt))
		start = now
	}
	s := time.Second
	if want := []time.Duration{0, 10 * s, 20 * s, 40 * s, 80 * s, 160 * s, 300 * s, 300 * s}; fmt.Sprint(delays) != fmt.Sprint(want) {
		t.Errorf("delays %v, want %v", delays, want)
	}
}

// An instance seen running that vanishes before its exit was seen
// (removed while running between two listings) is a lost exit: exit code
// 137, reason ContainerStatusUnknown, as the kubelet reports a container it
// lost; the count goes on (no runtime name reused), after the back-off.
func TestComputeLostInstance(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	never := testPod(v1.RestartPolicyNever, "app")
	R := runtimeadapter.StateRunning
	sb := inst(pod, "POD", 0, R, 0)
	run := func(p *v1.Pod) runtimeadapter.Container { return inst(p, "app", 3, R, 0) }
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want string
	}{
		{"Always: a new instance, the count going on", pod, "start app#4(Restart)"},
		{"Never: the pod fails", never, "kill POD-0(PodCompleted); done"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p1 := Compute(Input{Node: node, Pod: tc.pod, Containers: []runtimeadapter.Container{inst(tc.pod, "POD", 0, R, 0), run(tc.pod)}, Now: t0.Add(time.Hour), Backoff: policy})
			if r := rec(p1.Records, "app"); r.Seen.ContainerID != "app-3" || r.Seen.RestartCount != 3 || r.Exit.Known() {
				t.Fatalf("the running instance is not the one seen: %+v", r)
			}
			now := t0.Add(2 * time.Hour)
			p2 := Compute(Input{Node: node, Pod: tc.pod, Containers: []runtimeadapter.Container{inst(tc.pod, "POD", 0, R, 0)}, Now: now, Backoff: policy, History: p1.Records})
			if got := summary(p2); got != tc.want {
				t.Errorf("plan %s, want %s", got, tc.want)
			}
			r := rec(p2.Records, "app")
			if r.Exit.ContainerID != "app-3" || r.Exit.ExitCode != 137 || r.Exit.Reason != "ContainerStatusUnknown" || !r.Exit.FinishedAt.Equal(now) {
				t.Errorf("lost exit %+v", r.Exit)
			}
			st := Status(tc.pod, nil, p2)
			if c := st.ContainerStatuses[0]; c.RestartCount != 3 || (c.State.Terminated == nil && c.LastTerminationState.Terminated == nil) {
				t.Errorf("status %+v", c)
			}
		})
	}
	// Not lost: replaced by a newer instance, or its exit seen.
	seen := Compute(Input{Node: node, Pod: pod, Containers: []runtimeadapter.Container{sb, run(pod)}, Now: t0, Backoff: policy}).Records
	for _, cs := range [][]runtimeadapter.Container{
		{sb, inst(pod, "app", 4, R, 0)},
		{sb, inst(pod, "app", 3, runtimeadapter.StateExited, 2)},
	} {
		p := Compute(Input{Node: node, Pod: pod, Containers: cs, Now: t0.Add(time.Hour), Backoff: policy, History: seen})
		if r := rec(p.Records, "app"); r.Exit.Reason == "ContainerStatusUnknown" {
			t.Errorf("%s: a lost exit recorded: %+v", cs[1].ID, r.Exit)
		}
	}
}

// rec is the record of the container name in rs (zero if none).
func rec(rs supervision.Records, name string) supervision.ContainerRecord {
	r, _ := rs.Get(name)
	return r
}
