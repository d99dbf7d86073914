package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// standbys returns the pending standbys (created, never started) among cs
// whose container-name label is name.
func (cs containers) standbys(name string) containers {
	var out containers
	for _, c := range cs {
		if c.Labels[runtimeadapter.LabelContainerName] == name && podsync.IsStandby(&c) {
			out = append(out, c)
		}
	}
	return out
}

// waitStandby waits until pod podName's container name has one running
// instance and one pending standby, and returns both.
func (e *env) waitStandby(a *agent, podName, name string) (running, standby runtimeadapter.Container) {
	e.t.Helper()
	eventually(e.t, podUpTimeout, fmt.Sprintf("pod %s: %s running with one standby", podName, name), func() (bool, string) {
		cs := e.list().ofPod(podName)
		r, s := cs.running(name), cs.standbys(name)
		if len(r) == 1 && len(s) == 1 {
			// Docker lists a container while its create is still under
			// way, when an inspect does not find it yet.
			if _, found := e.inspect(s[0].ID); !found {
				return false, "standby " + short(s[0].ID) + " listed, not yet inspectable: " + cs.String()
			}
			running, standby = r[0], s[0]
			return true, ""
		}
		a.requireRunning()
		return false, cs.String()
	})
	return running, standby
}

// sampler lists the node's containers as fast as Docker answers and
// records every listing that breaks the standby invariants: at most one
// running instance of the container (a container whose main process is
// alive), at most one pending standby.
type sampler struct {
	e       *env
	podName string
	name    string
	mu      sync.Mutex
	samples int
	bad     []string
	stop    context.CancelFunc
	done    chan struct{}
}

func (e *env) sample(podName, name string) *sampler {
	ctx, cancel := context.WithCancel(e.t.Context())
	s := &sampler{e: e, podName: podName, name: name, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for ctx.Err() == nil {
			lctx, lcancel := context.WithTimeout(ctx, dockerTimeout)
			res, err := e.rt.List(lctx, runtimeadapter.ListOptions{Node: e.node, All: true})
			lcancel()
			if err != nil {
				continue // the test's own listings report a broken Docker
			}
			pod := containers(res.Containers).ofPod(podName)
			r, sb := s.alive(ctx, pod.running(name)), pod.standbys(name)
			s.mu.Lock()
			s.samples++
			if len(r) > 1 || len(sb) > 1 {
				s.bad = append(s.bad, fmt.Sprintf("%d running (processes alive: %s), %d standbys: %s", len(r), strings.Join(r, " "), len(sb), pod))
			}
			s.mu.Unlock()
		}
	}()
	return s
}

// alive returns the IDs of the containers of cs whose main process is
// alive. Docker lists a container "running" until dockerd has handled its
// exit, tens of milliseconds after containerd reported it (the exit
// actorlet acts on, see --containerd-address): a standby started in that
// window is not a second instance running, and the process is what tells.
func (s *sampler) alive(ctx context.Context, cs containers) []string {
	var out []string
	for _, c := range cs {
		ictx, cancel := context.WithTimeout(ctx, dockerTimeout)
		in, err := s.e.cli.ContainerInspect(ictx, c.ID)
		cancel()
		if err != nil || in.State == nil || in.State.Pid == 0 {
			continue // gone, or exited: Docker has handled its exit
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", in.State.Pid))
		if err != nil {
			continue // the process is gone
		}
		// The state follows the command name in parentheses: Z is a
		// zombie, dead and not yet reaped.
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue
		}
		out = append(out, short(c.ID))
	}
	return out
}

// finish stops the sampler and fails the test on a broken invariant.
func (s *sampler) finish() {
	s.e.t.Helper()
	s.stop()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	s.e.t.Logf("%d listings sampled", s.samples)
	if s.samples < 3 {
		s.e.t.Errorf("only %d listings sampled: the invariant was hardly checked", s.samples)
	}
	for i, b := range s.bad {
		if i == 5 {
			s.e.t.Errorf("… and %d more", len(s.bad)-5)
			break
		}
		s.e.t.Errorf("invariant broken: %s", b)
	}
}

