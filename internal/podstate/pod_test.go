package podstate

import (
	"errors"
	"fmt"
	"go/build"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/internal/probe"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/supervision"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

const node = "n1"

func testPod(names ...string) *v1.Pod {
	p := &v1.Pod{}
	p.Name, p.Namespace, p.UID = "web", "default", "uid-1"
	p.Spec.RestartPolicy = v1.RestartPolicyAlways
	for _, n := range names {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: n, Image: "img:1"})
	}
	return p
}

// sandbox and app are instances of the test pod's containers (IDs "sb",
// "<name>-<restarts>").
func sandbox(state runtimeadapter.State) runtimeadapter.Container {
	spec := podsync.SandboxSpec(node, testPod(), "pause:1", 0)
	return instance("sb", spec, state, 0)
}

func app(pod *v1.Pod, name string, restarts int, state runtimeadapter.State) runtimeadapter.Container {
	spec := podsync.AppSpec(node, pod, &pod.Spec.Containers[slices.IndexFunc(pod.Spec.Containers, func(c v1.Container) bool { return c.Name == name })], "sb", restarts)
	return instance(fmt.Sprintf("%s-%d", name, restarts), spec, state, restarts)
}

func instance(id string, spec runtimeadapter.ContainerSpec, state runtimeadapter.State, restarts int) runtimeadapter.Container {
	c := runtimeadapter.Container{ID: id, Name: spec.Name, Labels: spec.Labels, State: state,
		CreatedAt: t0.Add(time.Duration(restarts) * time.Second), StartedAt: t0.Add(time.Duration(restarts) * time.Second)}
	switch state {
	case runtimeadapter.StateRunning:
		c.RawState = "running"
	case runtimeadapter.StateExited:
		c.RawState, c.ExitCode, c.Reason, c.FinishedAt = "exited", 1, "Error", c.StartedAt.Add(time.Second)
	}
	return c
}

func cs(c ...runtimeadapter.Container) []runtimeadapter.Container { return c }

// step is one event of a sequence, at t0+at, and the effects it must
// return (see describe) and the phase it must leave.
type step struct {
	at    time.Duration
	ev    Event
	want  string
	phase Phase
}

// describe names effects for the tables: "List", "Run[sandbox start app]",
// "Timer+1s" (after t0) …, joined by "; ".
func describe(effs []Effect) string {
	var out []string
	for _, e := range effs {
		switch e := e.(type) {
		case List:
			out = append(out, "List")
		case Run:
			var parts []string
			for _, k := range e.Plan.Kill {
				parts = append(parts, "kill "+k.Container.Labels[runtimeadapter.LabelContainerName])
			}
			if e.Plan.CreateSandbox {
				parts = append(parts, "sandbox")
			}
			for _, s := range e.Plan.Start {
				parts = append(parts, "start "+s.Name)
			}
			for _, c := range e.Plan.Remove {
				parts = append(parts, "remove "+c.Labels[runtimeadapter.LabelContainerName])
			}
			if e.Refresh {
				parts = append(parts, "refresh")
			}
			out = append(out, "Run["+strings.Join(parts, " ")+"]")
		case AbortStarts:
			out = append(out, "AbortStarts")
		case SetTimer:
			out = append(out, "Timer+"+e.At.Sub(t0).String())
		case RequestSync:
			out = append(out, "RequestSync")
		case Report:
			out = append(out, "Report "+string(e.Status.Phase))
		case Emit:
			out = append(out, "Emit "+e.Reason)
		case Persist:
			out = append(out, "Persist")
		case SpawnProbes:
			out = append(out, "SpawnProbes")
		case StopProbes:
			out = append(out, "StopProbes")
		case ProbeTargets:
			out = append(out, "ProbeTargets")
		case Syncing:
			if e.Since.IsZero() {
				out = append(out, "SyncEnded")
			} else {
				out = append(out, "SyncBegan")
			}
		case SyncTook:
			out = append(out, "SyncTook")
		case SyncFailed:
			out = append(out, "SyncFailed+"+e.RetryIn.String())
		case Terminate:
			out = append(out, "Terminate")
		default:
			out = append(out, fmt.Sprintf("%T", e))
		}
	}
	return strings.Join(out, "; ")
}

