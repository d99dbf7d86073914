package actors

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// Deletion and spec changes abort what a pod's worker was starting (issue
// 12 item 4): nothing of a deleted pod is created or started after the
// deletion, and it is gone within its grace period plus two relists.

const abortRelist = time.Second // the harness's relist period (the default)

// noneLeft waits until no container of pod uid is left, failing
// after limit.
func noneLeft(t *testing.T, rt *fake.Runtime, uid string, limit time.Duration) {
	t.Helper()
	waitFor(t, limit, "every container of "+uid+" gone", func() bool {
		for _, c := range rt.Containers() {
			if c.Labels[runtimeadapter.LabelPodUID] == uid {
				return false
			}
		}
		return true
	})
}

// startsAfter fails the test for any Create of a container named with
// prefix, or any Start of a container not in allowed, after t0.
func startsAfter(t *testing.T, rt *fake.Runtime, t0 time.Time, prefix string, allowed map[string]bool) {
	t.Helper()
	for _, c := range rt.Calls() {
		if c.Time.Before(t0) {
			continue
		}
		switch {
		case c.Method == fake.MethodCreate && strings.HasPrefix(c.Arg, prefix):
			t.Errorf("Create(%s) %v after the deletion", c.Arg, c.Time.Sub(t0))
		case c.Method == fake.MethodStart && !allowed[c.Arg]:
			t.Errorf("Start(%s) %v after the deletion, not of the other pod", short(c.Arg), c.Time.Sub(t0))
		}
	}
}

func idsOf(rt *fake.Runtime, uid string) map[string]bool {
	out := map[string]bool{}
	for _, c := range rt.Containers() {
		if c.Labels[runtimeadapter.LabelPodUID] == uid {
			out[c.ID] = true
		}
	}
	return out
}

// A pod deleted while its image pull runs (30 s) creates nothing after
// the deletion and is gone within its grace period plus two relists; the
// other pod waiting for the same pull still gets its image and runs.
func TestDeletionAbortsWaitForPull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.WithImages("pause:1"), fake.WithPullable("slow:1"))
		rt.SetDelay(fake.MethodPullImage, 30*time.Second)
		h := newHarness(t, rt)
		h.start()
		a := testPod("a", "uid-a", v1.RestartPolicyAlways, "app")
		b := testPod("b", "uid-b", v1.RestartPolicyAlways, "app")
		grace := int64(5)
		a.Spec.TerminationGracePeriodSeconds = &grace
		for _, p := range []*v1.Pod{a, b} {
			p.Spec.Containers[0].Image = "slow:1"
			p.Spec.Containers[0].ImagePullPolicy = v1.PullIfNotPresent
		}
		h.apply(a, b)
		waitFor(t, 5*time.Second, "both sandboxes up and the pull under way", func() bool {
			return len(rt.Running("uid-a", runtimeadapter.SandboxName)) == 1 && len(rt.Running("uid-b", runtimeadapter.SandboxName)) == 1 &&
				rt.PullCount("slow:1") == 1
		})
		time.Sleep(2 * time.Second)
		deleted := time.Now()
		h.apply(b)
		noneLeft(t, rt, "uid-a", time.Duration(grace)*time.Second+2*abortRelist)
		t.Logf("pod a gone %v after its deletion", time.Since(deleted))
		waitFor(t, 40*time.Second, "pod b running once the shared pull ends", func() bool { return len(rt.Running("uid-b", "app")) == 1 })
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if n := rt.PullCount("slow:1"); n != 1 {
			t.Errorf("%d pulls of slow:1, want 1 (shared, not restarted)", n)
		}
		startsAfter(t, rt, deleted, "actorlet_app_a_", idsOf(rt, "uid-b"))
		noneLeft(t, rt, "uid-a", 0)
		h.stop()
		rt.Close()
	})
}

// lateCreate is a runtime whose Create returns when its caller gives up
// but completes anyway, as a Docker daemon does with a request its client
// cancelled.
type lateCreate struct {
	*fake.Runtime
	wg sync.WaitGroup
}

