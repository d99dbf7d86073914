package actors

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// Failed start attempts show the kubelet's waiting reasons, messages and
// events (issue 12 items 2 and 7).

// podEvents returns the recorded events of pod name, oldest first.
func podEvents(t *testing.T, h *harness, name string) []messages.Event {
	t.Helper()
	res, err := h.sys.Root.RequestFuture(h.pid, &messages.GetEvents{}, time.Second).Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []messages.Event
	for _, e := range res.(*messages.Events).Items {
		if e.Pod == name {
			out = append(out, e)
		}
	}
	return out
}

// eventsWith returns the events of evs with reason whose message has the
// prefix msg.
func eventsWith(evs []messages.Event, reason, msg string) []messages.Event {
	var out []messages.Event
	for _, e := range evs {
		if e.Reason == reason && strings.HasPrefix(e.Message, msg) {
			out = append(out, e)
		}
	}
	return out
}

// waiting returns the waiting state of container name of pod (nil when it
// is not waiting, or has no status yet), and the pod's status.
func waiting(t *testing.T, h *harness, pod, name string) (*v1.ContainerStateWaiting, v1.PodStatus) {
	t.Helper()
	st := podStatus(t, h, pod)
	for _, cs := range append(st.InitContainerStatuses, st.ContainerStatuses...) {
		if cs.Name == name {
			return cs.State.Waiting, st
		}
	}
	return nil, st
}

// refusing is a runtime that refuses to create containers whose name
// starts with prefix while refuse is set, as Docker refuses an invalid
// config, and notes when.
type refusing struct {
	*fake.Runtime
	prefix string
	refuse atomic.Bool
	mu     sync.Mutex
	times  []time.Time
}

var errRefused = errors.New("Error response from daemon: the working directory 'srv' is invalid, it needs to be an absolute path")

func (r *refusing) Create(ctx context.Context, spec runtimeadapter.ContainerSpec) (string, error) {
	if r.refuse.Load() && strings.HasPrefix(spec.Name, r.prefix) {
		r.mu.Lock()
		r.times = append(r.times, time.Now())
		r.mu.Unlock()
		return "", errRefused
	}
	return r.Runtime.Create(ctx, spec)
}

// refusals returns the times of the refused creates.
func (r *refusing) refusals() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.times)
}

// A create the runtime refuses leaves the container Waiting with
// CreateContainerError and the runtime's message (Warning Failed
// "Error: …"), makes no instance and keeps restartCount; it is tried
// again every 10–15 s (the kubelet's failed-sync requeue), under Never the
// pod stays Pending, and once the runtime accepts it the container runs.
func TestCreateContainerError(t *testing.T) {
	for _, policy := range []v1.RestartPolicy{v1.RestartPolicyNever, v1.RestartPolicyAlways} {
		t.Run(string(policy), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rt := fake.New(fake.AutoImages(true))
				rr := &refusing{Runtime: rt, prefix: "actorlet_app_bad_"}
				rr.refuse.Store(true)
				h := newHarness(t, rt)
				h.cfg.Runtime = rr
				h.start()
				h.apply(testPod("bad", "uid-bad", policy, "app"))
				waitFor(t, 5*time.Second, "a refused create", func() bool { return len(rr.refusals()) == 1 })
				synctest.Wait()
				w, st := waiting(t, h, "bad", "app")
				if w == nil || w.Reason != "CreateContainerError" || !strings.Contains(w.Message, errRefused.Error()) {
					t.Fatalf("container state %+v, want waiting CreateContainerError with the runtime's message", firstStatus(st).State)
				}
				if st.Phase != v1.PodPending || firstStatus(st).RestartCount != 0 {
					t.Errorf("phase %s restartCount %d, want Pending, 0", st.Phase, firstStatus(st).RestartCount)
				}
				if evs := eventsWith(podEvents(t, h, "bad"), "Failed", "Error: "); len(evs) != 1 || evs[0].Type != messages.EventWarning ||
					!strings.Contains(evs[0].Message, errRefused.Error()) {
					t.Errorf("Failed events %+v, want one Warning \"Error: <the runtime's message>\"", evs)
				}
				time.Sleep(2 * time.Minute)
				synctest.Wait()
				times := rr.refusals()
				if len(times) < 8 || len(times) > 13 {
					t.Errorf("%d attempts in 2 min, want one every 10–15 s", len(times))
				}
				for i := 1; i < len(times); i++ {
					if d := times[i].Sub(times[i-1]); d < 10*time.Second || d > 15*time.Second {
						t.Errorf("attempt %d came %v after the one before, want 10–15 s", i, d)
					}
				}
				for _, c := range rt.Containers() {
					if c.Labels[runtimeadapter.LabelContainerName] == "app" {
						t.Errorf("an app container exists: %s", c.Name)
					}
				}
				w, st = waiting(t, h, "bad", "app")
				if w == nil || w.Reason != "CreateContainerError" || st.Phase != v1.PodPending || firstStatus(st).RestartCount != 0 {
					t.Errorf("after 2 min: %+v phase %s restartCount %d, want CreateContainerError, Pending, 0", w, st.Phase, firstStatus(st).RestartCount)
				}
				rr.refuse.Store(false)
				waitFor(t, 16*time.Second, "the app running once the runtime accepts it", func() bool { return len(rt.Running("uid-bad", "app")) == 1 })
				h.stop()
				rt.Close()
			})
		})
	}
}

