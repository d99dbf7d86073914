// Package pipeline benchmarks actorlet's actor tree on the in-memory fake
// runtime: transitions per second through the router to the pod actors,
// and the memory of an idle pod actor.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/internal/manifest"
	"github.com/actorlet/actorlet/internal/metrics"
	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/node"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
	"github.com/actorlet/actorlet/supervision"
)

// Image is the (fake) image of every benchmark pod.
const Image = "bench.local/app:1"

// indexed is the fake runtime with one change: a List narrowed to one pod
// is answered from an index of the pod's container IDs (one Inspect per
// container) instead of the fake's scan of every container. At 10,000
// pods the scan makes the pod actors' start-up lists O(pods²) (minutes);
// the index only shortens the set-up. The relist's full List, and every
// other method, is the fake's own.
type indexed struct {
	*fake.Runtime
	mu    sync.Mutex
	byPod map[string][]string
}

func newIndexed() *indexed {
	return &indexed{Runtime: fake.New(fake.AutoImages(true)), byPod: map[string][]string{}}
}

// Unwrap lets actorlet find the fake's optional interfaces.
func (x *indexed) Unwrap() runtimeadapter.Runtime { return x.Runtime }

func (x *indexed) Create(ctx context.Context, spec runtimeadapter.ContainerSpec) (string, error) {
	id, err := x.Runtime.Create(ctx, spec)
	if err == nil {
		uid := spec.Labels[runtimeadapter.LabelPodUID]
		x.mu.Lock()
		x.byPod[uid] = append(x.byPod[uid], id)
		x.mu.Unlock()
	}
	return id, err
}

func (x *indexed) List(ctx context.Context, opts runtimeadapter.ListOptions) (runtimeadapter.ListResult, error) {
	if opts.PodUID == "" {
		return x.Runtime.List(ctx, opts)
	}
	res := runtimeadapter.ListResult{ObservedAt: time.Now()}
	x.mu.Lock()
	ids := slices.Clone(x.byPod[opts.PodUID])
	x.mu.Unlock()
	for _, id := range ids {
		c, err := x.Runtime.Inspect(ctx, id)
		if errors.Is(err, runtimeadapter.ErrNotFound) {
			continue
		}
		if err != nil {
			return runtimeadapter.ListResult{}, err
		}
		if runtimeadapter.IsManaged(c.Labels, opts.Node) && (opts.All || c.State == runtimeadapter.StateRunning) {
			res.Containers = append(res.Containers, c)
		}
	}
	return res, nil
}

// Env is a node on the fake runtime running a number of idle pods.
type Env struct {
	Name   string
	Sys    *actor.ActorSystem
	RT     *fake.Runtime
	idx    *indexed // kept so that its index is not counted as the tree's memory
	Node   *actor.PID
	Router *actor.PID
	// Reg holds actorlet's metrics (nil when started without them).
	Reg *prometheus.Registry
	// metrics is actorlet's metrics on Reg (nil when started without them).
	metrics *metrics.Metrics
	Pods    []*v1.Pod // as given to SetHostPods (the node keeps its own copies)
	UIDs    []types.UID

	rootDir string
	watcher *actor.PID
	running atomic.Int64
	quiet   atomic.Bool
}

// Quiet suppresses (on) or lets fire (off) the actors' timers of 50 s or
// more when they fire. The only such timers of idle pods are their
// once-a-minute GC resyncs (the benchmark's CrashLoopBackOff is an hour):
// at 10,000 pods they add about 170 syncs a second, which would blur the
// message counts Feed and Kill rely on. Timers are still created (their
// memory counts); only their callbacks are skipped.
func (e *Env) Quiet(on bool) { e.quiet.Store(on) }

// quietClock is the real clock whose long timers can be silenced.
type quietClock struct {
	clock.RealClock
	quiet *atomic.Bool
}

func (c quietClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	if d < 50*time.Second {
		return c.RealClock.AfterFunc(d, f)
	}
	return c.RealClock.AfterFunc(d, func() {
		if !c.quiet.Load() {
			f()
		}
	})
}

// QuietSystem is an actor system that logs nothing.
func QuietSystem() *actor.ActorSystem {
	return actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}))
}

// spawnCapture wraps the node actor's context to learn the PID of its
// first child, the router (the node spawns the router, then the relist,
// when it starts). The router is not otherwise reachable from outside the
// tree; the benchmark sends it PodTransitions as the relist does.
type spawnCapture struct {
	actor.Context
	once   *sync.Once
	router chan<- *actor.PID
}

func (c spawnCapture) Spawn(p *actor.Props) *actor.PID {
	pid := c.Context.Spawn(p)
	c.once.Do(func() { c.router <- pid })
	return pid
}

// Pod returns benchmark pod i: one container, no probes.
func Pod(i int) *v1.Pod {
	p := &v1.Pod{}
	p.Name = fmt.Sprintf("bench-%05d", i)
	p.Namespace = "default"
	p.Spec.Containers = []v1.Container{{Name: "app", Image: Image}}
	return p
}