func (r *lateCreate) Create(ctx context.Context, spec runtimeadapter.ContainerSpec) (string, error) {
	type result struct {
		id  string
		err error
	}
	ch := make(chan result, 1)
	r.wg.Go(func() {
		id, err := r.Runtime.Create(context.WithoutCancel(ctx), spec)
		ch <- result{id, err}
	})
	select {
	case res := <-ch:
		return res.id, res.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// A pod deleted while its app container's create takes 2 s starts nothing
// after the deletion and is gone within its grace period plus two
// relists, whether the runtime drops the cancelled create or completes it
// (the created container is then removed).
func TestDeletionAbortsCreate(t *testing.T) {
	for _, late := range []bool{false, true} {
		name := "create dropped"
		if late {
			name = "create completed anyway"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rt := fake.New(fake.AutoImages(true))
				rt.SetDelay(fake.MethodCreate, 2*time.Second)
				h := newHarness(t, rt)
				var lc *lateCreate
				if late {
					lc = &lateCreate{Runtime: rt}
					h.cfg.Runtime = lc
				}
				h.start()
				a := testPod("a", "uid-a", v1.RestartPolicyAlways, "app")
				grace := int64(5)
				a.Spec.TerminationGracePeriodSeconds = &grace
				h.apply(a)
				waitFor(t, 10*time.Second, "the app's create under way", func() bool {
					return slices.ContainsFunc(rt.Calls(), func(c fake.Call) bool {
						return c.Method == fake.MethodCreate && strings.HasPrefix(c.Arg, "actorlet_app_a_")
					})
				})
				time.Sleep(time.Second)
				deleted := time.Now()
				h.apply()
				noneLeft(t, rt, "uid-a", time.Duration(grace)*time.Second+2*abortRelist)
				t.Logf("pod a gone %v after its deletion", time.Since(deleted))
				time.Sleep(10 * time.Second)
				synctest.Wait()
				startsAfter(t, rt, deleted, "actorlet_app_a_", nil)
				noneLeft(t, rt, "uid-a", 0)
				h.stop()
				if lc != nil {
					lc.wg.Wait()
				}
				rt.Close()
			})
		})
	}
}

// A spec change while the container's image is being pulled: the
// container is never started with the old spec; the new one starts once
// the pull (which goes on) ends.
func TestSpecChangeDuringPullStartsOnlyNewSpec(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.WithImages("pause:1"), fake.WithPullable("slow:1"))
		rt.SetDelay(fake.MethodPullImage, 30*time.Second)
		var mu sync.Mutex
		var envs [][]string
		rt.SetBehavior(func(s runtimeadapter.ContainerSpec) bool {
			if s.Labels[runtimeadapter.LabelContainerName] == "app" {
				mu.Lock()
				envs = append(envs, s.Env)
				mu.Unlock()
			}
			return false // no behaviour of its own: runs until stopped
		}, fake.Behavior{})
		h := newHarness(t, rt)
		h.start()
		pod := testPod("web", "uid-web", v1.RestartPolicyAlways, "app")
		pod.Spec.Containers[0].Image = "slow:1"
		pod.Spec.Containers[0].Env = []v1.EnvVar{{Name: "V", Value: "old"}}
		h.apply(pod)
		waitFor(t, 5*time.Second, "the pull under way", func() bool { return rt.PullCount("slow:1") == 1 })
		time.Sleep(5 * time.Second)
		edited := pod.DeepCopy()
		edited.Spec.Containers[0].Env[0].Value = "new"
		h.apply(edited)
		waitFor(t, 40*time.Second, "the app running", func() bool { return len(rt.Running("uid-web", "app")) == 1 })
		time.Sleep(10 * time.Second)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(envs) != 1 || !slices.Contains(envs[0], "V=new") {
			t.Errorf("app containers started with env %q, want one, with V=new", envs)
		}
		if n := rt.PullCount("slow:1"); n != 1 {
			t.Errorf("%d pulls, want 1", n)
		}
		h.stop()
		rt.Close()
	})
}

// A deletion that comes while a stop runs (the old instance of a changed
// container, which ignores SIGTERM, 10 s grace) does not cut the stop
// short, and the new instance is not started.
func TestDeletionLetsStopUnderWayFinish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		rt.ScriptContainer("app", fake.Behavior{RunForever: true, IgnoreSIGTERM: true})
		h := newHarness(t, rt)
		h.start()
		pod := testPod("web", "uid-web", v1.RestartPolicyAlways, "app")
		grace := int64(10)
		pod.Spec.TerminationGracePeriodSeconds = &grace
		pod.Spec.Containers[0].Env = []v1.EnvVar{{Name: "V", Value: "old"}}
		h.apply(pod)
		waitFor(t, 5*time.Second, "app running", func() bool { return len(rt.Running("uid-web", "app")) == 1 })
		old := rt.Running("uid-web", "app")[0]
		edited := pod.DeepCopy()
		edited.Spec.Containers[0].Env[0].Value = "new"
		h.apply(edited)
		waitFor(t, 5*time.Second, "the old instance stopping", func() bool { return rt.CallCount(fake.MethodStop) > 0 })
		var stopAt time.Time
		for _, c := range rt.Calls() {
			if c.Method == fake.MethodStop && stopAt.IsZero() {
				stopAt = c.Time
			}
		}
		time.Sleep(3 * time.Second)
		deleted := time.Now()
		h.apply()
		noneLeft(t, rt, "uid-web", time.Duration(grace)*time.Second+2*abortRelist)
		startsAfter(t, rt, deleted, "actorlet_app_web_", nil)
		for _, e := range rt.Calls() {
			if e.Method == fake.MethodStop && e.Arg == old.ID && e.Err != nil {
				t.Errorf("the old instance's stop was cut short: %v", e.Err)
			}
		}
		if d := time.Since(stopAt); d < time.Duration(grace)*time.Second {
			t.Errorf("pod gone %v after the stop began, want the whole %ds grace", d, grace)
		}
		h.stop()
		rt.Close()
	})
}
