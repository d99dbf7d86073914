package podsync

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// sidecarPod has two sidecars around a regular init container:
// init-a (sidecar), init2, init-b (sidecar), then the app.
func sidecarPod(policy v1.RestartPolicy, startupProbe bool) *v1.Pod {
	p := testPod(policy, "app")
	always := v1.ContainerRestartPolicyAlways
	p.Spec.InitContainers = []v1.Container{
		{Name: "init-a", Image: "img:1", RestartPolicy: &always},
		{Name: "init2", Image: "img:1"},
		{Name: "init-b", Image: "img:1", RestartPolicy: &always},
	}
	if startupProbe {
		p.Spec.InitContainers[0].StartupProbe = &v1.Probe{PeriodSeconds: 1, FailureThreshold: 3}
	}
	return p
}

func TestComputeSidecars(t *testing.T) {
	R, X := runtimeadapter.StateRunning, runtimeadapter.StateExited
	always, never, probed := sidecarPod(v1.RestartPolicyAlways, false), sidecarPod(v1.RestartPolicyNever, false), sidecarPod(v1.RestartPolicyAlways, true)
	sb := func(p *v1.Pod) runtimeadapter.Container { return inst(p, "POD", 0, R, 0) }
	// up: every init container done or running, and the app running.
	up := func(p *v1.Pod) []runtimeadapter.Container {
		return []runtimeadapter.Container{sb(p), inst(p, "init-a", 0, R, 0), inst(p, "init2", 0, X, 0), inst(p, "init-b", 0, R, 0), inst(p, "app", 0, R, 0)}
	}
	with := func(cs []runtimeadapter.Container, repl ...runtimeadapter.Container) []runtimeadapter.Container {
		out := append([]runtimeadapter.Container(nil), cs...)
		for _, r := range repl {
			for i := range out {
				if out[i].Labels[runtimeadapter.LabelContainerName] == r.Labels[runtimeadapter.LabelContainerName] {
					out[i] = r
				}
			}
		}
		return out
	}
	now := t0.Add(2 * time.Second)
	tests := []struct {
		name      string
		pod       *v1.Pod
		cs        []runtimeadapter.Container
		started   map[string]bool
		unhealthy map[string]time.Duration
		backoff   time.Duration
		want      string
	}{
		{"new pod: the sandbox and the first sidecar", always, nil, nil, nil, 0,
			"sandbox#0; start init-a#0(Init)"},
		{"a running sidecar is not waited on: the next init starts", always,
			[]runtimeadapter.Container{sb(always), inst(always, "init-a", 0, R, 0)}, nil, nil, 0,
			"start init2#0(Init)"},
		{"startup probe not passed yet: the next init waits", probed,
			[]runtimeadapter.Container{sb(probed), inst(probed, "init-a", 0, R, 0)}, nil, nil, 0,
			""},
		{"startup probe passed: the next init starts", probed,
			[]runtimeadapter.Container{sb(probed), inst(probed, "init-a", 0, R, 0)}, map[string]bool{"init-a-0": true}, nil, 0,
			"start init2#0(Init)"},
		{"regular init done: the second sidecar starts", always,
			[]runtimeadapter.Container{sb(always), inst(always, "init-a", 0, R, 0), inst(always, "init2", 0, X, 0)}, nil, nil, 0,
			"start init-b#0(Init)"},
		{"sidecars running, inits done: the app starts", always,
			[]runtimeadapter.Container{sb(always), inst(always, "init-a", 0, R, 0), inst(always, "init2", 0, X, 0), inst(always, "init-b", 0, R, 0)}, nil, nil, 0,
			"start app#0(Created)"},
		{"all up: nothing to do", always, up(always), nil, nil, 0, ""},
		{"a sidecar crashed under Never: restarted, the app untouched", never,
			with(up(never), inst(never, "init-a", 0, X, 1)), nil, nil, 0,
			"start init-a#1(Restart)"},
		{"a sidecar that exited 0 is restarted too", never,
			with(up(never), inst(never, "init-b", 0, X, 0)), nil, nil, 0,
			"start init-b#1(Restart)"},
		{"a crashing sidecar waits for its back-off; the app runs on", always,
			with(up(always), inst(always, "init-a", 0, X, 1)), nil, nil, 10 * time.Second,
			"wait init-a(CrashLoopBackOff); requeue+11s"},
		{"a sidecar that exits during init is restarted before the next init", never,
			[]runtimeadapter.Container{sb(never), inst(never, "init-a", 0, X, 1)}, nil, nil, 0,
			"start init-a#1(Restart)"},
		{"a sidecar that fails its liveness probe is killed", always,
			up(always), nil, map[string]time.Duration{"init-b-0": 3 * time.Second}, 0,
			"kill init-b-0(Unhealthy)"},
		{"Never: the app is done while the sidecars run: they stop, last first, then the sandbox", never,
			with(up(never), inst(never, "app", 0, X, 0)), nil, nil, 0,
			"kill init-b-0(PodCompleted); kill init-a-0(PodCompleted); kill POD-0(PodCompleted); done"},
		{"OnFailure: a failed app restarts, the sidecars run on", sidecarPod(v1.RestartPolicyOnFailure, false),
			with(up(sidecarPod(v1.RestartPolicyOnFailure, false)), inst(sidecarPod(v1.RestartPolicyOnFailure, false), "app", 0, X, 1)), nil, nil, 0,
			"start app#1(Restart)"},
		{"Never: a sidecar's exit after the pod is done changes nothing", never,
			with(up(never), inst(never, "app", 0, X, 0), inst(never, "init-a", 0, X, 137), inst(never, "init-b", 0, X, 143), inst(never, "POD", 0, X, 0)), nil, nil, 0,
			"done"},
		{"removed: the app, then the sidecars last first, then the sandbox", nil,
			up(always), nil, nil, 0,
			"kill app-0(PodRemoved); kill init-b-0(PodRemoved); kill init-a-0(PodRemoved); kill POD-0(PodRemoved); rm init-a-0; rm init-b-0; rm init2-0; rm app-0; rm POD-0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Compute(Input{Node: node, Pod: tt.pod, Containers: tt.cs, Now: now, Backoff: policy,
				History: armed(tt.cs, tt.backoff), Started: tt.started, Unhealthy: tt.unhealthy})
			if got := summary(p); got != tt.want {
				t.Errorf("plan\n got: %s\nwant: %s", got, tt.want)
			}
			for _, k := range p.Kill {
				if want := sidecarIndex(&k.Container) >= 0; k.Sidecar != want {
					t.Errorf("kill %s: Sidecar %v, want %v", k.Container.ID, k.Sidecar, want)
				}
			}
		})
	}
}

