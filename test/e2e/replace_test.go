package e2e

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// dockerEvents records Docker's container events of one node (its own
// timestamps), from when it is made until the test ends.
type dockerEvents struct {
	mu   sync.Mutex
	seen []events.Message
	err  error
}

func (e *env) watchEvents() *dockerEvents {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	e.t.Cleanup(cancel)
	msgs, errs := e.cli.Events(ctx, events.ListOptions{Filters: filters.NewArgs(
		filters.Arg("type", string(events.ContainerEventType)),
		filters.Arg("label", runtimeadapter.LabelNode+"="+e.node))})
	d := &dockerEvents{}
	go func() {
		for {
			select {
			case m := <-msgs:
				d.mu.Lock()
				d.seen = append(d.seen, m)
				d.mu.Unlock()
			case err := <-errs:
				d.mu.Lock()
				d.err = err
				d.mu.Unlock()
				return
			}
		}
	}()
	return d
}

// of returns the events of container id with action action, oldest first.
func (d *dockerEvents) of(id string, action events.Action) []events.Message {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []events.Message
	for _, m := range d.seen {
		if m.Actor.ID == id && m.Action == action {
			out = append(out, m)
		}
	}
	return out
}

func eventTime(m events.Message) time.Time { return time.Unix(0, m.TimeNano) }

// ownWorkload builds the test workload of this tree under a tag of this
// test only (removed at its end) and returns the tag: other trees' tests
// on the same Docker may rebuild the shared TestWorkloadTag from an older
// tree, without --term-delay, at any time.
func (e *env) ownWorkload() string {
	e.t.Helper()
	tag := "actorlet/testworkload-" + e.node + ":test"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := testimages.Build(ctx, e.rt, tag, testimages.TestWorkloadPkg); err != nil {
		e.t.Fatalf("build %s: %v", tag, err)
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), dockerTimeout)
		defer cancel()
		if err := e.rt.RemoveImage(ctx, tag); err != nil {
			e.t.Errorf("remove image %s: %v", tag, err)
		}
	})
	return tag
}

// edgeProxyManifest is issue 12's pod: grace 10 s, an app that traps
// SIGTERM and drains for 3 s (testworkload --term-delay) on a host port,
// and a sidecar; mode is an env value (the edit).
func edgeProxyManifest(image, mode string, port int) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: edge-proxy
spec:
  terminationGracePeriodSeconds: 10
  containers:
  - name: proxy
    image: %[1]s
    args: ["--term-delay", "3s", "--http", ":8080"]
    env:
    - {name: MODE, value: %[2]s}
    ports:
    - {containerPort: 8080, hostPort: %[3]d, hostIP: 127.0.0.1, protocol: TCP}
  - name: sidecar
    image: %[1]s
`, image, mode, port)
}

// Issue 12 #1 on Docker: edge-proxy runs; the agent stops; the manifest is
// edited (an env value: a new UID); the agent starts again. The old
// instance stops in the pod's order — its proxy gets SIGTERM and drains
// for 3 s, then the sandbox — and the new instance's sandbox is created
// only after every old container is gone. The times are Docker's own: its
// events (kill, die, destroy) of the old containers and the new sandbox's
// Created.
func TestEditWhileAgentDownReplacesInOrder(t *testing.T) {
	e := newEnv(t, "e2e-edge")
	port, image := lcFreePort(t), e.ownWorkload()
	e.writeManifest("edge-proxy.yaml", edgeProxyManifest(image, "v1", port))
	a1 := e.startAgent("agent#1")
	old := e.waitPodRunning(a1, "edge-proxy", "proxy", "sidecar")
	oldUID := old[0].Labels[runtimeadapter.LabelPodUID]
	a1.signal(syscall.SIGTERM)
	if !a1.waitExit(exitTimeout) {
		t.Fatalf("agent#1 did not exit within %v of SIGTERM", exitTimeout)
	}
	evs := e.watchEvents()
	e.writeManifest("edge-proxy.yaml", edgeProxyManifest(image, "v2", port))
	a2 := e.startAgent("agent#2")

	var sandbox runtimeadapter.Container
	eventually(t, podUpTimeout+15*time.Second, "the edited pod running and the old one gone", func() (bool, string) {
		cs := e.list().ofPod("edge-proxy")
		oldLeft, ok := 0, true
		for _, c := range cs {
			if c.Labels[runtimeadapter.LabelPodUID] == oldUID {
				oldLeft++
			}
		}
		var fresh containers
		for _, c := range cs {
			if c.Labels[runtimeadapter.LabelPodUID] != oldUID {
				fresh = append(fresh, c)
			}
		}
		for _, n := range []string{runtimeadapter.SandboxName, "proxy", "sidecar"} {
			ok = ok && len(fresh.running(n)) == 1
		}
		if ok && oldLeft == 0 {
			sandbox = fresh.running(runtimeadapter.SandboxName)[0]
			return true, ""
		}
		a2.requireRunning()
		return false, fmt.Sprintf("%d old containers left; %s", oldLeft, cs)
	})

	in, found := e.inspect(sandbox.ID)
	if !found {
		t.Fatal("the new sandbox is gone")
	}
	created, err := time.Parse(time.RFC3339Nano, in.Created)
	if err != nil {
		t.Fatalf("new sandbox Created %q: %v", in.Created, err)
	}
	var proxyDie, sandboxDie, lastGone time.Time
	for _, c := range old {
		name := c.Labels[runtimeadapter.LabelContainerName]
		dies, gone := evs.of(c.ID, events.ActionDie), evs.of(c.ID, events.ActionDestroy)
		if len(dies) != 1 || len(gone) != 1 {
			t.Fatalf("old %s: %d die and %d destroy events, want one each", name, len(dies), len(gone))
		}
		if g := eventTime(gone[0]); g.After(lastGone) {
			lastGone = g
		}
		switch name {
		case "proxy":
			proxyDie = eventTime(dies[0])
			if code := dies[0].Actor.Attributes["exitCode"]; code != "0" {
				t.Errorf("old proxy exited %s, want 0: it drains 3 s of its 10 s grace", code)
			}
			kills := evs.of(c.ID, events.ActionKill)
			if len(kills) == 0 || kills[0].Actor.Attributes["signal"] != "15" {
				t.Fatalf("old proxy: kill events %+v, want SIGTERM (15) first", kills)
			}
			if d := proxyDie.Sub(eventTime(kills[0])); d < 2500*time.Millisecond {
				t.Errorf("old proxy died %v after its SIGTERM, want its 3 s drain", d)
			}
		case runtimeadapter.SandboxName:
			sandboxDie = eventTime(dies[0])
		}
	}
	t.Logf("old proxy died at %s, old sandbox at %s, last old container removed at %s; new sandbox created at %s",
		proxyDie.Format("15:04:05.000"), sandboxDie.Format("15:04:05.000"), lastGone.Format("15:04:05.000"), created.Format("15:04:05.000"))
	if sandboxDie.Before(proxyDie) {
		t.Errorf("the old sandbox died %v before its app proxy: apps first, then the sandbox", proxyDie.Sub(sandboxDie))
	}
	if created.Before(lastGone) {
		t.Errorf("invariant 6: the new sandbox was created %v before the old pod's last container was removed (old proxy died %v after it)",
			lastGone.Sub(created), proxyDie.Sub(created))
	}
}