func cfg() Config {
	return Config{UID: "uid-1", Node: node, GCPeriod: time.Minute, RetryInitial: time.Second, RetryMax: time.Minute}
}

func listed(r uint64, c ...runtimeadapter.Container) WorkDone {
	return WorkDone{Listing: Listing{Containers: c, From: t0, Until: t0, Received: r}}
}

// running is the pod with its sandbox and app running.
func running(pod *v1.Pod) []runtimeadapter.Container {
	return cs(sandbox(runtimeadapter.StateRunning), app(pod, "app", 0, runtimeadapter.StateRunning))
}

func TestStep(t *testing.T) {
	pod := testPod("app")
	changed := testPod("app")
	changed.Spec.Containers[0].Image = "img:2"
	up := running(pod)
	dead := cs(sandbox(runtimeadapter.StateRunning), app(pod, "app", 0, runtimeadapter.StateExited))
	restarted := append(slices.Clone(dead), app(pod, "app", 1, runtimeadapter.StateRunning))
	pullFailed := StartWait{Reason: "ErrImagePull", Message: "no such host", Until: t0.Add(time.Minute + 30*time.Second),
		BackOffAt: t0.Add(time.Minute + 10*time.Second), BackOffReason: "ImagePullBackOff", BackOffMessage: "Back-off pulling image", Image: "img:1"}
	probed := testPod("app")
	probed.Spec.Containers[0].ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}
	// start is the common beginning: listed, spec known, all running.
	start := []step{
		{0, Started{}, "List", PhaseListing},
		{0, SpecChanged{Pod: pod}, "SpawnProbes", PhaseListing}, // dirty: the list is out
		{0, listed(0, up...), "SyncEnded; ProbeTargets; Persist; Report Running", PhaseIdle},
	}
	seq := func(steps ...step) []step { return append(slices.Clone(start), steps...) }
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"a new pod waits for its spec, then creates its sandbox", []step{
			{0, Started{}, "List", PhaseListing},
			{0, listed(0), "SyncEnded", PhaseWaitingForSpec},
			{time.Second, SpecChanged{Pod: pod}, "SpawnProbes; ProbeTargets; Report Pending; SyncBegan; Run[sandbox start app]", PhaseSyncing},
			{2 * time.Second, listed(0, up...), "SyncTook; SyncEnded; ProbeTargets; Persist; Report Running", PhaseIdle},
		}},
		{"events during a sync sync again after it, once", []step{
			{0, Started{}, "List", PhaseListing},
			{0, listed(0), "SyncEnded", PhaseWaitingForSpec},
			{0, SpecChanged{Pod: pod}, "SpawnProbes; ProbeTargets; Report Pending; SyncBegan; Run[sandbox start app]", PhaseSyncing},
			{0, RuntimeHealth{Healthy: true}, "", PhaseSyncing},
			{0, TimerFired{}, "", PhaseSyncing},
			{time.Second, listed(0, sandbox(runtimeadapter.StateRunning)), "SyncTook; SyncEnded; ProbeTargets; Report Pending; SyncBegan; Run[start app]", PhaseSyncing},
		}},
		{"a die event restarts at once, without a relist", seq(
			step{time.Minute, Died{ContainerID: "app-0", ExitCode: 3, At: t0.Add(time.Minute)}, "RequestSync", PhaseIdle},
			step{time.Minute, Died{ContainerID: "app-0", ExitCode: 3, At: t0.Add(time.Minute)}, "", PhaseIdle}, // already dead
			step{time.Minute, SyncRequested{}, "ProbeTargets; Persist; Report Running; SyncBegan; Run[start app]", PhaseSyncing},
		)},
		{"a die event of an unknown container does nothing", seq(
			step{time.Minute, Died{ContainerID: "other", At: t0}, "", PhaseIdle},
		)},
		{"a burst of PLEG listings is planned once", seq(
			step{time.Minute, &Listed{Containers: dead, ObservedAt: t0.Add(time.Minute)}, "RequestSync", PhaseIdle},
			step{time.Minute, &Listed{Containers: dead, ObservedAt: t0.Add(time.Minute + 1)}, "", PhaseIdle},
			step{time.Minute, SyncRequested{}, "ProbeTargets; Persist; Report Running; SyncBegan; Run[start app]", PhaseSyncing},
		)},
		{"a listing that changes nothing needs no sync", seq(
			step{time.Minute, &Listed{Containers: up, ObservedAt: t0.Add(time.Minute)}, "", PhaseIdle},
		)},
		// TestSlowRelistDeathIsNotLost: a PLEG listing whose span overlaps
		// the one held and disagrees with it is not dropped: list again.
		{"an overlapping listing that disagrees: list again", seq(
			step{time.Minute, &Listed{Containers: dead, From: t0.Add(-time.Second), Until: t0.Add(time.Second)}, "RequestSync", PhaseIdle},
			step{time.Minute, SyncRequested{}, "List", PhaseListing},
		)},
		{"an older listing is dropped", seq(
			step{time.Minute, &Listed{Containers: dead, From: t0.Add(-2 * time.Second), Until: t0.Add(-time.Second)}, "", PhaseIdle},
		)},
		{"versions order listings; the own listing wins a tie", []step{
			{0, Started{}, "List", PhaseListing},
			{0, SpecChanged{Pod: pod}, "SpawnProbes", PhaseListing},
			{0, WorkDone{Listing: Listing{Containers: up, Version: 5}}, "SyncEnded; ProbeTargets; Persist; Report Running", PhaseIdle},
			{time.Second, &Listed{Containers: dead, Version: 4}, "", PhaseIdle},
			{time.Second, &Listed{Containers: dead, Version: 5}, "", PhaseIdle},
			{time.Second, &Listed{Containers: dead, Version: 6}, "RequestSync", PhaseIdle},
		}},
		// An own listing that started before a PLEG listing came is
		// ordered like any other, not taken as the newest.
		{"an own listing older than a PLEG listing received meanwhile", []step{
			{0, Started{}, "List", PhaseListing},
			{0, &Listed{Containers: dead, From: t0.Add(time.Second), Until: t0.Add(2 * time.Second)}, "RequestSync", PhaseListing},
			{0, SyncRequested{}, "", PhaseListing},
			{0, SpecChanged{Pod: pod}, "SpawnProbes", PhaseListing},
			{3 * time.Second, listed(0, up...), "SyncEnded; ProbeTargets; Persist; Report Running; SyncBegan; Run[start app]", PhaseSyncing},
		}},
		// TestListFailureAfterSyncListsBeforePlanning: a failed list is
		// retried on the curve, by a list before any plan.
		{"a failed list lists before planning again, on the retry curve", seq(
			step{time.Minute, Died{ContainerID: "app-0", At: t0.Add(time.Minute)}, "RequestSync", PhaseIdle},
			step{time.Minute, SyncRequested{}, "ProbeTargets; Persist; Report Running; SyncBegan; Run[start app]", PhaseSyncing},
			step{time.Minute, WorkDone{ListErr: errors.New("list: unavailable")}, "SyncTook; SyncEnded; SyncFailed+1s; Timer+1m1s", PhaseRetrying},
			step{time.Minute + time.Second, TimerFired{}, "List", PhaseListing},
			step{time.Minute + time.Second, WorkDone{ListErr: errors.New("list: unavailable")}, "SyncEnded; SyncFailed+2s; Timer+1m3s", PhaseRetrying},
			step{time.Minute + 3*time.Second, TimerFired{}, "List", PhaseListing},
			step{time.Minute + 3*time.Second, WorkDone{ListErr: errors.New("list: unavailable")}, "SyncEnded; SyncFailed+4s; Timer+1m7s", PhaseRetrying},
		)},
		{"a failed plan retries on a doubling curve, reset by a success", seq(
			step{time.Minute, Died{ContainerID: "app-0", At: t0.Add(time.Minute)}, "RequestSync", PhaseIdle},
			step{time.Minute, SyncRequested{}, "ProbeTargets; Persist; Report Running; SyncBegan; Run[start app]", PhaseSyncing},
			step{time.Minute, WorkDone{Errs: []error{errors.New("start: boom")}, Listing: Listing{Containers: dead, From: t0.Add(time.Minute), Until: t0.Add(time.Minute)}},
				"SyncTook; SyncEnded; SyncFailed+1s; Timer+1m1s", PhaseRetrying},
			step{time.Minute + time.Second, TimerFired{}, "ProbeTargets; Persist; Report Running; SyncBegan; Run[start app]", PhaseSyncing},
			step{time.Minute + time.Second, WorkDone{Errs: []error{errors.New("start: boom")}, Listing: Listing{Containers: dead, From: t0.Add(time.Minute + time.Second), Until: t0.Add(time.Minute + time.Second)}},
				"SyncTook; SyncEnded; SyncFailed+2s; Timer+1m3s", PhaseRetrying},
		)},
		{"the runtime down: nothing is planned; back: list first", seq(
			step{time.Minute, RuntimeHealth{Healthy: false}, "", PhaseIdle},
			step{time.Minute, &Listed{Containers: dead, ObservedAt: t0.Add(time.Minute)}, "RequestSync", PhaseIdle},
			step{time.Minute, SyncRequested{}, "", PhaseRuntimeDown},
			step{2 * time.Minute, RuntimeHealth{Healthy: true}, "List", PhaseListing},
		)},
		{"a changed spec aborts the starts under way", seq(
			step{time.Minute, SpecChanged{Pod: changed}, "AbortStarts; Report Running; SyncBegan; Run[kill app start app]", PhaseSyncing},
		)},
		{"removal: stop everything, then terminated", seq(
			step{time.Minute, Removed{}, "AbortStarts; StopProbes; SyncBegan; Run[kill app kill POD remove app remove POD]", PhaseSyncing},
			step{time.Minute, listed(0), "SyncTook; SyncEnded; ProbeTargets; Terminate", PhaseTerminated},
		)},
		{"terminated once: a late sync request or timer does not terminate again", seq(
			step{time.Minute, Removed{}, "AbortStarts; StopProbes; SyncBegan; Run[kill app kill POD remove app remove POD]", PhaseSyncing},
			step{time.Minute, listed(0), "SyncTook; SyncEnded; ProbeTargets; Terminate", PhaseTerminated},
			step{time.Minute, SyncRequested{}, "", PhaseTerminated},
			step{2 * time.Minute, TimerFired{}, "", PhaseTerminated},
		)},
		{"an orphan is removed without a spec", []step{
			{0, Started{}, "List", PhaseListing},
			{0, Removed{Namespace: "default", Name: "web"}, "AbortStarts; StopProbes", PhaseListing},
			{0, listed(0, up...), "SyncEnded; ProbeTargets; SyncBegan; Run[kill app kill POD remove app remove POD]", PhaseSyncing},
		}},
		{"a failed liveness probe kills the container", seq(
			step{time.Minute, ProbeChanged{Container: "app", Change: probe.Change{Kind: probe.Liveness, ContainerID: "app-0", State: probe.Failure}},
				"SyncBegan; Run[kill app]", PhaseSyncing},
		)},
		{"a readiness probe sets ready", []step{
			{0, Started{}, "List", PhaseListing},
			{0, SpecChanged{Pod: probed}, "SpawnProbes", PhaseListing},
			{0, listed(0, running(probed)...), "SyncEnded; ProbeTargets; Persist; Report Running", PhaseIdle},
			{time.Minute, ProbeChanged{Container: "app", Change: probe.Change{Kind: probe.Readiness, ContainerID: "app-0", State: probe.Success}},
				"Report Running", PhaseIdle},
			{time.Minute, ProbeChanged{Container: "app", Change: probe.Change{Kind: probe.Readiness, ContainerID: "app-0", State: probe.Success}}, "", PhaseIdle},
			{time.Minute, ProbeChanged{Container: "app", Change: probe.Change{Kind: probe.Readiness, ContainerID: ""}}, "", PhaseIdle},
		}},
		{"CrashLoopBackOff: a timer for the deadline, one BackOff event per exit", []step{
			{0, Started{}, "List", PhaseListing},
			{0, SpecChanged{Pod: pod}, "SpawnProbes", PhaseListing},
			{0, listed(0, up...), "SyncEnded; ProbeTargets; Persist; Report Running", PhaseIdle},
			{time.Minute, Died{ContainerID: "app-0", At: t0.Add(time.Minute)}, "RequestSync", PhaseIdle},
			// The kubelet's curve: the first exit restarts at once.
			{time.Minute, SyncRequested{}, "ProbeTargets; Persist; Report Running; SyncBegan; Run[start app]", PhaseSyncing},
			{time.Minute, WorkDone{Listing: Listing{Containers: restarted, From: t0.Add(time.Minute), Until: t0.Add(time.Minute)}},
				"SyncTook; SyncEnded; ProbeTargets; Persist; Report Running", PhaseIdle},
			{2 * time.Minute, Died{ContainerID: "app-1", At: t0.Add(2 * time.Minute)}, "RequestSync", PhaseIdle},
			{2 * time.Minute, SyncRequested{}, "ProbeTargets; Persist; Report Running; Timer+2m10s; Emit BackOff", PhaseIdle},
			{2*time.Minute + time.Second, TimerFired{}, "Timer+2m10s", PhaseIdle},                                                            // early: the deadline again, no second event
			{2*time.Minute + 10*time.Second, TimerFired{}, "Persist; Report Running; Timer+1h0m0s; SyncBegan; Run[start app]", PhaseSyncing}, // and a GC timer: app-0 is garbage
		}},
		{"a failed pull holds the start until its retry, then ImagePullBackOff", seq(
			step{time.Minute, Died{ContainerID: "app-0", At: t0.Add(time.Minute)}, "RequestSync", PhaseIdle},
			step{time.Minute, SyncRequested{}, "ProbeTargets; Persist; Report Running; SyncBegan; Run[start app]", PhaseSyncing},
			step{time.Minute, WorkDone{Listing: Listing{Containers: dead, From: t0.Add(time.Minute), Until: t0.Add(time.Minute)}, Waits: map[string]StartWait{"app": pullFailed}},
				"SyncTook; SyncEnded; ProbeTargets; Persist; Timer+1m10s; Report Running", PhaseIdle},
			step{time.Minute + 10*time.Second, TimerFired{}, "Emit BackOff; Emit Failed; Timer+1m30s; Report Running", PhaseIdle},
			step{time.Minute + 20*time.Second, SyncRequested{}, "", PhaseIdle}, // nothing new: the same status, no events
			step{time.Minute + 30*time.Second, TimerFired{}, "SyncBegan; Run[start app]", PhaseSyncing},
			step{time.Minute + 30*time.Second, WorkDone{Started: []string{"app"}, Listing: Listing{Containers: restarted, From: t0.Add(2 * time.Minute), Until: t0.Add(2 * time.Minute)}},
				"SyncTook; SyncEnded; ProbeTargets; Persist; Report Running", PhaseIdle},
		)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg()
			if strings.HasPrefix(tc.name, "CrashLoopBackOff") {
				c.Backoff = supervision.DefaultBackoffPolicy()
				c.GCPeriod = time.Hour // no garbage collection in the way
			}
			p := NewPod(c, nil)
			for i, s := range tc.steps {
				got := describe(p.Step(s.ev, t0.Add(s.at)))
				if got != s.want || p.Phase() != s.phase {
					t.Fatalf("step %d (%T):\n got %q, phase %s\nwant %q, phase %s", i, s.ev, got, p.Phase(), s.want, s.phase)
				}
			}
		})
	}
}

// The machine's package does no I/O and takes no lock.
func TestImportsNoIO(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkg.Imports) == 0 {
		t.Fatal("no imports read: the check would pass on anything")
	}
	for _, banned := range []string{"os", "os/exec", "io/ioutil", "sync", "sync/atomic", "net", "net/http", "syscall", "unsafe", "context"} {
		if slices.Contains(pkg.Imports, banned) {
			t.Errorf("package podstate imports %q: the machine does no I/O and takes no lock", banned)
		}
	}
}
