package actors

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
	"github.com/actorlet/actorlet/supervision"
)

// Tests of what a node remembers of a pod's containers beyond their
// instances (issue 12, items 2, 3 and 6): completed work is not run again
// when its exited container is removed, restart counts go on, a container
// that cannot start is terminated with StartError, and CrashLoopBackOff
// follows the kubelet's curve (0, 10 s, 20 s … 300 s).

// exitedOf returns the exited instances of a pod's container.
func exitedOf(rt *fake.Runtime, uid, name string) []runtimeadapter.Container {
	var out []runtimeadapter.Container
	for _, c := range rt.Containers() {
		if c.Labels[runtimeadapter.LabelPodUID] == uid && c.Labels[runtimeadapter.LabelContainerName] == name &&
			c.State == runtimeadapter.StateExited {
			out = append(out, c)
		}
	}
	return out
}

// startsOf returns the Start calls of the containers whose runtime name
// starts with prefix.
func startsOf(rt *fake.Runtime, prefix string) []fake.Call {
	names := map[string]string{}
	for _, c := range rt.Containers() {
		names[c.ID] = c.Name
	}
	var out []fake.Call
	for _, c := range rt.Calls() {
		if c.Method == fake.MethodStart && strings.HasPrefix(names[c.Arg], prefix) {
			out = append(out, c)
		}
	}
	return out
}

// withStateFile gives h's node a container history kept in path, as
// `actorlet run` does.
func withStateFile(t *testing.T, h *harness, path string) {
	t.Helper()
	hist, err := supervision.NewHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	h.cfg.History = hist
}

// statusOf returns the status of container name (init or app) in st.
func statusOf(st v1.PodStatus, name string) *v1.ContainerStatus {
	for _, l := range [][]v1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for i := range l {
			if l[i].Name == name {
				return &l[i]
			}
		}
	}
	return nil
}

func describeStatus(st v1.PodStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "phase %s", st.Phase)
	for _, l := range [][]v1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for _, cs := range l {
			fmt.Fprintf(&b, "; %s restarts=%d %+v last=%+v", cs.Name, cs.RestartCount, cs.State, cs.LastTerminationState)
		}
	}
	return b.String()
}

// A container that completed (OnFailure exit 0, an init container that
// exited 0, any exit under Never) is not run again when its exited
// container is removed (`docker rm`, GC): the node remembers the exit.
// The status shows it terminated as before, with its container ID.
func TestRemovedCompletedContainerIsNotRunAgain(t *testing.T) {
	server := fake.Behavior{RunForever: true}
	for _, tc := range []struct {
		name   string
		pod    func() *v1.Pod
		done   string // the container that finishes, then is removed
		exit   int
		others []string // containers that must keep their one instance
		phase  v1.PodPhase
	}{
		{"OnFailure exit 0 beside a server", func() *v1.Pod {
			return testPod("job", "uid-job", v1.RestartPolicyOnFailure, "job", "server")
		}, "job", 0, []string{"server"}, v1.PodRunning},
		{"OnFailure pod completed", func() *v1.Pod {
			return testPod("job", "uid-job", v1.RestartPolicyOnFailure, "job")
		}, "job", 0, nil, v1.PodSucceeded},
		{"Never exit 0 beside a server", func() *v1.Pod {
			return testPod("job", "uid-job", v1.RestartPolicyNever, "job", "server")
		}, "job", 0, []string{"server"}, v1.PodRunning},
		{"Never exit 1", func() *v1.Pod {
			return testPod("job", "uid-job", v1.RestartPolicyNever, "fail")
		}, "fail", 1, nil, v1.PodFailed},
		{"init container completed", func() *v1.Pod {
			p := testPod("job", "uid-job", v1.RestartPolicyAlways, "server")
			p.Spec.InitContainers = []v1.Container{{Name: "init1", Image: "work:1"}}
			return p
		}, "init1", 0, []string{"server"}, v1.PodRunning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rt := fake.New(fake.AutoImages(true))
				rt.ScriptContainer("job", fake.Behavior{ExitAfter: time.Second})
				rt.ScriptContainer("init1", fake.Behavior{ExitAfter: time.Second})
				rt.ScriptContainer("fail", fake.Behavior{ExitCode: 1, ExitAfter: time.Second})
				rt.ScriptContainer("server", server)
				h := newHarness(t, rt)
				h.start()
				h.apply(tc.pod())
				// The agent has seen the exit (an exit and a removal between two
				// observations cannot be told from a kill: not this test).
				waitFor(t, 30*time.Second, tc.done+" exited and the pod "+string(tc.phase), func() bool {
					st := podStatus(t, h, "job")
					cs := statusOf(st, tc.done)
					return len(exitedOf(rt, "uid-job", tc.done)) == 1 && st.Phase == tc.phase && cs != nil && cs.State.Terminated != nil &&
						len(h.creates("actorlet_server_")) == len(tc.others)
				})
				gone := exitedOf(rt, "uid-job", tc.done)[0]
				if err := rt.RemoveExternally(gone.ID); err != nil {
					t.Fatal(err)
				}
				time.Sleep(2 * time.Minute) // relists, GC, resyncs
				synctest.Wait()
				if n := len(h.creates("actorlet_" + tc.done + "_")); n != 1 {
					t.Errorf("%s created %d times, want once: it ran again after its exited container was removed", tc.done, n)
				}
				for _, o := range tc.others {
					if n := len(h.creates("actorlet_" + o + "_")); n != 1 {
						t.Errorf("%s created %d times, want once", o, n)
					}
				}
				if n := len(h.creates("actorlet_POD_")); n != 1 {
					t.Errorf("%d sandboxes created, want 1", n)
				}
				st := podStatus(t, h, "job")
				cs := statusOf(st, tc.done)
				if st.Phase != tc.phase || cs == nil || cs.State.Terminated == nil || cs.State.Terminated.ExitCode != int32(tc.exit) ||
					cs.State.Terminated.ContainerID != "docker://"+gone.ID || cs.ContainerID != "docker://"+gone.ID {
					t.Errorf("status after the removal: %s; want phase %s and %s terminated with exit %d as %s",
						describeStatus(st), tc.phase, tc.done, tc.exit, short(gone.ID))
				}
				h.stop()
				rt.Close()
			})
		})
	}
}

