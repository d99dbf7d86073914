package podstate

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// A pod's ConfigMaps and Secrets come with its spec and again, with the
// same spec, when they change: a pod with volumes of them has them written
// again (Run with Refresh, nothing killed or restarted); a pod that uses
// them in env only does nothing (env is fixed at creation); a start that
// waited for a missing object is tried again at once.
func TestObjectsChanged(t *testing.T) {
	withVolume := testPod("app")
	withVolume.Spec.Volumes = []v1.Volume{{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
		LocalObjectReference: v1.LocalObjectReference{Name: "app"}}}}}
	withEnv := testPod("app")
	withEnv.Spec.Containers[0].Env = []v1.EnvVar{{Name: "URL", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
		LocalObjectReference: v1.LocalObjectReference{Name: "app"}, Key: "url"}}}}
	objs := func(url string) podsync.Objects {
		return podsync.Objects{ConfigMaps: map[string]*v1.ConfigMap{"app": {Data: map[string]string{"url": url}}}}
	}
	waitForVolume := WorkDone{Listing: Listing{Containers: cs(sandbox(runtimeadapter.StateRunning)), From: t0, Until: t0},
		Waits: map[string]StartWait{"app": {Reason: ReasonContainerCreating, Until: t0.Add(12 * time.Second)}}}
	waitForEnv := waitForVolume
	waitForEnv.Waits = map[string]StartWait{"app": {Reason: ReasonCreateContainerConfigError, Message: `configmap "app" not found`, Until: t0.Add(12 * time.Second)}}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"a changed ConfigMap rewrites the running pod's volume, killing nothing", []step{
			{0, Started{}, "List", PhaseListing},
			{0, SpecChanged{Pod: withVolume, Objects: objs("a")}, "SpawnProbes", PhaseListing},
			{0, listed(0, running(withVolume)...), "SyncEnded; ProbeTargets; Persist; Report Running; SyncBegan; Run[refresh]", PhaseSyncing},
			{time.Second, listed(0, running(withVolume)...), "SyncTook; SyncEnded", PhaseIdle},
			{time.Minute, SpecChanged{Pod: withVolume, Objects: objs("a")}, "", PhaseIdle}, // unchanged
			{time.Minute, SpecChanged{Pod: withVolume, Objects: objs("b")}, "SyncBegan; Run[refresh]", PhaseSyncing},
			{time.Minute, SpecChanged{Pod: withVolume, Objects: podsync.Objects{}}, "", PhaseSyncing}, // deleted: after this sync
			{time.Minute + time.Second, listed(0, running(withVolume)...), "SyncTook; SyncEnded; SyncBegan; Run[refresh]", PhaseSyncing},
		}},
		{"env is fixed at creation: a change does nothing", []step{
			{0, Started{}, "List", PhaseListing},
			{0, SpecChanged{Pod: withEnv, Objects: objs("a")}, "SpawnProbes", PhaseListing},
			{0, listed(0, runningWith(t, withEnv, objs("a"))...), "SyncEnded; ProbeTargets; Persist; Report Running", PhaseIdle},
			{time.Minute, SpecChanged{Pod: withEnv, Objects: objs("b")}, "", PhaseIdle},
		}},
		{"a start waiting for a volume's object is tried when it appears", []step{
			{0, Started{}, "List", PhaseListing},
			{0, SpecChanged{Pod: withVolume}, "SpawnProbes", PhaseListing},
			{0, listed(0), "SyncEnded; ProbeTargets; Report Pending; SyncBegan; Run[sandbox start app]", PhaseSyncing},
			{time.Second, waitForVolume, "SyncTook; SyncEnded; ProbeTargets; Timer+12s; Report Pending", PhaseIdle},
			{5 * time.Second, SpecChanged{Pod: withVolume, Objects: objs("a")}, "SyncBegan; Run[start app refresh]", PhaseSyncing},
		}},
		{"a start waiting for env's object is tried when it appears", []step{
			{0, Started{}, "List", PhaseListing},
			{0, SpecChanged{Pod: withEnv}, "SpawnProbes", PhaseListing},
			{0, listed(0), "SyncEnded; ProbeTargets; Report Pending; SyncBegan; Run[sandbox start app]", PhaseSyncing},
			{time.Second, waitForEnv, "SyncTook; SyncEnded; ProbeTargets; Timer+12s; Report Pending", PhaseIdle},
			{5 * time.Second, SpecChanged{Pod: withEnv, Objects: objs("a")}, "Report Pending; SyncBegan; Run[start app]", PhaseSyncing},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPod(cfg(), nil)
			for i, s := range tc.steps {
				got := describe(p.Step(s.ev, t0.Add(s.at)))
				if got != s.want || p.Phase() != s.phase {
					t.Fatalf("step %d (%T):\n got %q, phase %s\nwant %q, phase %s", i, s.ev, got, p.Phase(), s.want, s.phase)
				}
			}
		})
	}
}

// runningWith is running for a pod whose env needs objs.
func runningWith(t *testing.T, pod *v1.Pod, objs podsync.Objects) []runtimeadapter.Container {
	spec, err := podsync.AppSpecFor(podsync.SpecOptions{RootDir: podsync.DefaultRootDir}, podsync.Downward{NodeName: node, Objects: objs}, pod, &pod.Spec.Containers[0], "sb", 0)
	if err != nil {
		t.Fatal(err)
	}
	return cs(sandbox(runtimeadapter.StateRunning), instance("app-0", spec, runtimeadapter.StateRunning, 0))
}