// Start spawns a node named name on the fake runtime (actors.NodeProps,
// configured as node.Spawn does, plus actorlet's metrics when withMetrics,
// as the actorlet binary runs), gives it pods host-fed pods and waits until
// every one is Running, at most timeout. Long timers start quiet (see
// Quiet).
func Start(name string, pods int, withMetrics bool, timeout time.Duration) (*Env, error) {
	e := &Env{Name: name, Sys: QuietSystem()}
	e.quiet.Store(true)
	rt := newIndexed()
	e.RT, e.idx = rt.Runtime, rt
	dir, err := os.MkdirTemp("", "actorlet-bench-")
	if err != nil {
		return nil, err
	}
	e.rootDir = dir
	hist, _ := supervision.NewHistory("") // in memory: cannot fail
	cfg := actors.Config{
		NodeName: name, Runtime: rt, HostSource: true, PodInfraImage: node.DefaultPodInfraImage,
		Spec: podsync.SpecOptions{RootDir: dir},
		// No restart during the benchmark: the end-to-end run kills
		// containers and counts exactly one pod message per death. A first
		// exit restarts at once (the kubelet's curve), so each container's
		// back-off is armed below, as if it had been restarted once.
		Backoff: supervision.BackoffPolicy{Initial: time.Hour, Max: time.Hour},
		History: hist,
		Clock:   quietClock{quiet: &e.quiet},
	}
	if withMetrics {
		e.Reg = prometheus.NewRegistry()
		e.metrics = metrics.New(e.Reg)
		cfg.Metrics = e.metrics
	}
	props := actors.NodeProps(cfg)
	routerc := make(chan *actor.PID, 1)
	once := &sync.Once{}
	props.Configure(actor.WithContextDecorator(func(next actor.ContextDecoratorFunc) actor.ContextDecoratorFunc {
		return func(ctx actor.Context) actor.Context {
			return next(spawnCapture{Context: ctx, once: once, router: routerc})
		}
	}))
	e.Node, err = e.Sys.Root.SpawnNamed(props, "node-"+name)
	if err != nil {
		return nil, err
	}
	select {
	case e.Router = <-routerc:
	case <-time.After(10 * time.Second):
		e.Close()
		return nil, errors.New("router not spawned within 10 s")
	}

	// Count pods that report Running.
	seen := map[types.UID]bool{}
	e.watcher = e.Sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*messages.PodStatusChanged); ok && m.Pod.Status.Phase == v1.PodRunning && !seen[m.Pod.UID] {
			seen[m.Pod.UID] = true
			e.running.Add(1)
		}
	}))
	e.Sys.Root.Send(e.Node, &messages.Subscribe{PID: e.watcher})

	for i := range pods {
		e.Pods = append(e.Pods, Pod(i))
	}
	// Arm each container's back-off before its pod actor exists: a pod
	// actor reads its records from the history when it starts. The UID is
	// the one the node gives a host pod (see actors' prepareHostPod).
	armed := time.Now()
	armedUIDs := make([]types.UID, len(e.Pods))
	for i, p := range e.Pods {
		d := p.DeepCopy()
		manifest.SetDefaults(d)
		armedUIDs[i] = manifest.StaticPodUID(name, "host:"+d.Namespace+"/"+d.Name, d)
		c := &p.Spec.Containers[0]
		hist.Put(string(armedUIDs[i]), supervision.Records{{Name: c.Name, Record: supervision.ContainerRecord{
			Backoff: supervision.BackoffEntry{Hash: podsync.ContainerHash(c), Delay: time.Hour, LastUpdate: armed}}}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	results, err := node.SetHostPods(ctx, e.Sys.Root, e.Node, e.Pods)
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("SetHostPods: %w", err)
	}
	for _, r := range results {
		if r.Err != nil {
			e.Close()
			return nil, r.Err
		}
		e.UIDs = append(e.UIDs, r.UID)
	}
	for i, r := range results {
		if r.UID != armedUIDs[i] {
			e.Close()
			return nil, fmt.Errorf("pod %s: UID %s, armed %s", e.Pods[i].Name, r.UID, armedUIDs[i])
		}
	}
	deadline := time.Now().Add(timeout)
	for e.running.Load() < int64(pods) {
		if time.Now().After(deadline) {
			n := e.running.Load()
			e.Close()
			return nil, fmt.Errorf("%d of %d pods running after %s", n, pods, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.Sys.Root.Send(e.Node, &messages.Unsubscribe{PID: e.watcher})
	e.Sys.Root.Stop(e.watcher)
	e.watcher = nil
	return e, nil
}

// Close stops the node (pods are in memory only: nothing outlives it).
func (e *Env) Close() {
	if e.Node != nil {
		_ = node.Stop(e.Sys.Root, e.Node, 30*time.Second)
		e.Node = nil
	}
	if e.watcher != nil {
		e.Sys.Root.Stop(e.watcher)
	}
	e.RT.Close()
	e.Sys.Shutdown()
	if e.rootDir != "" {
		_ = os.RemoveAll(e.rootDir)
	}
}