// The same when the exited container is removed while the agent is down:
// the record of the exit is in the node's state file.
func TestRemovedWhileAgentDownIsNotRunAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		state := t.TempDir() + "/containers.json"
		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("job", fake.Behavior{ExitAfter: time.Second})
		h := newHarness(t, rt)
		withStateFile(t, h, state)
		h.start()
		pod := testPod("job", "uid-job", v1.RestartPolicyOnFailure, "job", "server")
		h.apply(pod)
		waitFor(t, 30*time.Second, "job exited and seen", func() bool {
			cs := statusOf(podStatus(t, h, "job"), "job")
			return len(exitedOf(rt, "uid-job", "job")) == 1 && cs != nil && cs.State.Terminated != nil
		})
		h.stop()

		if err := rt.RemoveExternally(exitedOf(rt, "uid-job", "job")[0].ID); err != nil {
			t.Fatal(err)
		}
		h2 := newHarness(t, rt)
		withStateFile(t, h2, state)
		h2.start()
		h2.apply(pod)
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := len(h2.creates("actorlet_job_")); n != 1 { // the runtime's calls of both agents
			t.Errorf("job created %d times in all, want once: it ran again after the agent's restart", n)
		}
		if n := len(rt.Running("uid-job", "server")); n != 1 {
			t.Errorf("%d servers running", n)
		}
		st := podStatus(t, h2, "job")
		if cs := statusOf(st, "job"); cs == nil || cs.State.Terminated == nil || cs.State.Terminated.Reason != "Completed" {
			t.Errorf("status after the agent's restart: %s; want job terminated Completed", describeStatus(st))
		}
		h2.stop()
		rt.Close()
	})
}

