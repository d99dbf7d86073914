package actors

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/internal/metrics"
	"github.com/actorlet/actorlet/internal/protocol"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// exitingRuntime is the fake with an early exit path (as Docker with its
// containerd): exits sent on feed reach the open Exits stream.
type exitingRuntime struct {
	*fake.Runtime
	path string
	feed chan runtimeadapter.Exit
	// hook: call the caller's runtimeadapter.ExitHook, as Docker's
	// follower does, before sending an exit on.
	hook bool
}

func (e *exitingRuntime) Unwrap() runtimeadapter.Runtime { return e.Runtime }
func (e *exitingRuntime) ExitPath() string               { return e.path }
func (e *exitingRuntime) Exits(ctx context.Context, node string) (<-chan runtimeadapter.Exit, <-chan error) {
	out, errs := make(chan runtimeadapter.Exit), make(chan error, 1)
	hook := runtimeadapter.ExitHookOf(ctx)
	go func() {
		defer close(errs)
		defer close(out)
		for {
			select {
			case x := <-e.feed:
				if e.hook && hook != nil {
					x.Handled = hook(x)
				}
				select {
				case out <- x:
				case <-ctx.Done():
					errs <- ctx.Err()
					return
				}
			case <-ctx.Done():
				errs <- ctx.Err()
				return
			}
		}
	}()
	return out, errs
}

// A death the runtime's containerd reports reaches the pod actor with no
// die event and no relist: the runtime's event stream is silent and the
// PLEG's lists hang, yet the pod shows the exit (its code and containerd's
// time) at once, and restarts the container once.
func TestContainerdExitReachesPod(t *testing.T) {
	for _, hook := range []bool{true, false} {
		t.Run(fmt.Sprintf("hook=%v", hook), func(t *testing.T) { containerdExitReachesPod(t, hook) })
	}
}

// containerdExitReachesPod: with hook, the runtime hands the exit to the
// PLEG's ExitHook on its own goroutine (as Docker's follower), without,
// only on the channel.
func containerdExitReachesPod(t *testing.T, withHook bool) {
	synctest.Test(t, func(t *testing.T) {
		// The follower delivers the death to the pod actor itself; the
		// relist actor then does not send it again through the router.
		var exited atomic.Int32
		hook := func(uid types.UID, msg any) {
			if _, ok := msg.(*protocol.ContainerExited); ok && uid == "uid-x" {
				exited.Add(1)
			}
		}
		podReceiveHook.Store(&hook)
		defer podReceiveHook.Store(nil)
		rt := fake.New(fake.AutoImages(true))
		xr := &exitingRuntime{Runtime: rt, path: "containerd task events at /test.sock, namespace moby", feed: make(chan runtimeadapter.Exit), hook: withHook}
		h := newHarness(t, rt)
		h.cfg.Runtime = xr
		reg := prometheus.NewRegistry()
		h.cfg.Metrics = metrics.New(reg)
		h.start()
		h.apply(testPod("web", "uid-x", v1.RestartPolicyAlways, "app"))
		waitFor(t, 10*time.Second, "app running", func() bool { return len(rt.Running("uid-x", "app")) == 1 })
		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		if c, ok := healthCheck(t, h, "container exits"); !ok || !c.OK || !strings.HasPrefix(c.Message, "containerd since ") {
			t.Fatalf("container exits check = %+v, %v", c, ok)
		}

		rt.SilenceEvents(-1)
		rt.Hang(fake.MethodList, "pod= ") // the PLEG's lists of the node
		app := rt.Running("uid-x", "app")[0]
		if err := rt.Kill(app.ID, 3); err != nil {
			t.Fatal(err)
		}
		exitedAt := time.Now() // the fake's FinishedAt, as Docker's is containerd's exited_at
		xr.feed <- runtimeadapter.Exit{ContainerID: app.ID, PodUID: "uid-x", ExitCode: 3, ExitedAt: exitedAt}
		synctest.Wait() // no virtual time passes
		if n := exited.Load(); n != 1 {
			t.Fatalf("the pod actor received the early exit %d times, want once", n)
		}
		cs := podStatus(t, h, "web").ContainerStatuses[0]
		term := cs.LastTerminationState.Terminated
		if cs.State.Terminated != nil {
			term = cs.State.Terminated
		}
		if term == nil || term.ExitCode != 3 || !term.FinishedAt.Time.Equal(exitedAt) {
			t.Fatalf("pod does not show containerd's exit at once: state %+v, last %+v", cs.State, cs.LastTerminationState)
		}
		if err := testutil.GatherAndCompare(reg, strings.NewReader(`# HELP actorlet_pleg_task_exits_total Number of this node's container deaths reported by the runtime's containerd (task exits of the containers' own processes; exec exits are not counted).
# TYPE actorlet_pleg_task_exits_total counter
actorlet_pleg_task_exits_total 1
`), "actorlet_pleg_task_exits_total"); err != nil {
			t.Fatal(err)
		}
		rt.ClearFaults()
		time.Sleep(60 * time.Second)
		synctest.Wait()
		if n := len(h.creates("actorlet_app_")); n != 2 {
			t.Fatalf("%d app creates after one death, want 2 (exactly one restart)", n)
		}
		h.stop()
		rt.Close()
	})
}

