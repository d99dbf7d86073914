package podsync

import (
	"maps"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// standbyInst is a pending standby of container name of pod: attempt
// restarts, made in the sandbox sb from the objects objs.
func standbyInst(pod *v1.Pod, name string, restarts int, sb runtimeadapter.Container, objs Objects) runtimeadapter.Container {
	c := inst(pod, name, restarts, runtimeadapter.StateUnknown, 0)
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			c.Labels = AsStandby(runtimeadapter.ContainerSpec{Labels: c.Labels},
				StandbyConfig(node, nil, pod, &pod.Spec.Containers[i], &sb, objs)).Labels
		}
	}
	c.ID = "sb-" + c.ID
	return c
}

func TestComputeStandby(t *testing.T) {
	always := testPod(v1.RestartPolicyAlways, "app")
	onFail := testPod(v1.RestartPolicyOnFailure, "app")
	never := testPod(v1.RestartPolicyNever, "app")
	changed := testPod(v1.RestartPolicyAlways, "app")
	changed.Spec.Containers[0].Image = "img:2"
	annotated := testPod(v1.RestartPolicyAlways, "app") // a downward-API input changed
	annotated.Annotations = map[string]string{"build": "2"}
	withIP := testPod(v1.RestartPolicyAlways, "app") // its env names status.podIP
	withIP.Spec.Containers[0].Env = []v1.EnvVar{{Name: "IP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.podIP"}}}}
	pullAlways := testPod(v1.RestartPolicyAlways, "app")
	pullAlways.Spec.Containers[0].ImagePullPolicy = v1.PullAlways
	untagged := testPod(v1.RestartPolicyAlways, "app")
	untagged.Spec.Containers[0].Image = "registry:5000/team/img"
	optional := true
	withCM := testPod(v1.RestartPolicyAlways, "app")
	withCM.Spec.Containers[0].EnvFrom = []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Optional: &optional}}}
	cm := func(v string) Objects {
		return Objects{ConfigMaps: map[string]*v1.ConfigMap{"cfg": {Data: map[string]string{"K": v}}}}
	}
	R, X, U := runtimeadapter.StateRunning, runtimeadapter.StateExited, runtimeadapter.StateUnknown
	sbRun := func(p *v1.Pod) runtimeadapter.Container {
		c := inst(p, "POD", 0, R, 0)
		c.IP = "10.0.0.2"
		return c
	}
	sbMoved := sbRun(always) // the same sandbox ID with another address
	sbMoved.IP = "10.0.0.9"
	now := t0.Add(2 * time.Second) // app-0 finished at t0+1s
	type row struct {
		name    string
		pod     *v1.Pod
		cs      []runtimeadapter.Container
		backoff time.Duration
		now     time.Time
		off     bool    // the feature off
		objs    Objects // the pod's objects now
		want    string
	}
	cs := func(c ...runtimeadapter.Container) []runtimeadapter.Container { return c }
	tests := []row{
		{name: "a running container under Always gets its next instance created", pod: always,
			cs: cs(sbRun(always), inst(always, "app", 0, R, 0)), want: "standby app#1"},
		{name: "never started while its predecessor runs", pod: always,
			cs: cs(sbRun(always), inst(always, "app", 0, R, 0), standbyInst(always, "app", 1, sbRun(always), Objects{})), want: ""},
		{name: "the restart that comes at once starts the standby: one start call", pod: always,
			cs:   cs(sbRun(always), inst(always, "app", 0, X, 1), standbyInst(always, "app", 1, sbRun(always), Objects{})),
			want: "adopt sb-app-1(Restart, standby)"},
		{name: "CrashLoopBackOff: not started before the deadline", pod: always, backoff: 10 * time.Second,
			cs:   cs(sbRun(always), inst(always, "app", 0, X, 1), standbyInst(always, "app", 1, sbRun(always), Objects{})),
			want: "wait app(CrashLoopBackOff); requeue+11s"},
		{name: "CrashLoopBackOff: started at the deadline", pod: always, backoff: 10 * time.Second, now: t0.Add(11 * time.Second),
			cs:   cs(sbRun(always), inst(always, "app", 0, X, 1), standbyInst(always, "app", 1, sbRun(always), Objects{})),
			want: "adopt sb-app-1(Restart, standby)"},
		{name: "CrashLoopBackOff: created right after the death", pod: always, backoff: 10 * time.Second,
			cs:   cs(sbRun(always), inst(always, "app", 0, X, 1)),
			want: "standby app#1; wait app(CrashLoopBackOff); requeue+11s"},
		{name: "a restart without a standby creates and starts, as before", pod: always,
			cs: cs(sbRun(always), inst(always, "app", 0, X, 1)), want: "start app#1(Restart)"},
		{name: "spec change: the standby goes before the replacement starts", pod: changed,
			cs:   cs(sbRun(changed), inst(always, "app", 0, R, 0), standbyInst(always, "app", 1, sbRun(always), Objects{})),
			want: "kill app-0(SpecChanged); drop sb-app-1; start app#1(SpecChanged)"},
		{name: "spec change of an exited container: not the standby", pod: changed,
			cs:   cs(sbRun(changed), inst(always, "app", 0, X, 1), standbyInst(always, "app", 1, sbRun(always), Objects{})),
			want: "drop sb-app-1; start app#1(SpecChanged)"},
		{name: "a downward-API value changed: recreated", pod: annotated,
			cs:   cs(sbRun(annotated), inst(annotated, "app", 0, R, 0), standbyInst(always, "app", 1, sbRun(always), Objects{})),
			want: "drop sb-app-1; standby app#1"},
		{name: "the pod IP its env names changed: recreated", pod: withIP,
			cs:   cs(sbMoved, inst(withIP, "app", 0, R, 0), standbyInst(withIP, "app", 1, sbRun(withIP), Objects{})),
			want: "drop sb-app-1; standby app#1"},
		{name: "the pod IP changed, its env does not name it: kept", pod: always,
			cs: cs(sbMoved, inst(always, "app", 0, R, 0), standbyInst(always, "app", 1, sbRun(always), Objects{})), want: ""},
		{name: "a referenced ConfigMap changed: recreated", pod: withCM, objs: cm("2"),
			cs:   cs(sbRun(withCM), inst(withCM, "app", 0, R, 0), standbyInst(withCM, "app", 1, sbRun(withCM), cm("1"))),
			want: "drop sb-app-1; standby app#1"},
		{name: "the same ConfigMap: kept", pod: withCM, objs: cm("1"),
			cs: cs(sbRun(withCM), inst(withCM, "app", 0, R, 0), standbyInst(withCM, "app", 1, sbRun(withCM), cm("1"))), want: ""},
		{name: "a standby of another attempt is not the instance wanted", pod: always,
			cs:   cs(sbRun(always), inst(always, "app", 2, R, 0), standbyInst(always, "app", 1, sbRun(always), Objects{})),
			want: "drop sb-app-1; standby app#3"},
		{name: "two standbys: the extra goes", pod: always,
			cs: cs(sbRun(always), inst(always, "app", 0, R, 0), standbyInst(always, "app", 1, sbRun(always), Objects{}),
				standbyInst(always, "app", 2, sbRun(always), Objects{})),
			want: "drop sb-app-2"},
		{name: "a new sandbox: every standby goes", pod: always,
			cs:   cs(inst(always, "POD", 0, X, 0), inst(always, "app", 0, R, 0), standbyInst(always, "app", 1, sbRun(always), Objects{})),
			want: "kill app-0(SandboxChanged); sandbox#1; drop sb-app-1; start app#1(SandboxChanged)"},
		{name: "the feature off: standbys go, none is made", pod: always, off: true,
			cs: cs(sbRun(always), inst(always, "app", 0, R, 0), standbyInst(always, "app", 1, sbRun(always), Objects{})), want: "drop sb-app-1"},
		{name: "the feature off: a restart creates", pod: always, off: true,
			cs: cs(sbRun(always), inst(always, "app", 0, X, 1)), want: "start app#1(Restart)"},
		{name: "removed with its pod", pod: nil,
			cs:   cs(sbRun(always), inst(always, "app", 0, R, 0), standbyInst(always, "app", 1, sbRun(always), Objects{})),
			want: "kill app-0(PodRemoved); kill POD-0(PodRemoved); rm app-0; rm sb-app-1; rm POD-0"},
		{name: "GC leaves it alone", pod: always,
			cs: cs(sbRun(always), inst(always, "app", 2, R, 0), inst(always, "app", 1, X, 1), inst(always, "app", 0, X, 1),
				standbyInst(always, "app", 3, sbRun(always), Objects{})),
			want: "rm app-0"},
		{name: "OnFailure: none while it runs (it may succeed)", pod: onFail,
			cs: cs(sbRun(onFail), inst(onFail, "app", 0, R, 0)), want: ""},
		{name: "OnFailure: a failure waiting for its back-off gets one", pod: onFail, backoff: 10 * time.Second,
			cs: cs(sbRun(onFail), inst(onFail, "app", 0, X, 2)), want: "standby app#1; wait app(CrashLoopBackOff); requeue+11s"},
		{name: "OnFailure: success completes the pod, its standby goes", pod: onFail,
			cs:   cs(sbRun(onFail), inst(onFail, "app", 0, X, 0), standbyInst(onFail, "app", 1, sbRun(onFail), Objects{})),
			want: "kill POD-0(PodCompleted); drop sb-app-1; done"},
		{name: "imagePullPolicy Always: none (each instance pulls first)", pod: pullAlways,
			cs:   cs(sbRun(pullAlways), inst(pullAlways, "app", 0, R, 0), standbyInst(pullAlways, "app", 1, sbRun(pullAlways), Objects{})),
			want: "drop sb-app-1"},
		{name: "an untagged image defaults to Always: none", pod: untagged,
			cs: cs(sbRun(untagged), inst(untagged, "app", 0, R, 0)), want: ""},
		{name: "Never: none", pod: never, cs: cs(sbRun(never), inst(never, "app", 0, R, 0)), want: ""},
		{name: "a container dropped from the spec: its standby goes", pod: testPod(v1.RestartPolicyAlways, "other"),
			cs: cs(sbRun(always), inst(testPod(v1.RestartPolicyAlways, "other"), "other", 0, R, 0),
				standbyInst(always, "app", 1, sbRun(always), Objects{})),
			want: "drop sb-app-1; standby other#1"},
		// A standby whose start failed is the container's newest instance,
		// a StartError exit (Docker: created, with State.Error), never a
		// standby again.
		{name: "a standby whose start failed is a StartError exit", pod: always, backoff: 10 * time.Second,
			cs:   cs(sbRun(always), inst(always, "app", 0, X, 1), startFailedInst(standbyInst(always, "app", 1, sbRun(always), Objects{}))),
			want: "standby app#2; rm app-0; wait app(CrashLoopBackOff); requeue+12s"},
		// After an agent restart, a created instance without the label
		// (a crash between create and start) is adopted as before.
		{name: "a created instance that is no standby is adopted as before", pod: always,
			cs: cs(sbRun(always), inst(always, "app", 1, U, 0)), want: "adopt app-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at := tt.now
			if at.IsZero() {
				at = now
			}
			p := Compute(Input{Node: node, Pod: tt.pod, Containers: tt.cs, Now: at, Backoff: policy,
				History: armed(tt.cs, tt.backoff), GC: true, Standby: !tt.off, Objects: tt.objs})
			if got := summary(p); got != tt.want {
				t.Errorf("plan\n got: %s\nwant: %s", got, tt.want)
			}
		})
	}
}