// Removing the exited instances of a crashing container does not reset its
// restart count nor bypass its back-off: the next instance continues the
// count (a new runtime name) at the back-off deadline of the removed exit,
// and the status keeps the last termination.
func TestRemovedExitKeepsRestartCountAndBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("app", fake.Behavior{ExitCode: 3, ExitAfter: time.Second})
		h := newHarness(t, rt)
		h.start()
		h.apply(testPod("crasher", "uid-crash", v1.RestartPolicyAlways, "app"))
		prefix := "actorlet_app_crasher_default_"
		waitFor(t, 60*time.Second, "the second instance's exit seen", func() bool {
			cs := statusOf(podStatus(t, h, "crasher"), "app")
			return len(h.creates(prefix)) == 2 && len(h.live("uid-crash", "app")) == 0 &&
				cs != nil && cs.RestartCount == 1 && cs.State.Running == nil
		})
		var last runtimeadapter.Container
		for _, c := range exitedOf(rt, "uid-crash", "app") {
			if c.Labels[runtimeadapter.LabelRestartCount] == "1" {
				last = c
			}
			if err := rt.RemoveExternally(c.ID); err != nil {
				t.Fatal(err)
			}
		}
		if last.ID == "" {
			t.Fatalf("no exited instance with restart count 1: %+v", rt.Containers())
		}
		waitFor(t, 60*time.Second, "the third instance", func() bool { return len(h.creates(prefix)) == 3 })
		got := h.creates(prefix)
		// The second exit (the first one armed the back-off) waits 10 s.
		if d := got[2].Sub(last.FinishedAt); d != 10*time.Second {
			t.Errorf("third instance created %v after the removed exit, want 10 s (its back-off)", d)
		}
		var names []string
		for _, c := range rt.Calls() {
			if c.Method == fake.MethodCreate && strings.HasPrefix(c.Arg, prefix) {
				names = append(names, c.Arg)
			}
		}
		if len(names) != 3 || !strings.HasSuffix(names[2], "_2") {
			t.Errorf("creates %v: want the third named attempt 2", names)
		}
		waitFor(t, 5*time.Second, "the status of the third instance", func() bool {
			cs := statusOf(podStatus(t, h, "crasher"), "app")
			return cs != nil && cs.RestartCount == 2
		})
		st := podStatus(t, h, "crasher")
		cs := statusOf(st, "app")
		if lt := cs.LastTerminationState.Terminated; lt == nil || lt.ExitCode != 3 || lt.ContainerID != "docker://"+last.ID {
			t.Errorf("status %s: want the last termination of the removed %s (exit 3)", describeStatus(st), short(last.ID))
		}
		h.stop()
		rt.Close()
	})
}

// errNoSuchFile is what the fake's Start returns for a container whose
// command does not exist (Docker's message).
var errNoSuchFile = errors.New(`failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "/does-not-exist": stat /does-not-exist: no such file or directory: unknown`)

// A container whose start fails (its command does not exist) is
// terminated with reason StartError, exit code 128 and the runtime's
// message, as the kubelet shows it on containerd; under restartPolicy
// Never the pod is Failed and the container is not started again.
func TestStartErrorUnderNeverFailsThePod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("app", fake.Behavior{StartError: errNoSuchFile})
		h := newHarness(t, rt)
		h.start()
		h.apply(testPod("broken", "uid-broken", v1.RestartPolicyNever, "app"))
		waitFor(t, 30*time.Second, "the pod Failed", func() bool { return podStatus(t, h, "broken").Phase == v1.PodFailed })
		time.Sleep(time.Minute)
		synctest.Wait()
		st := podStatus(t, h, "broken")
		cs := statusOf(st, "app")
		if st.Phase != v1.PodFailed || cs == nil || cs.State.Terminated == nil {
			t.Fatalf("status %s: want Failed, app terminated", describeStatus(st))
		}
		term := cs.State.Terminated
		if term.Reason != "StartError" || term.ExitCode != 128 || term.Message != errNoSuchFile.Error() || term.FinishedAt.IsZero() {
			t.Errorf("app terminated %+v; want StartError, 128, Docker's message, a finish time", term)
		}
		if starts := startsOf(rt, "actorlet_app_"); len(starts) != 1 {
			t.Errorf("%d starts of the app, want 1 (a start that failed is never tried again)", len(starts))
		}
		if n := len(h.creates("actorlet_app_")); n != 1 {
			t.Errorf("%d app creates, want 1", n)
		}
		if sb := rt.Running("uid-broken", runtimeadapter.SandboxName); len(sb) != 0 {
			t.Errorf("the failed pod's sandbox still runs")
		}
		res, _ := h.sys.Root.RequestFuture(h.pid, &messages.GetEvents{}, time.Second).Result()
		var failed []string
		for _, e := range res.(*messages.Events).Items {
			if e.Reason == "Failed" && e.Container == "app" {
				failed = append(failed, e.Message)
			}
		}
		if len(failed) != 1 || failed[0] != "Error: "+errNoSuchFile.Error() || !strings.Contains(failed[0], "/does-not-exist") {
			t.Errorf("Failed events %q; want one, \"Error: \" and the runtime's message, as the kubelet's", failed)
		}
		h.stop()
		rt.Close()
	})
}