// A restart whose create is refused: the container waits with
// CreateContainerError, its last termination shown, its restartCount that
// of the instance that ran.
func TestCreateContainerErrorOnRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("app", fake.Behavior{ExitCode: 3, ExitAfter: time.Second})
		rr := &refusing{Runtime: rt, prefix: "actorlet_app_web_"}
		h := newHarness(t, rt)
		h.cfg.Runtime = rr
		h.start()
		h.apply(testPod("web", "uid-web", v1.RestartPolicyAlways, "app"))
		waitFor(t, 5*time.Second, "the app ran", func() bool { return len(h.creates("actorlet_app_web_")) == 1 })
		rr.refuse.Store(true)
		waitFor(t, 2*time.Minute, "a refused restart", func() bool { return len(rr.refusals()) == 1 })
		synctest.Wait()
		w, st := waiting(t, h, "web", "app")
		cs := firstStatus(st)
		if w == nil || w.Reason != "CreateContainerError" || cs.RestartCount != 0 || cs.LastTerminationState.Terminated == nil ||
			cs.LastTerminationState.Terminated.ExitCode != 3 {
			t.Errorf("status %+v, want waiting CreateContainerError, restartCount 0, last exit 3", cs)
		}
		h.stop()
		rt.Close()
	})
}

// An image reference that does not parse: the container waits with
// InvalidImageName and the kubelet's message, one InspectFailed event,
// the pod stays Pending (restartPolicy Never), and nothing is tried again
// until the spec changes.
func TestInvalidImageName(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		h := newHarness(t, rt)
		h.start()
		pod := testPod("bad", "uid-bad", v1.RestartPolicyNever, "app")
		pod.Spec.Containers[0].Image = "Bad/Name:1"
		h.apply(pod)
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		// The reason at the end is distribution/reference's, as in the kubelet.
		const msg = `Failed to apply default image tag "Bad/Name:1": couldn't parse image name "Bad/Name:1": ` +
			"invalid reference format: repository name (Name) must be lowercase"
		w, st := waiting(t, h, "bad", "app")
		if w == nil || w.Reason != "InvalidImageName" || w.Message != msg || st.Phase != v1.PodPending {
			t.Errorf("waiting %+v phase %s, want InvalidImageName %q, Pending", w, st.Phase, msg)
		}
		evs := podEvents(t, h, "bad")
		if got := eventsWith(evs, "InspectFailed", ""); len(got) != 1 || got[0].Message != msg || got[0].Type != messages.EventWarning {
			t.Errorf("InspectFailed events %+v, want one Warning %q", got, msg)
		}
		if got := eventsWith(evs, "Failed", "Error: InvalidImageName"); len(got) != 1 {
			t.Errorf("%d Failed \"Error: InvalidImageName\" events in 2 min, want 1", len(got))
		}
		if n := rt.PullCount("Bad/Name:1"); n != 0 {
			t.Errorf("%d pulls of an invalid name", n)
		}
		fixed := pod.DeepCopy()
		fixed.Spec.Containers[0].Image = "work:1"
		h.apply(fixed)
		waitFor(t, 5*time.Second, "the fixed spec running", func() bool { return len(rt.Running("uid-bad", "app")) == 1 })
		h.stop()
		rt.Close()
	})
}