// A pending standby changes nothing the pod shows: restartCount,
// lastState, the back-off and the status are those without it.
func TestStandbyIsNotAnInstance(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	sb := inst(pod, "POD", 0, runtimeadapter.StateRunning, 0)
	for _, tc := range []struct {
		name string
		cs   []runtimeadapter.Container
	}{
		{"running", []runtimeadapter.Container{sb, inst(pod, "app", 2, runtimeadapter.StateRunning, 0), inst(pod, "app", 1, runtimeadapter.StateExited, 1)}},
		{"in CrashLoopBackOff", []runtimeadapter.Container{sb, inst(pod, "app", 2, runtimeadapter.StateExited, 1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Node: node, Pod: pod, Containers: tc.cs, Now: t0.Add(5 * time.Minute), Backoff: policy,
				History: armed(tc.cs, 10*time.Second), Standby: true}
			without := Compute(in)
			in.Containers = append(append([]runtimeadapter.Container(nil), tc.cs...), standbyInst(pod, "app", 3, sb, Objects{}))
			with := Compute(in)
			if !with.Records.Equal(without.Records) || with.RecordsChanged != without.RecordsChanged {
				t.Errorf("records with a standby %+v, without %+v", with.Records, without.Records)
			}
			if !with.RequeueAt.Equal(without.RequeueAt) || !maps.Equal(with.Waiting, without.Waiting) {
				t.Errorf("back-off with a standby %v %v, without %v %v", with.RequeueAt, with.Waiting, without.RequeueAt, without.Waiting)
			}
			sw, so := Status(pod, in.Containers, with), Status(pod, tc.cs, without)
			if !equality.Semantic.DeepEqual(sw, so) {
				t.Errorf("status with a standby\n%+v\nwithout\n%+v", sw.ContainerStatuses, so.ContainerStatuses)
			}
			if so.ContainerStatuses[0].RestartCount != 2 {
				t.Errorf("restartCount %d, want 2: the comparison would pass on anything", so.ContainerStatuses[0].RestartCount)
			}
			if HasGarbage(pod, in.Containers) != HasGarbage(pod, tc.cs) {
				t.Error("a standby changes what GC finds")
			}
		})
	}
}