// With --standby-containers a container killed again and again is each
// time replaced by its standby, started (one start call: the running
// instance is the standby that was waiting, same ID): at every listing at
// most one instance runs and at most one standby waits, each restart is
// followed by exactly one running instance again and a new standby,
// `docker ps` never shows a standby running, and restartCount goes on
// as without standbys.
func TestStandbyReplacesAKilledContainer(t *testing.T) {
	e := newEnv(t, "e2e-standby")
	e.agentArgs = []string{"--standby-containers", "--backoff-initial", "0", "--backoff-max", "0"}
	e.writeManifest("svc.yaml", podManifest("svc", 1, "app"))
	a := e.startAgent("agent")
	e.waitPodRunning(a, "svc", "app")
	running, standby := e.waitStandby(a, "svc", "app")

	s := e.sample("svc", "app")
	const kills = 5
	for i := range kills {
		if got := standby.Labels[runtimeadapter.LabelRestartCount]; got != fmt.Sprint(i+1) {
			t.Fatalf("kill %d: standby %s has restart count %s, want %d", i+1, short(standby.ID), got, i+1)
		}
		if in, found := e.inspect(standby.ID); !found || in.State.Status != "created" || in.State.Error != "" {
			t.Fatalf("kill %d: standby %s (found: %v) is %+v in docker inspect, want created without an error; listed now: %s",
				i+1, short(standby.ID), found, in.ContainerJSONBase, e.list())
		}
		dockerCLI(t, "kill", running.ID)
		next, nextStandby := e.waitStandby(a, "svc", "app")
		if next.ID != standby.ID {
			t.Fatalf("kill %d: the running instance is %s (%s), not the standby %s: the restart created a container",
				i+1, next.Name, short(next.ID), short(standby.ID))
		}
		running, standby = next, nextStandby
		// Between kills exactly one instance runs.
		if r := e.list().ofPod("svc").running("app"); len(r) != 1 {
			t.Fatalf("after kill %d: %d running instances: %s", i+1, len(r), e.list())
		}
	}
	s.finish()
	if ps := dockerCLI(t, "ps", "--filter", "label="+runtimeadapter.LabelNode+"="+e.node,
		"--filter", "label="+podsync.LabelStandby+"=true", "--filter", "status=created", "--format", "{{.ID}}"); ps == "" {
		t.Errorf("docker ps shows no created standby of node %s", e.node)
	}
	if got := running.Labels[runtimeadapter.LabelRestartCount]; got != fmt.Sprint(kills) {
		t.Errorf("after %d kills the running instance has restart count %s", kills, got)
	}
	n := 0
	for _, l := range a.findLogs("container started") {
		if l.str("container") == "app" {
			n++
		}
	}
	if n != kills+1 {
		t.Errorf("%d starts of app logged, want %d (the first and one per kill)", n, kills+1)
	}
}

// An agent killed (SIGKILL) after it created a standby and before it
// started it adopts the standby: the next agent starts that very
// container for the restart, and no second instance of that attempt is
// ever made.
func TestStandbyAdoptedAfterSIGKILL(t *testing.T) {
	e := newEnv(t, "e2e-standby-kill")
	e.agentArgs = []string{"--standby-containers"}
	e.writeManifest("svc.yaml", podManifest("svc", 1, "app"))
	a1 := e.startAgent("agent#1")
	e.waitPodRunning(a1, "svc", "app")
	running, standby := e.waitStandby(a1, "svc", "app")
	a1.kill()
	// The container dies while no agent runs: its restart is the
	// standby's start, due at once (a first exit).
	dockerCLI(t, "kill", running.ID)
	eventually(t, podUpTimeout, "the app container exited", func() (bool, string) {
		in, _ := e.inspect(running.ID)
		return in.State != nil && !in.State.Running, fmt.Sprint(in.State)
	})
	s := e.sample("svc", "app")
	a2 := e.startAgent("agent#2")
	next, _ := e.waitStandby(a2, "svc", "app")
	s.finish()
	if next.ID != standby.ID {
		t.Fatalf("the running instance is %s (%s), not the standby %s made by the killed agent", next.Name, short(next.ID), short(standby.ID))
	}
	attempt := standby.Labels[runtimeadapter.LabelRestartCount]
	var same []string
	for _, c := range e.list().ofPod("svc") {
		if c.Labels[runtimeadapter.LabelContainerName] == "app" && c.Labels[runtimeadapter.LabelRestartCount] == attempt {
			same = append(same, short(c.ID))
		}
	}
	if len(same) != 1 {
		t.Errorf("attempt %s of app has %d instances (%s), want the adopted standby alone", attempt, len(same), strings.Join(same, " "))
	}
	if ls := a2.findLogs("replacing standby"); len(ls) > 0 {
		t.Errorf("the restarted agent replaced a standby: %v", ls)
	}
}
