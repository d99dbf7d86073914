// Package dockerbench runs actorlet's benchmarks on the real Docker
// engine: detection latency, restart latency against Docker's own restart
// policy, the start of 50 pods against a docker CLI script, and the idle
// CPU of the actorlet binary.
//
// Every container it creates carries either actorlet's labels for a node
// named bench-<what>-<random> or the label BenchLabel=<run id>, and is
// force-removed when its benchmark ends.
package dockerbench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/bench/pipeline"
	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/node"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/docker"
	"github.com/actorlet/actorlet/supervision"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// BenchLabel marks the containers the benchmark creates without actorlet
// (Docker's restart policy, the CLI script); its value is the run's ID.
const BenchLabel = "io.actorlet-bench.run"

// Env is a connection to Docker with the test images built.
type Env struct {
	RT *docker.Runtime
	// RTC is a second connection that also follows Docker's containerd
	// (docker.WithContainerd), nil when its socket is not found (why in
	// ContainerdErr).
	RTC           *docker.Runtime
	ContainerdErr error
	Cli           *client.Client
	RunID         string
	Log           io.Writer
	// calls, when set, records the Create, Start and Remove calls of the
	// nodes StartNode makes (recordingRuntime).
	calls *callLog
}

// Setup connects to Docker (failing if it does not answer within 10 s)
// and builds the pause and testworkload images from this repository.
func Setup(ctx context.Context, log io.Writer) (*Env, error) {
	rt, err := docker.New()
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = rt.Ping(pctx)
	cancel()
	if err != nil {
		rt.Close()
		return nil, err
	}
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		rt.Close()
		return nil, err
	}
	e := &Env{RT: rt, Cli: cli, RunID: randomID(), Log: log}
	if addr, err := docker.FindContainerd(""); err != nil {
		e.ContainerdErr = err
	} else if e.RTC, err = docker.New(docker.WithContainerd(addr)); err != nil {
		e.ContainerdErr = err
	}
	bctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := testimages.BuildPause(bctx, rt, testimages.PauseTag); err != nil {
		e.Close()
		return nil, err
	}
	if err := testimages.Build(bctx, rt, testimages.TestWorkloadTag, testimages.TestWorkloadPkg); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// Close releases the Docker clients.
func (e *Env) Close() {
	_ = e.Cli.Close()
	_ = e.RT.Close()
	if e.RTC != nil {
		_ = e.RTC.Close()
	}
}

func (e *Env) logf(format string, args ...any) {
	if e.Log != nil {
		fmt.Fprintf(e.Log, format+"\n", args...)
	}
}

func randomID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// NodeName returns a fresh node name for one benchmark.
func NodeName(what string) string { return "bench-" + what + "-" + randomID() }

// removeWhere force-removes every container matching the label filter
// (e.g. "io.actorlet.node=bench-x"), 8 at a time, and returns how many.
func (e *Env) removeWhere(label string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var removed int
	for range 3 { // containers a stopping agent created meanwhile
		list, err := e.Cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", label))})
		if err != nil {
			return removed, err
		}
		if len(list) == 0 {
			return removed, nil
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var errs []error
		sem := make(chan struct{}, 8)
		for _, c := range list {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				err := e.Cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true})
				mu.Lock()
				defer mu.Unlock()
				if err != nil && !strings.Contains(err.Error(), "No such container") && !strings.Contains(err.Error(), "already in progress") {
					errs = append(errs, err)
				} else {
					removed++
				}
			}()
		}
		wg.Wait()
		if len(errs) > 0 {
			return removed, errors.Join(errs...)
		}
	}
	return removed, nil
}

// CleanupNode removes every container of actorlet node name.
func (e *Env) CleanupNode(name string) {
	n, err := e.removeWhere(runtimeadapter.LabelNode + "=" + name)
	if err != nil {
		e.logf("cleanup of node %s: %v", name, err)
	} else if n > 0 {
		e.logf("cleanup: removed %d containers of node %s", n, name)
	}
}

// CleanupRun removes every container labelled with this run's ID.
func (e *Env) CleanupRun() {
	n, err := e.removeWhere(BenchLabel + "=" + e.RunID)
	if err != nil {
		e.logf("cleanup of run %s: %v", e.RunID, err)
	} else if n > 0 {
		e.logf("cleanup: removed %d containers of run %s", n, e.RunID)
	}
}

// ---------------------------------------------------------------------------
// Docker's event stream, recorded.

// Ev is one container event.
type Ev struct {
	Action string
	ID     string
	Time   time.Time // Docker's timestamp (nanoseconds)
	Attrs  map[string]string
}

// Watcher records container start and die events matching a label.
type Watcher struct {
	mu     sync.Mutex
	evs    []Ev
	err    error
	cancel context.CancelFunc
	done   chan struct{}
}