// Under restartPolicy Always a failed start is a crash like any other: a
// new instance each time, restartCount + 1, on the CrashLoopBackOff curve
// (the first at once, the next 10 s later).
func TestStartErrorUnderAlwaysCrashLoops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("app", fake.Behavior{StartError: errNoSuchFile})
		h := newHarness(t, rt)
		h.start()
		h.apply(testPod("broken", "uid-broken", v1.RestartPolicyAlways, "app"))
		prefix := "actorlet_app_broken_default_"
		waitFor(t, 60*time.Second, "three instances", func() bool { return len(h.creates(prefix)) >= 3 })
		got := h.creates(prefix)
		if d := got[1].Sub(got[0]); d != 0 {
			t.Errorf("second instance %v after the first, want at once (the first exit arms the back-off)", d)
		}
		if d := got[2].Sub(got[1]); d != 10*time.Second {
			t.Errorf("third instance %v after the second, want 10 s", d)
		}
		waitFor(t, 5*time.Second, "the status in back-off", func() bool {
			cs := statusOf(podStatus(t, h, "broken"), "app")
			return cs != nil && cs.RestartCount == 2 && cs.State.Waiting != nil
		})
		st := podStatus(t, h, "broken")
		cs := statusOf(st, "app")
		lt := cs.LastTerminationState.Terminated
		if st.Phase != v1.PodRunning || cs.State.Waiting.Reason != "CrashLoopBackOff" || lt == nil || lt.Reason != "StartError" || lt.ExitCode != 128 {
			t.Errorf("status %s; want Running, app waiting in CrashLoopBackOff after a StartError 128", describeStatus(st))
		}
		for _, c := range startsOf(rt, prefix) {
			if c.Err == nil {
				t.Errorf("a start of %s succeeded", c.Arg)
			}
		}
		h.stop()
		rt.Close()
	})
}

// A running container removed from outside (`docker rm -f`) before any
// exit of it is seen — no event stream, so only the relist sees it gone —
// is a lost exit (137, ContainerStatusUnknown, as the kubelet reports a
// container it lost): the next instance continues the count, with a new
// runtime name.
func TestRunningContainerRemovedKeepsTheCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		h := newHarness(t, rt)
		h.cfg.EventRelistPeriod = -1 // relist only
		h.start()
		h.apply(testPod("web", "uid-web", v1.RestartPolicyAlways, "app"))
		waitFor(t, 10*time.Second, "app running", func() bool { return len(rt.Running("uid-web", "app")) == 1 })
		time.Sleep(3 * time.Second) // listed running
		synctest.Wait()
		if err := rt.RemoveExternally(rt.Running("uid-web", "app")[0].ID); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 30*time.Second, "a new app instance", func() bool { return len(rt.Running("uid-web", "app")) == 1 })
		names := []string{}
		for _, c := range rt.Calls() {
			if c.Method == fake.MethodCreate && strings.HasPrefix(c.Arg, "actorlet_app_") {
				names = append(names, c.Arg)
			}
		}
		if len(names) != 2 || !strings.HasSuffix(names[1], "_1") {
			t.Errorf("creates %v: want the second named attempt 1", names)
		}
		waitFor(t, 5*time.Second, "the status of the new instance", func() bool {
			cs := statusOf(podStatus(t, h, "web"), "app")
			return cs != nil && cs.State.Running != nil && cs.RestartCount == 1
		})
		cs := statusOf(podStatus(t, h, "web"), "app")
		if lt := cs.LastTerminationState.Terminated; lt == nil || lt.ExitCode != 137 || lt.Reason != "ContainerStatusUnknown" {
			t.Errorf("last state %+v; want 137 ContainerStatusUnknown", cs.LastTerminationState)
		}
		h.stop()
		rt.Close()
	})
}