func TestStatusSidecars(t *testing.T) {
	R, X := runtimeadapter.StateRunning, runtimeadapter.StateExited
	always, never := sidecarPod(v1.RestartPolicyAlways, false), sidecarPod(v1.RestartPolicyNever, false)
	probed := sidecarPod(v1.RestartPolicyAlways, true)
	ready := sidecarPod(v1.RestartPolicyAlways, false)
	ready.Spec.InitContainers[2].ReadinessProbe = &v1.Probe{PeriodSeconds: 1}
	up := func(p *v1.Pod, side0 runtimeadapter.Container) []runtimeadapter.Container {
		return []runtimeadapter.Container{inst(p, "POD", 0, R, 0), side0, inst(p, "init2", 0, X, 0), inst(p, "init-b", 0, R, 0), inst(p, "app", 0, R, 0)}
	}
	tests := []struct {
		name            string
		pod             *v1.Pod
		cs              []runtimeadapter.Container
		probes          Probes
		wantPhase       v1.PodPhase
		wantInitialized bool
		wantReady       bool
		// wantSidecar: init-a's started and ready.
		wantStarted, wantSideReady bool
	}{
		{"all up", always, up(always, inst(always, "init-a", 0, R, 0)), Probes{},
			v1.PodRunning, true, true, true, true},
		{"startup probe not passed: pending, not started", probed,
			[]runtimeadapter.Container{inst(probed, "POD", 0, R, 0), inst(probed, "init-a", 0, R, 0)}, Probes{},
			v1.PodPending, false, false, false, false},
		{"startup probe passed: started", probed,
			[]runtimeadapter.Container{inst(probed, "POD", 0, R, 0), inst(probed, "init-a", 0, R, 0)}, Probes{Started: map[string]bool{"init-a-0": true}},
			v1.PodPending, false, false, true, true},
		{"a sidecar not ready makes the pod not ready", ready, up(ready, inst(ready, "init-a", 0, R, 0)), Probes{Ready: map[string]bool{"init-b-0": false}},
			v1.PodRunning, true, false, true, true},
		{"a sidecar ready by its probe", ready, up(ready, inst(ready, "init-a", 0, R, 0)), Probes{Ready: map[string]bool{"init-b-0": true}},
			v1.PodRunning, true, true, true, true},
		{"a sidecar crashed after init: still initialized, running, not ready", never, up(never, inst(never, "init-a", 0, X, 1)), Probes{},
			v1.PodRunning, true, false, false, false},
		{"Never: apps done 0, sidecars killed: Succeeded", never,
			[]runtimeadapter.Container{inst(never, "POD", 0, X, 0), inst(never, "init-a", 0, X, 137), inst(never, "init2", 0, X, 0), inst(never, "init-b", 0, X, 143), inst(never, "app", 0, X, 0)}, Probes{},
			v1.PodSucceeded, true, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := Compute(Input{Node: node, Pod: tt.pod, Containers: tt.cs, Now: t0.Add(time.Hour), Started: tt.probes.Started})
			st := StatusWith(tt.pod, tt.cs, plan, tt.probes)
			if st.Phase != tt.wantPhase {
				t.Errorf("phase %s, want %s", st.Phase, tt.wantPhase)
			}
			for _, c := range st.Conditions {
				if c.Type == v1.PodInitialized && (c.Status == v1.ConditionTrue) != tt.wantInitialized {
					t.Errorf("Initialized %s, want %v", c.Status, tt.wantInitialized)
				}
				if c.Type == v1.PodReady && (c.Status == v1.ConditionTrue) != tt.wantReady {
					t.Errorf("Ready %s, want %v", c.Status, tt.wantReady)
				}
			}
			if len(st.InitContainerStatuses) != 3 {
				t.Fatalf("%d init container statuses, want 3", len(st.InitContainerStatuses))
			}
			side := st.InitContainerStatuses[0]
			if side.Started == nil || *side.Started != tt.wantStarted || side.Ready != tt.wantSideReady {
				t.Errorf("init-a: started %v ready %v, want %v %v", side.Started, side.Ready, tt.wantStarted, tt.wantSideReady)
			}
		})
	}
}

// GC keeps a sidecar's newest exit beside its running instance, as an
// app's (lastState, logs --previous).
func TestComputeSidecarGC(t *testing.T) {
	R, X := runtimeadapter.StateRunning, runtimeadapter.StateExited
	pod := sidecarPod(v1.RestartPolicyAlways, false)
	cs := []runtimeadapter.Container{inst(pod, "POD", 0, R, 0), inst(pod, "init-a", 0, X, 1), inst(pod, "init-a", 1, X, 1), inst(pod, "init-a", 2, R, 0),
		inst(pod, "init2", 0, X, 0), inst(pod, "init-b", 0, R, 0), inst(pod, "app", 0, R, 0)}
	p := Compute(Input{Node: node, Pod: pod, Containers: cs, Now: t0.Add(time.Hour), Backoff: policy, GC: true})
	if got := summary(p); got != "rm init-a-0" {
		t.Fatalf("plan %q, want only the older exit of init-a removed", got)
	}
}