// Watch starts recording start and die events of containers with label
// (key=value). Stop it with Stop.
func (e *Env) Watch(label string) *Watcher {
	ctx, cancel := context.WithCancel(context.Background())
	w := &Watcher{cancel: cancel, done: make(chan struct{})}
	args := filters.NewArgs(filters.Arg("type", string(events.ContainerEventType)), filters.Arg("label", label),
		filters.Arg("event", "start"), filters.Arg("event", "die"))
	msgs, errs := e.Cli.Events(ctx, events.ListOptions{Filters: args})
	go func() {
		defer close(w.done)
		for {
			select {
			case m := <-msgs:
				w.mu.Lock()
				w.evs = append(w.evs, Ev{Action: string(m.Action), ID: m.Actor.ID, Time: time.Unix(0, m.TimeNano), Attrs: m.Actor.Attributes})
				w.mu.Unlock()
			case err := <-errs:
				w.mu.Lock()
				if ctx.Err() == nil {
					w.err = err
				}
				w.mu.Unlock()
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return w
}

// Events returns a copy of the events so far, and the stream's error.
func (w *Watcher) Events() ([]Ev, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Ev(nil), w.evs...), w.err
}

// Stop ends the stream.
func (w *Watcher) Stop() {
	w.cancel()
	<-w.done
}

// ---------------------------------------------------------------------------
// An actorlet node in this process, on Docker.

// Node is an in-process actorlet node on Docker, fed by SetHostPods,
// whose pod status changes go to OnStatus.
type Node struct {
	Name    string
	Sys     *actor.ActorSystem
	PID     *actor.PID
	env     *Env
	watcher *actor.PID
	rootDir string
}

// NodeConfig is what a benchmark may change in the node's configuration.
type NodeConfig struct {
	Backoff supervision.BackoffPolicy
	// RelistOnly: no event stream (actors.Config.EventRelistPeriod -1);
	// node.Options has no such field, so the node is spawned with
	// actors.NodeProps.
	RelistOnly bool
	// Containerd: the node's runtime follows Docker's containerd (Env.RTC).
	Containerd bool
	// Standby: standby containers (actors.Config.Standby).
	Standby bool
	// Logger, when set, receives the node's logs (default: none).
	Logger *zap.Logger
}

// StartNode spawns a node named name on Docker with the configuration
// node.Spawn would give it (1 s relist, events on unless RelistOnly), and
// calls onStatus, with the time of arrival, for every PodStatusChanged.
// onStatus runs on an actor: it must be quick.
func (e *Env) StartNode(name string, nc NodeConfig, onStatus func(time.Time, *messages.PodStatusChanged)) (*Node, error) {
	dir, err := os.MkdirTemp("", "actorlet-bench-")
	if err != nil {
		return nil, err
	}
	cfg := actors.Config{
		NodeName: name, Runtime: e.RT, PodInfraImage: testimages.PauseTag, HostSource: true,
		Backoff: nc.Backoff, Standby: nc.Standby, Spec: podsync.SpecOptions{RootDir: dir}, Logger: nc.Logger,
	}
	if nc.RelistOnly {
		cfg.EventRelistPeriod = -1
	}
	if nc.Containerd {
		if e.RTC == nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("node %s: no containerd followed: %w", name, e.ContainerdErr)
		}
		cfg.Runtime = e.RTC
	}
	if e.calls != nil {
		rt := e.RT
		if nc.Containerd {
			rt = e.RTC
		}
		cfg.Runtime = recordingRuntime{Runtime: rt, node: name, log: e.calls}
	}
	n := &Node{Name: name, Sys: pipeline.QuietSystem(), env: e, rootDir: dir}
	n.PID, err = n.Sys.Root.SpawnNamed(actors.NodeProps(cfg), "node-"+name)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if onStatus != nil {
		n.watcher = n.Sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
			if m, ok := c.Message().(*messages.PodStatusChanged); ok {
				onStatus(time.Now(), m)
			}
		}))
		n.Sys.Root.Send(n.PID, &messages.Subscribe{PID: n.watcher})
	}
	return n, nil
}

// SetPods replaces the node's host-fed pods.
func (n *Node) SetPods(pods []*v1.Pod) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	results, err := node.SetHostPods(ctx, n.Sys.Root, n.PID, pods)
	if err != nil {
		return err
	}
	for _, r := range results {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}

// Close stops the node and removes every container it made.
func (n *Node) Close() {
	if err := actors.StopNode(n.Sys.Root, n.PID, 30*time.Second); err != nil {
		n.env.logf("stop node %s: %v", n.Name, err)
	}
	if n.watcher != nil {
		n.Sys.Root.Stop(n.watcher)
	}
	n.Sys.Shutdown()
	n.env.CleanupNode(n.Name)
	_ = os.RemoveAll(n.rootDir)
}

// WorkloadPod returns a pod named name with one testworkload container
// "app" configured by TW_* environment variables (see
// images/testworkload), restartPolicy Always and a 1 s grace period.
func WorkloadPod(name string, env map[string]string) *v1.Pod {
	p := &v1.Pod{}
	p.Name, p.Namespace = name, "default"
	grace := int64(1)
	p.Spec.TerminationGracePeriodSeconds = &grace
	c := v1.Container{Name: "app", Image: testimages.TestWorkloadTag}
	for k, v := range env {
		c.Env = append(c.Env, v1.EnvVar{Name: k, Value: v})
	}
	p.Spec.Containers = []v1.Container{c}
	return p
}

// exitedID returns the IDs of containers a pod status shows as no longer
// running, with their Docker FinishedAt: the current instance when it is
// not running, and the last terminated one.
func exitedIDs(p *v1.Pod, fn func(id string, finished time.Time)) {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil && cs.State.Terminated != nil {
			fn(strings.TrimPrefix(cs.State.Terminated.ContainerID, podsync.ContainerIDScheme), cs.State.Terminated.FinishedAt.Time)
		}
		if t := cs.LastTerminationState.Terminated; t != nil {
			fn(strings.TrimPrefix(t.ContainerID, podsync.ContainerIDScheme), t.FinishedAt.Time)
		}
	}
}