// imagePullPolicy Never with no image: ErrImageNeverPull with the
// kubelet's message and a Warning ErrImageNeverPull event; the pod stays
// Pending; once the image is there the container starts within 15 s.
func TestErrImageNeverPull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.WithImages("pause:1"))
		h := newHarness(t, rt)
		h.start()
		pod := testPod("local", "uid-local", v1.RestartPolicyNever, "app")
		pod.Spec.Containers[0].Image = "local/app:1"
		pod.Spec.Containers[0].ImagePullPolicy = v1.PullNever
		h.apply(pod)
		const msg = `Container image "local/app:1" is not present with pull policy of Never`
		waitFor(t, 5*time.Second, "ErrImageNeverPull", func() bool {
			w, _ := waiting(t, h, "local", "app")
			return w != nil && w.Reason == "ErrImageNeverPull"
		})
		// Also while it is tried again (every 10–15 s), the container shows
		// the last failure, not ContainerCreating.
		for end := time.Now().Add(40 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			synctest.Wait()
			if w, _ := waiting(t, h, "local", "app"); w == nil || w.Reason != "ErrImageNeverPull" {
				t.Fatalf("at %v: waiting %+v, want ErrImageNeverPull throughout", time.Now(), w)
			}
		}
		w, st := waiting(t, h, "local", "app")
		if w == nil || w.Reason != "ErrImageNeverPull" || w.Message != msg || st.Phase != v1.PodPending {
			t.Errorf("waiting %+v phase %s, want ErrImageNeverPull %q, Pending", w, st.Phase, msg)
		}
		if got := eventsWith(podEvents(t, h, "local"), "ErrImageNeverPull", msg); len(got) == 0 || got[0].Type != messages.EventWarning {
			t.Errorf("ErrImageNeverPull events %+v, want Warning %q", got, msg)
		}
		if n := rt.CallCount(fake.MethodPullImage); n != 0 {
			t.Errorf("%d pulls under policy Never", n)
		}
		rt.AddImage("local/app:1")
		waitFor(t, 15*time.Second, "the app running once its image is there", func() bool { return len(rt.Running("uid-local", "app")) == 1 })
		h.stop()
		rt.Close()
	})
}