// Without an early exit path the check names the runtime's die events
// (or the relist, without an event stream), and the metric says so.
func TestExitPathWithoutContainerd(t *testing.T) {
	for _, tc := range []struct {
		name   string
		path   string // ExitPath of the runtime; "" none
		events time.Duration
		want   string
	}{
		{"events", "", 0, "runtime-events"},
		{"relist only", "", -1, "relist"},
		{"containerd with events off", "x", -1, "relist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rt := fake.New(fake.AutoImages(true))
				h := newHarness(t, rt)
				h.cfg.Runtime = &exitingRuntime{Runtime: rt, path: tc.path, feed: make(chan runtimeadapter.Exit)}
				h.cfg.EventRelistPeriod = tc.events
				reg := prometheus.NewRegistry()
				h.cfg.Metrics = metrics.New(reg)
				h.start()
				time.Sleep(5 * time.Second)
				synctest.Wait()
				c, ok := healthCheck(t, h, "container exits")
				if !ok || !c.OK || !strings.HasPrefix(c.Message, tc.want+" since ") {
					t.Fatalf("container exits check = %+v, %v; want path %s", c, ok, tc.want)
				}
				var b strings.Builder
				b.WriteString("# HELP actorlet_pleg_exit_path 1 for the fastest path a container's death reaches its pod by now (containerd: its containerd's task exit; runtime-events: the runtime's die event; relist), 0 for the others.\n# TYPE actorlet_pleg_exit_path gauge\n")
				for _, p := range []string{"containerd", "relist", "runtime-events"} {
					v := "0"
					if p == tc.want {
						v = "1"
					}
					b.WriteString(`actorlet_pleg_exit_path{path="` + p + `"} ` + v + "\n")
				}
				if err := testutil.GatherAndCompare(reg, strings.NewReader(b.String()), "actorlet_pleg_exit_path"); err != nil {
					t.Fatal(err)
				}
				h.stop()
				rt.Close()
			})
		})
	}
}

// A death containerd reported is no evidence against Docker's event
// stream: under load Docker's die event comes seconds after the relist
// that containerd's exit triggered has found the death, and the stream
// stays healthy (here the die event never comes at all).
func TestContainerdExitIsNoSilence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		xr := &exitingRuntime{Runtime: rt, path: "containerd task events at /test.sock, namespace moby", feed: make(chan runtimeadapter.Exit)}
		h := newHarness(t, rt)
		h.cfg.Runtime = xr
		h.start()
		h.apply(testPod("two", "uid-s", v1.RestartPolicyNever, "app", "other"))
		waitFor(t, 10*time.Second, "apps running", func() bool {
			return len(rt.Running("uid-s", "app")) == 1 && len(rt.Running("uid-s", "other")) == 1
		})
		time.Sleep(10 * time.Second) // listings well past the stream's grace
		synctest.Wait()
		if c, ok := healthCheck(t, h, "event stream"); !ok || !c.OK {
			t.Fatalf("event stream before: %+v", c)
		}
		rt.SilenceEvents(-1) // Docker's die event: not before the checks below
		app := rt.Running("uid-s", "app")[0]
		if err := rt.Kill(app.ID, 3); err != nil {
			t.Fatal(err)
		}
		xr.feed <- runtimeadapter.Exit{ContainerID: app.ID, PodUID: "uid-s", ExitCode: 3, ExitedAt: time.Now()}
		time.Sleep(30 * time.Second)
		synctest.Wait()
		if c, ok := healthCheck(t, h, "event stream"); !ok || !c.OK {
			t.Fatalf("event stream after a death containerd reported and Docker did not yet: %+v", c)
		}
		h.stop()
		rt.Close()
	})
}