// A failed pull shows ErrImagePull first, then ImagePullBackOff while the
// back-off holds (from the kubelet's next sync, 10–15 s later, to the end
// of the back-off: 10 s doubling). Pulling events mark the attempts that
// pull, never one the back-off holds: a second pod of the same image
// arriving during the back-off waits with ImagePullBackOff at once,
// without a Pulling event.
func TestImagePullReasonsAndEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.WithImages("pause:1"))
		h := newHarness(t, rt)
		h.start()
		const img = "registry.example/missing:1"
		pod := func(name string) *v1.Pod {
			p := testPod(name, "uid-"+name, v1.RestartPolicyAlways, "app")
			p.Spec.Containers[0].Image = img
			p.Spec.Containers[0].ImagePullPolicy = v1.PullIfNotPresent
			return p
		}
		reason := func(name string) string {
			for _, cs := range podStatus(t, h, name).ContainerStatuses {
				if cs.Name == "app" && cs.State.Waiting != nil {
					return cs.State.Waiting.Reason
				}
			}
			return ""
		}
		pullings := func(name string) int { return len(eventsWith(podEvents(t, h, name), "Pulling", "")) }
		start := time.Now()
		h.apply(pod("one"))
		waitFor(t, 2*time.Second, "the first pull", func() bool { return rt.PullCount(img) == 1 })
		synctest.Wait()
		if r := reason("one"); r != "ErrImagePull" {
			t.Fatalf("after the failed pull: %q, want ErrImagePull", r)
		}
		evs := podEvents(t, h, "one")
		if len(eventsWith(evs, "Failed", `Failed to pull image "`+img+`": `)) != 1 || len(eventsWith(evs, "Failed", "Error: ErrImagePull")) != 1 {
			t.Errorf("events %+v, want Failed \"Failed to pull image …\" and Failed \"Error: ErrImagePull\"", evs)
		}
		// The first back-off is 10 s: the kubelet's next sync (10–15 s)
		// pulls again, ErrImagePull throughout.
		time.Sleep(start.Add(9 * time.Second).Sub(time.Now()))
		if r, n := reason("one"), rt.PullCount(img); r != "ErrImagePull" || n != 1 {
			t.Fatalf("at 9 s: %q after %d pulls, want ErrImagePull after 1", r, n)
		}
		waitFor(t, 7*time.Second, "the second pull", func() bool { return rt.PullCount(img) == 2 })
		second := pullTimes(rt)[1]
		if d := second.Sub(start); d < 10*time.Second {
			t.Errorf("second pull at %v, inside the 10 s back-off", d)
		}
		// Then a 20 s back-off: ErrImagePull until the next sync (10–15 s),
		// ImagePullBackOff after it, with a BackOff event and no pull.
		time.Sleep(16 * time.Second)
		synctest.Wait()
		if r, n := reason("one"), rt.PullCount(img); r != "ImagePullBackOff" || n != 2 {
			t.Fatalf("16 s after the second failure: %q after %d pulls, want ImagePullBackOff after 2", r, n)
		}
		w, _ := waiting(t, h, "one", "app")
		if !strings.HasPrefix(w.Message, `Back-off pulling image "`+img+`": ErrImagePull: `) {
			t.Errorf("ImagePullBackOff message %q", w.Message)
		}
		if n := len(eventsWith(podEvents(t, h, "one"), "BackOff", `Back-off pulling image "`+img+`"`)); n != 1 {
			t.Errorf("%d BackOff events, want 1", n)
		}
		// A second pod of the same image, held by the image's back-off.
		h.apply(pod("one"), pod("two"))
		// (ContainerCreating first, while its sandbox starts: the status
		// may be read then.)
		waitFor(t, 2*time.Second, "the second pod waiting", func() bool { r := reason("two"); return r != "" && r != "ContainerCreating" })
		if r := reason("two"); r != "ImagePullBackOff" {
			t.Errorf("a pod arriving during the back-off: %q, want ImagePullBackOff", r)
		}
		if n := pullings("two"); n != 0 {
			t.Errorf("%d Pulling events for an attempt the back-off held", n)
		}
		if n := pullings("one"); n != 2 {
			t.Errorf("%d Pulling events for the first pod's 2 pulls", n)
		}
		waitFor(t, 10*time.Second, "the third pull", func() bool { return rt.PullCount(img) >= 3 })
		if d := pullTimes(rt)[2].Sub(second); d < 20*time.Second {
			t.Errorf("third pull %v after the second, inside the 20 s back-off", d)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		// Every Pulling event marks an attempt that pulled: one started, or
		// joined, at that instant (the back-off is per image, so either pod
		// may be the one held).
		pulls := map[time.Time]bool{}
		for _, at := range pullTimes(rt) {
			pulls[at] = true
		}
		for _, e := range append(eventsWith(podEvents(t, h, "one"), "Pulling", ""), eventsWith(podEvents(t, h, "two"), "Pulling", "")...) {
			if !pulls[e.Time] {
				t.Errorf("Pulling event of pod %s at %v, when no pull began (pulls at %v)", e.Pod, e.Time.Sub(start), pullTimes(rt))
			}
		}
		h.stop()
		rt.Close()
	})
}

// pullTimes returns when each PullImage call began.
func pullTimes(rt *fake.Runtime) []time.Time {
	var out []time.Time
	for _, c := range rt.Calls() {
		if c.Method == fake.MethodPullImage {
			out = append(out, c.Time)
		}
	}
	return out
}

// firstStatus is the status of the pod's first app container (zero when
// there is none yet).
func firstStatus(st v1.PodStatus) v1.ContainerStatus {
	if len(st.ContainerStatuses) == 0 {
		return v1.ContainerStatus{}
	}
	return st.ContainerStatuses[0]
}
