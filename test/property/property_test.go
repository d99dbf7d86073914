package property_test

// TestNodeInvariants is the property-based proof of issue 6: random
// sequences of steps drive a node (node.Spawn with HostSource on
// fake.New(fake.AutoImages(true))) inside a testing/synctest bubble, one
// fresh protoactor ActorSystem (discard logger) and one fake runtime per
// case. The steps (see stepKinds) are: SetHostPods, ApplyPod and DeletePod
// of random pods (names from a small pool, 1–3 containers, random
// restartPolicy, image and grace period, generated or explicit UID);
// scripted container behaviour per container name (exit code N after T,
// run forever, ignore SIGTERM, fail to start); kills and `docker rm -f` of
// random containers from outside; injected errors (before or after the
// call took effect), delays and hangs of runtime calls; broken event
// streams; planted containers (no labels, another node's, incomplete
// labels, orphans of this node); virtual time advances of 0.1–30 s;
// agent restarts (node.Stop then node.Spawn on the same runtime, in the
// same or a new ActorSystem, the host feeding its pods again, some of them
// edited while the agent was down: a new spec, and a new UID unless the UID
// is explicit); and runtime outages (every list fails for 5–60 s).
//
// At every step, and every 200 ms of virtual time in between, it checks
// what must hold at every instant:
//
//   - invariant 1: at most one running container per (pod UID, container
//     name) among the node's containers (the sandbox included);
//   - invariant 3: a container without actorlet's labels for this node
//     (none, incomplete, another node's) is never started, stopped or
//     removed by actorlet (the call log) and never disappears;
//   - invariant 6: the containers of the node's pods of one namespace/name
//     belong to one pod UID at most (in any state: a replacement starts only
//     once the old instance's containers are gone); this is also checked at
//     every successful runtime Create and Start, the instant a container
//     comes into being or runs (the node's runtime is the fake wrapped by
//     the test);
//   - the node actor answers GetPodStatuses (a hung runtime call never
//     blocks it);
//
// after each agent restart, invariant 4: of the containers that ran, in
// their pod's current sandbox, with the desired spec (pods edited while the
// agent was down left out), none is stopped,
// removed or recreated by the new agent (checked over the 3 s after the
// restart: the new agent's first relists and syncs; a sandbox may stop
// when its pod's containers ended on their own meanwhile); and during an
// outage, once a relist has failed, the node creates, starts, stops and
// removes nothing and reports itself unhealthy.
//
// Then the faults stop (ClearFaults, every container name scripted to run
// forever, the host feeds its set once more) and 10 virtual minutes pass:
// every desired pod must have converged — restartPolicy Always: one
// running sandbox with the desired spec and every container running once,
// in that sandbox, with the desired spec hash, and the node reporting the
// pod Running; OnFailure: each container running so, or completed with
// exit code 0 — no managed container of a pod that is not desired may
// remain (invariant 2), and over 3 more minutes nothing may change (no
// create, start, stop or remove; the same containers in the same states).
//
// Cases: 20 by default (about 2 s, 6 s under -race); more with
//
//	go test ./test/property -run TestNodeInvariants -rapid.checks=500 -timeout 1h
//
// or RAPID_CHECKS=500; -rapid.steps does not apply (the number of steps is
// drawn, 1–maxSteps). A failure prints the shrunk case's steps and a
// -rapid.failfile to replay it (add -rapid.v for every case's steps).

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/actorlet/actorlet/internal/manifest"
	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/node"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// defaultChecks is the number of cases `go test` runs (rapid's own
// default, 100, would take about a minute under -race).
const defaultChecks = 20

func init() {
	// rapid reads RAPID_CHECKS at init and -rapid.checks when the test
	// flags are parsed, which happens after this: either still wins.
	if _, set := os.LookupEnv("RAPID_CHECKS"); !set {
		if err := flag.Set("rapid.checks", fmt.Sprint(defaultChecks)); err != nil {
			panic(err)
		}
	}
}

const (
	nodeName  = "prop"
	otherNode = "prop-other"
	maxSteps  = 40
	// checkEvery is the virtual-time granularity of the instant checks
	// while time advances.
	checkEvery = 200 * time.Millisecond
	// convergeFor and stableFor: the quiet time after the faults stop,
	// and the window in which nothing may change afterwards.
	convergeFor = 10 * time.Minute
	stableFor   = 3 * time.Minute
	// restartWindow: how long after an agent restart invariant 4 is
	// checked (the relist period is 1 s).
	restartWindow = 3 * time.Second
)

var (
	podNames = []string{"alpha", "beta", "gamma", "delta"}
	// hostNetworkPod is the pod on the host's network, whose first
	// container starts beside its sandbox (podsync.Plan.StartBeside): a
	// name rather than a draw, so that the kept failfiles still replay.
	hostNetworkPod = "delta"
	containerNames = []string{"web", "db", "cache", "job"}
	policies       = []v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever}
	faultMethods   = []string{fake.MethodList, fake.MethodCreate, fake.MethodStart, fake.MethodStop, fake.MethodRemove,
		fake.MethodInspect, fake.MethodPullImage, fake.MethodImagePresent}
	// stepKinds, repeated by weight.
	stepKinds = weighted(map[string]int{
		"setPods": 4, "applyPod": 2, "deletePod": 1,
		"advance": 8, "kill": 3, "removeExternally": 1,
		"injectError": 3, "delay": 2, "hang": 1, "clearFaults": 1, "breakEvents": 1,
		"plant": 2, "restart": 3, "outage": 1,
	})
)

func weighted(w map[string]int) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(w)) {
		for range w[k] {
			out = append(out, k)
		}
	}
	return out
}

func TestNodeInvariants(t *testing.T) {
	rootDir := t.TempDir()
	stop := watchBusyLoops()
	defer stop()
	rapid.Check(t, func(t *rapid.T) {
		rapid.SyncTest(t, func(t *rapid.T) { runCase(t, rootDir) })
	})
}

// current is the case under way, for the busy-loop watchdog.
var current atomic.Pointer[world]

// watchBusyLoops watches, in real time and outside the bubble, for a busy
// loop: actorlet calling the runtime over and over within one virtual
// instant, so that the bubble's clock never moves and the case would hang.
// It then records what the calls were and makes every runtime call fail
// (the only fault the fake lets a goroutine outside the bubble inject),
// which ends the loop; the case fails with the record at its next check.
func watchBusyLoops() (stop func()) {
	done := make(chan struct{})
	go func() {
		var seen *world
		var count int
		for {
			select {
			case <-done:
				return
			case <-time.After(2 * time.Second):
			}
			w := current.Load()
			if w == nil || w.busy.Load() != nil {
				continue
			}
			calls := w.rt.Calls()
			if w != seen || len(calls) < count+busyCalls {
				seen, count = w, len(calls)
				continue
			}
			recent := calls[len(calls)-busyCalls:]
			if !recent[0].Time.Equal(recent[len(recent)-1].Time) {
				count = len(calls)
				continue
			}
			var b strings.Builder
			fmt.Fprintf(&b, "busy loop: %d runtime calls at virtual %s without time moving; the last ones:",
				busyCalls, recent[0].Time.Format("15:04:05.000"))
			for _, c := range recent[len(recent)-12:] {
				fmt.Fprintf(&b, "\n  %s %s err=%v", c.Method, c.Arg, c.Err)
			}
			for _, c := range w.rt.Containers() {
				fmt.Fprintf(&b, "\n  container %s %s %s/%s", c.ID[:12], c.Name, c.State, c.RawState)
			}
			msg := b.String()
			w.busy.Store(&msg)
			for _, m := range faultMethods {
				w.rt.InjectError(m, runtimeadapter.ErrUnavailable, -1)
			}
		}
	}()
	return func() { close(done) }
}

// busyCalls runtime calls within one virtual instant make a busy loop.
const busyCalls = 50_000

func runCase(t *rapid.T, rootDir string) {
	w := &world{
		t: t, rt: fake.New(fake.AutoImages(true)), sys: quietSystem(), rootDir: rootDir,
		pods: map[string]*v1.Pod{}, untouchable: map[string]string{},
	}
	w.standby = rapid.Bool().Draw(t, "standby") // --standby-containers on or off
	t.Cleanup(w.teardown)                       // also after a failure: the bubble must drain
	current.Store(w)
	for _, name := range containerNames {
		w.rt.ScriptContainer(name, drawBehavior(t, name))
	}
	w.spawn()
	steps := rapid.IntRange(1, maxSteps).Draw(t, "steps")
	for i := range steps {
		kind := rapid.SampledFrom(stepKinds).Draw(t, fmt.Sprintf("step%d", i))
		w.step(kind)
		synctest.Wait()
		w.checkInstant()
		w.checkResponsive()
	}
	w.converge()
}

// world is one case: the runtime, the node, and what the test knows.
type world struct {
	t       *rapid.T
	rt      *fake.Runtime
	sys     *actor.ActorSystem
	pid     *actor.PID
	rootDir string
	standby bool // the node keeps standby containers (--standby-containers)

	pods       map[string]*v1.Pod // host pods as last accepted, by name
	hostSynced bool               // SetHostPods was sent at least once
	planted    int
	// untouchable: ID → name of containers actorlet must never touch.
	untouchable map[string]string
	callsSeen   int                    // Calls() already checked for invariant 3
	busy        atomic.Pointer[string] // set by watchBusyLoops
	// overlap: the first invariant 6 violation seen at a Create or Start
	// (by the runtime's callers' goroutines; reported at the next check).
	overlap atomic.Pointer[string]
}

// guarded is the runtime the node gets: the case's fake, checking
// invariant 6 at every successful Create and Start.
type guarded struct {
	*fake.Runtime
	w *world
}

func (g guarded) Create(ctx context.Context, spec runtimeadapter.ContainerSpec) (string, error) {
	id, err := g.Runtime.Create(ctx, spec)
	if err == nil {
		g.w.checkOneInstance(fake.MethodCreate, id)
	}
	return id, err
}

func (g guarded) Start(ctx context.Context, id string) error {
	err := g.Runtime.Start(ctx, id)
	if err == nil {
		g.w.checkOneInstance(fake.MethodStart, id)
	}
	return err
}

// checkOneInstance records an invariant 6 violation: container id, just
// created or started, shares its pod's namespace/name with a container of
// another pod UID.
func (w *world) checkOneInstance(method, id string) {
	cs := w.rt.Containers()
	var self *runtimeadapter.Container
	for i := range cs {
		if cs[i].ID == id {
			self = &cs[i]
		}
	}
	if self == nil {
		return // removed meanwhile
	}
	m, err := runtimeadapter.ParseMeta(self.Labels)
	if err != nil || m.Node != nodeName {
		return
	}
	for _, c := range cs {
		o, err := runtimeadapter.ParseMeta(c.Labels)
		if err != nil || o.Node != nodeName || o.PodUID == m.PodUID || o.PodNamespace != m.PodNamespace || o.PodName != m.PodName {
			continue
		}
		msg := fmt.Sprintf("invariant 6: %s of %s (pod %s/%s, UID %s) at %s while %s of UID %s exists (%s)",
			method, self.Name, m.PodNamespace, m.PodName, m.PodUID, time.Now().Format("15:04:05.000"), c.Name, o.PodUID, c.State)
		w.overlap.CompareAndSwap(nil, &msg)
		return
	}
}

func quietSystem() *actor.ActorSystem {
	return actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}))
}

func (w *world) spawn() {
	pid, err := node.Spawn(w.sys.Root, node.Options{NodeName: nodeName, Runtime: guarded{w.rt, w}, HostSource: true, RootDir: w.rootDir, StandbyContainers: w.standby})
	if err != nil {
		w.t.Fatalf("spawn node: %v", err)
	}
	w.pid = pid
}

func (w *world) teardown() {
	if w.pid != nil {
		_ = node.Stop(w.sys.Root, w.pid, 10*time.Second)
		w.pid = nil
	}
	w.rt.Close() // releases hung calls; delayed ones fail when their timer fires
	// Runtime calls under way when the node stopped finish in the
	// background; a delayed one waits out its delay (at most 3 min here),
	// and the bubble's clock stops once this goroutine returns: wait for
	// them.
	time.Sleep(4 * time.Minute)
	synctest.Wait()
}

func request[T any](w *world, msg any) T {
	w.t.Helper()
	res, err := w.sys.Root.RequestFuture(w.pid, msg, 5*time.Second).Result()
	if err != nil {
		w.t.Fatalf("%T: no answer from the node: %v", msg, err)
	}
	out, ok := res.(T)
	if !ok {
		w.t.Fatalf("%T: answer %T", msg, res)
	}
	return out
}

// ---- generators ----

func drawBehavior(t *rapid.T, name string) fake.Behavior {
	switch rapid.IntRange(0, 4).Draw(t, "behavior/"+name) {
	case 0, 1:
		return fake.Behavior{RunForever: true, IgnoreSIGTERM: rapid.Bool().Draw(t, "ignoreSIGTERM/"+name)}
	case 2:
		return fake.Behavior{
			ExitCode:  rapid.SampledFrom([]int{0, 1, 2}).Draw(t, "exitCode/"+name),
			ExitAfter: time.Duration(rapid.IntRange(0, 60_000).Draw(t, "exitAfterMs/"+name)) * time.Millisecond,
		}
	case 3:
		return fake.Behavior{ExitCode: rapid.SampledFrom([]int{0, 1}).Draw(t, "exitCode/"+name)} // at once
	default:
		return fake.Behavior{StartError: fmt.Errorf("exec: %q: executable file not found", name)}
	}
}

func drawPod(t *rapid.T, name string) *v1.Pod {
	p := &v1.Pod{}
	p.Name = name
	if rapid.Bool().Draw(t, "explicitUID/"+name) {
		p.UID = types.UID("uid-" + name) // spec changes then update in place
	}
	p.Spec.HostNetwork = name == hostNetworkPod
	p.Spec.RestartPolicy = rapid.SampledFrom(policies).Draw(t, "policy/"+name)
	grace := int64(rapid.SampledFrom([]int{0, 1, 5, 30}).Draw(t, "grace/"+name))
	p.Spec.TerminationGracePeriodSeconds = &grace
	names := rapid.SliceOfNDistinct(rapid.SampledFrom(containerNames), 1, 3, rapid.ID[string]).Draw(t, "containers/"+name)
	for _, c := range names {
		img := rapid.SampledFrom([]string{"img:1", "img:2"}).Draw(t, "image/"+name+"/"+c)
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: c, Image: img})
	}
	return p
}

// ---- steps ----

func (w *world) step(kind string) {
	t := w.t
	switch kind {
	case "setPods":
		set := map[string]*v1.Pod{}
		for _, name := range rapid.SliceOfDistinct(rapid.SampledFrom(podNames), rapid.ID[string]).Draw(t, "podSet") {
			set[name] = drawPod(t, name)
		}
		t.Logf("SetHostPods %s", describePods(set))
		w.pods = set
		w.sendSet()
	case "applyPod":
		p := drawPod(t, rapid.SampledFrom(podNames).Draw(t, "applyName"))
		t.Logf("ApplyPod %s", describePods(map[string]*v1.Pod{p.Name: p}))
		res := request[*messages.ApplyPodResult](w, &messages.ApplyPod{Pod: p})
		if res.Err != nil {
			t.Fatalf("ApplyPod %s: %v", p.Name, res.Err)
		}
		w.pods[p.Name] = p
	case "deletePod":
		name := rapid.SampledFrom(podNames).Draw(t, "deleteName")
		t.Logf("DeletePod %s", name)
		res := request[*messages.DeletePodResult](w, &messages.DeletePod{Namespace: "default", Name: name})
		if _, had := w.pods[name]; had != (res.Err == nil) {
			t.Fatalf("DeletePod %s: %v (pod known to the test: %v)", name, res.Err, had)
		}
		delete(w.pods, name)
	case "advance":
		d := time.Duration(rapid.IntRange(100, 30_000).Draw(t, "advanceMs")) * time.Millisecond
		t.Logf("advance %s", d)
		w.advance(d)
	case "kill":
		var running []runtimeadapter.Container
		for _, c := range w.rt.Containers() {
			if c.State == runtimeadapter.StateRunning {
				running = append(running, c)
			}
		}
		if len(running) == 0 {
			return
		}
		c := running[rapid.IntRange(0, len(running)-1).Draw(t, "killIndex")]
		code := rapid.SampledFrom([]int{0, 1, 137, 143}).Draw(t, "killCode")
		t.Logf("kill %s (exit %d)", c.Name, code)
		if err := w.rt.Kill(c.ID, code); err != nil {
			t.Fatalf("kill: %v", err)
		}
	case "removeExternally":
		var managed []runtimeadapter.Container
		for _, c := range w.rt.Containers() {
			if runtimeadapter.IsManaged(c.Labels, nodeName) {
				managed = append(managed, c)
			}
		}
		if len(managed) == 0 {
			return
		}
		c := managed[rapid.IntRange(0, len(managed)-1).Draw(t, "removeIndex")]
		t.Logf("docker rm -f %s", c.Name)
		if err := w.rt.RemoveExternally(c.ID); err != nil {
			t.Fatalf("remove: %v", err)
		}
	case "injectError":
		m := rapid.SampledFrom(faultMethods).Draw(t, "errorMethod")
		times := rapid.SampledFrom([]int{1, 2, 3, 5, -1}).Draw(t, "errorTimes")
		after := rapid.Bool().Draw(t, "errorAfter") && slices.Contains([]string{fake.MethodCreate, fake.MethodStart, fake.MethodStop, fake.MethodRemove}, m)
		t.Logf("inject error on %s ×%d (after effect: %v)", m, times, after)
		if after {
			w.rt.InjectErrorAfter(m, runtimeadapter.ErrUnavailable, times)
		} else {
			w.rt.InjectError(m, runtimeadapter.ErrUnavailable, times)
		}
	case "delay":
		m := rapid.SampledFrom(faultMethods).Draw(t, "delayMethod")
		d := rapid.SampledFrom([]time.Duration{100 * time.Millisecond, time.Second, 5 * time.Second, 15 * time.Second,
			30 * time.Second, 3 * time.Minute}).Draw(t, "delay")
		t.Logf("delay %s by %s", m, d)
		w.rt.SetDelay(m, d)
	case "hang":
		m := rapid.SampledFrom(faultMethods).Draw(t, "hangMethod")
		match := rapid.SampledFrom(append([]string{""}, podNames...)).Draw(t, "hangMatch")
		t.Logf("hang %s matching %q", m, match)
		w.rt.Hang(m, match)
	case "clearFaults":
		t.Logf("clear faults")
		w.rt.ClearFaults()
	case "breakEvents":
		t.Logf("break event streams")
		w.rt.BreakEvents(nil)
	case "plant":
		w.plant(rapid.IntRange(0, 3).Draw(t, "plantKind"))
	case "restart":
		w.restart(rapid.Bool().Draw(t, "newActorSystem"))
	case "outage":
		w.outage(time.Duration(rapid.IntRange(5_000, 60_000).Draw(t, "outageMs")) * time.Millisecond)
	default:
		t.Fatalf("unknown step %q", kind)
	}
}

func (w *world) sendSet() {
	names := slices.Sorted(maps.Keys(w.pods))
	pods := make([]*v1.Pod, 0, len(names))
	for _, n := range names {
		pods = append(pods, w.pods[n])
	}
	res := request[*messages.SetHostPodsResult](w, &messages.SetHostPods{Pods: pods})
	for i, r := range res.Results {
		if r.Err != nil {
			w.t.Fatalf("SetHostPods: pod %s: %v", pods[i].Name, r.Err)
		}
	}
	w.hostSynced = true
}

// refeed gives a restarted node the host's pods again, as the host gave
// them: a full set if it ever sent one, else one by one.
func (w *world) refeed() {
	if w.hostSynced {
		w.sendSet()
		return
	}
	for _, name := range slices.Sorted(maps.Keys(w.pods)) {
		if res := request[*messages.ApplyPodResult](w, &messages.ApplyPod{Pod: w.pods[name]}); res.Err != nil {
			w.t.Fatalf("ApplyPod %s: %v", name, res.Err)
		}
	}
}

// plant adds a container from outside: 0 without labels, 1 labelled for
// another node, 2 with incomplete labels (not actorlet's), 3 an orphan of
// this node (a pod that is not desired). 0–2 must never be touched; 3
// must be gone once the host has synced.
func (w *world) plant(kind int) {
	t := w.t
	w.planted++
	state := runtimeadapter.StateRunning
	if rapid.Bool().Draw(t, "plantExited") {
		state = runtimeadapter.StateExited
	}
	c := runtimeadapter.Container{Image: "other:1", State: state}
	switch kind {
	case 0:
		c.Labels = map[string]string{"app": "someone-else"}
	case 1:
		c.Labels = runtimeadapter.Meta{Node: otherNode, PodUID: "uid-alpha", PodName: "alpha", PodNamespace: "default",
			ContainerName: "web", Type: runtimeadapter.TypeApp}.Labels()
	case 2:
		c.Labels = map[string]string{runtimeadapter.LabelNode: nodeName, runtimeadapter.LabelContainerName: "web"}
	case 3:
		grace := time.Duration(rapid.SampledFrom([]int{0, 1, 5, 30}).Draw(t, "orphanGrace")) * time.Second
		c.Labels = runtimeadapter.Meta{Node: nodeName, PodUID: fmt.Sprintf("orphan-%d", w.planted), PodName: "ghost",
			PodNamespace: "default", ContainerName: "app", Type: runtimeadapter.TypeApp, GracePeriod: grace}.Labels()
	}
	c.Name = fmt.Sprintf("planted-%d", w.planted)
	id := w.rt.AddContainer(c)
	t.Logf("plant %s kind %d (%s)", c.Name, kind, state)
	if kind != 3 {
		w.untouchable[id] = c.Name
	}
}

// ---- time ----

// advance lets d of virtual time pass, checking the instant invariants
// every checkEvery.
func (w *world) advance(d time.Duration) {
	for d > 0 {
		s := min(d, checkEvery)
		time.Sleep(s)
		synctest.Wait()
		w.checkInstant()
		d -= s
	}
}

// ---- checks ----

type key struct{ uid, name string }

func keyOf(c runtimeadapter.Container) (key, bool) {
	m, err := runtimeadapter.ParseMeta(c.Labels)
	if err != nil || m.Node != nodeName {
		return key{}, false
	}
	return key{m.PodUID, m.ContainerName}, true
}

// checkInstant: invariants 1, 3 and 6, and no busy loop.
func (w *world) checkInstant() {
	t := w.t
	if msg := w.busy.Load(); msg != nil {
		t.Fatalf("%s", *msg)
	}
	if msg := w.overlap.Load(); msg != nil {
		t.Fatalf("%s", *msg)
	}
	cs := w.rt.Containers()
	uids := map[string]map[string]string{} // namespace/name → UID → a container
	for _, c := range cs {
		m, err := runtimeadapter.ParseMeta(c.Labels)
		if err != nil || m.Node != nodeName || !slices.Contains(podNames, m.PodName) { // planted orphans share a name
			continue
		}
		name := m.PodNamespace + "/" + m.PodName
		if uids[name] == nil {
			uids[name] = map[string]string{}
		}
		uids[name][m.PodUID] = c.Name + " " + string(c.State)
	}
	for name, by := range uids {
		if len(by) > 1 {
			t.Fatalf("invariant 6: pod %s has containers of %d UIDs: %v", name, len(by), by)
		}
	}
	running := map[key][]string{}
	for _, c := range cs {
		if k, ok := keyOf(c); ok && c.State == runtimeadapter.StateRunning {
			running[k] = append(running[k], c.Name)
		}
	}
	for k, names := range running {
		if len(names) > 1 {
			t.Fatalf("invariant 1: %d running containers for pod %s container %s: %v", len(names), k.uid, k.name, names)
		}
	}
	present := map[string]bool{}
	for _, c := range cs {
		present[c.ID] = true
	}
	for id, name := range w.untouchable {
		if !present[id] {
			t.Fatalf("invariant 3: container %s (not actorlet's) disappeared", name)
		}
	}
	calls := w.rt.Calls()
	for _, c := range calls[w.callsSeen:] {
		if c.Method != fake.MethodStop && c.Method != fake.MethodRemove && c.Method != fake.MethodStart {
			continue
		}
		for id, name := range w.untouchable {
			if c.Arg != "" && (c.Arg == id || c.Arg == name || strings.HasPrefix(id, c.Arg)) {
				t.Fatalf("invariant 3: actorlet called %s on %s, a container that is not its own", c.Method, name)
			}
		}
	}
	w.callsSeen = len(calls)
}

// checkResponsive: the node answers a query whatever the runtime does.
func (w *world) checkResponsive() {
	request[*messages.PodStatuses](w, &messages.GetPodStatuses{})
}

// desired returns the host pods as the node runs them (defaulted, with
// their UID), by UID.
func (w *world) desired() map[string]*v1.Pod {
	out := map[string]*v1.Pod{}
	if len(w.pods) == 0 {
		return out
	}
	st := request[*messages.PodStatuses](w, &messages.GetPodStatuses{})
	for _, p := range st.Pods {
		want := w.pods[p.Name]
		if want == nil {
			w.t.Fatalf("the node runs pod %s, which the host never gave it or deleted", p.Name)
		}
		cp := want.DeepCopy()
		manifest.SetDefaults(cp)
		cp.UID = p.UID
		out[string(p.UID)] = cp
	}
	if len(out) != len(w.pods) {
		w.t.Fatalf("the node knows %d pods, the host gave it %d", len(out), len(w.pods))
	}
	return out
}

// settled returns the containers that run as the desired spec says, in
// their pod's current sandbox: the containers an agent restart must leave
// alone (invariant 4). Pods with a duplicate or stale instance are left
// out: the agent has legitimate work on them.
func (w *world) settled() map[string]key {
	out := map[string]key{}
	desired := w.desired()
	cs := w.rt.Containers()
	for uid, pod := range desired {
		var sandbox *runtimeadapter.Container
		byName := map[string][]runtimeadapter.Container{}
		for i := range cs {
			c := cs[i]
			k, ok := keyOf(c)
			if !ok || k.uid != uid {
				continue
			}
			if k.name == runtimeadapter.SandboxName {
				sandbox = &cs[i] // creation order: the last one is the newest
				continue
			}
			if c.State != runtimeadapter.StateExited {
				byName[k.name] = append(byName[k.name], c)
			}
		}
		if sandbox == nil || sandbox.State != runtimeadapter.StateRunning ||
			sandbox.Labels[runtimeadapter.LabelContainerHash] != podsync.SandboxHash(pod) {
			continue
		}
		ok := true
		var apps []runtimeadapter.Container
		for _, c := range pod.Spec.Containers {
			live := byName[c.Name]
			switch {
			case len(live) == 0:
			case len(live) > 1 || live[0].State != runtimeadapter.StateRunning ||
				live[0].Labels[runtimeadapter.LabelContainerHash] != podsync.ContainerHash(&c) || !joined(w.rt, live[0], sandbox):
				ok = false
			default:
				apps = append(apps, live[0])
			}
		}
		if !ok || len(apps) == 0 {
			continue
		}
		out[sandbox.ID] = key{uid, runtimeadapter.SandboxName}
		for _, c := range apps {
			k, _ := keyOf(c)
			out[c.ID] = k
		}
	}
	return out
}

// joined: c runs in sandbox's network namespace (both on the host's,
// for a host-network pod).
func joined(rt *fake.Runtime, c runtimeadapter.Container, sandbox *runtimeadapter.Container) bool {
	spec, err := rt.Spec(c.ID)
	if err == nil && spec.NetworkMode == "host" {
		sb, err := rt.Spec(sandbox.ID)
		return err == nil && sb.NetworkMode == "host"
	}
	return err == nil && spec.NetworkMode == "container:"+sandbox.ID
}

// restart stops the node and spawns it again on the same runtime (in a new
// ActorSystem when fresh), the host feeding its pods again, and checks
// invariant 4 over restartWindow.
func (w *world) restart(fresh bool) {
	t := w.t
	before := w.settled()
	existed := map[string]bool{}
	podOf := map[string]string{}
	for _, c := range w.rt.Containers() {
		existed[c.ID] = true
		podOf[c.ID] = c.Labels[runtimeadapter.LabelPodName]
	}
	mark := len(w.rt.Calls())
	t.Logf("restart the agent (new ActorSystem: %v; %d settled containers)", fresh, len(before))
	if err := node.Stop(w.sys.Root, w.pid, 10*time.Second); err != nil {
		t.Fatalf("node.Stop: %v", err)
	}
	w.pid = nil
	synctest.Wait()
	// Manifests edited while the agent is down: the new agent replaces
	// those pods (their containers are no subject of invariant 4).
	edited := map[string]*v1.Pod{}
	if len(w.pods) > 0 && rapid.Bool().Draw(t, "editWhileDown") {
		for _, name := range slices.Sorted(maps.Keys(w.pods)) {
			if rapid.Bool().Draw(t, "edit/"+name) {
				edited[name] = drawPod(t, name)
				w.pods[name] = edited[name]
			}
		}
		t.Logf("while the agent is down, edit %s", describePods(edited))
	}
	for id := range before {
		if edited[podOf[id]] != nil {
			delete(before, id)
		}
	}
	if fresh {
		w.sys = quietSystem()
	}
	w.spawn()
	w.refeed()
	w.advance(restartWindow)

	stoppedByAgent := map[string]string{}
	for _, c := range w.rt.Calls()[mark:] {
		if c.Method == fake.MethodStop || c.Method == fake.MethodRemove {
			stoppedByAgent[c.Arg] = c.Method
		}
	}
	now := map[string]runtimeadapter.Container{}
	fresh4 := map[key][]string{}
	for _, c := range w.rt.Containers() {
		now[c.ID] = c
		if k, ok := keyOf(c); ok && !existed[c.ID] {
			fresh4[k] = append(fresh4[k], c.Name)
		}
	}
	// A pod whose settled containers ended on their own may have completed
	// (OnFailure, Never): its sandbox then stops, legitimately.
	ended := map[string]bool{}
	for id, k := range before {
		if c, ok := now[id]; k.name != runtimeadapter.SandboxName && (!ok || c.State == runtimeadapter.StateExited) && stoppedByAgent[id] == "" {
			ended[k.uid] = true
		}
	}
	for id, k := range before {
		if k.name == runtimeadapter.SandboxName && ended[k.uid] {
			continue
		}
		if m, ok := stoppedByAgent[id]; ok {
			t.Fatalf("invariant 4: after the restart the agent called %s on %s/%s (%s), which was running with the desired spec",
				m, k.uid, k.name, id[:12])
		}
		c, present := now[id]
		if !present {
			t.Fatalf("invariant 4: %s/%s (%s) vanished across the restart", k.uid, k.name, id[:12])
		}
		if n := fresh4[k]; len(n) > 0 && c.State == runtimeadapter.StateRunning {
			t.Fatalf("invariant 4: after the restart the agent created %v for %s/%s while %s still runs", n, k.uid, k.name, c.Name)
		}
	}
}

// outage: the runtime's list fails for d ("Docker unreachable"). Once the
// node has seen a relist fail, it must create, start, stop and remove
// nothing until lists work again, and report itself unhealthy. Faults are
// cleared and calls under way outwaited first (delays reach 3 min), so
// that every call in the window was decided during the outage.
func (w *world) outage(d time.Duration) {
	t := w.t
	t.Logf("runtime outage: lists fail for %s (after the faults clear and calls under way end)", d)
	w.rt.ClearFaults()
	w.advance(3*time.Minute + 5*time.Second)
	mark := len(w.rt.Calls())
	w.rt.InjectError(fake.MethodList, runtimeadapter.ErrUnavailable, -1)
	w.advance(d)
	var failedAt time.Time
	for _, c := range w.rt.Calls()[mark:] {
		switch {
		case c.Method == fake.MethodList && strings.Contains(c.Arg, "pod= ") && c.Err != nil && failedAt.IsZero():
			failedAt = c.Time
		case failedAt.IsZero() || !c.Time.After(failedAt):
		case c.Method == fake.MethodCreate, c.Method == fake.MethodStart, c.Method == fake.MethodStop, c.Method == fake.MethodRemove:
			t.Fatalf("while lists fail (since %s): %s %s %s", failedAt.Format("15:04:05.000"), c.Time.Format("15:04:05.000"), c.Method, c.Arg)
		}
	}
	if failedAt.IsZero() {
		t.Fatalf("no relist in %s of outage", d)
	}
	healthy := true
	for _, c := range request[*messages.NodeHealth](w, &messages.GetHealth{}).Checks {
		healthy = healthy && c.OK
	}
	if healthy {
		t.Fatalf("the node reports itself healthy after %s of failing lists", d)
	}
	w.rt.InjectError(fake.MethodList, nil, 0)
}

// converge stops the faults, lets convergeFor pass and checks the end
// state, then that it is stable.
func (w *world) converge() {
	t := w.t
	t.Logf("faults stop; every container runs forever from its next start")
	w.rt.ClearFaults()
	w.rt.ResetBehaviors()
	w.sendSet() // a host feeds its set (again); orphans may now go
	w.advance(convergeFor)
	w.checkConverged()

	snap := w.snapshot()
	mark := len(w.rt.Calls())
	w.advance(stableFor)
	for _, c := range w.rt.Calls()[mark:] {
		switch c.Method {
		case fake.MethodCreate, fake.MethodStart, fake.MethodStop, fake.MethodRemove:
			t.Fatalf("not stable: %s %s %s after convergence", c.Time.Format(time.TimeOnly), c.Method, c.Arg)
		}
	}
	if after := w.snapshot(); after != snap {
		t.Fatalf("not stable: containers changed after convergence\nbefore:\n%s\nafter:\n%s", snap, after)
	}
}

func (w *world) snapshot() string {
	var lines []string
	for _, c := range w.rt.Containers() {
		lines = append(lines, fmt.Sprintf("%s %s %s", c.ID[:12], c.Name, c.State))
	}
	return strings.Join(lines, "\n")
}

func (w *world) checkConverged() {
	t := w.t
	desired := w.desired()
	cs := w.rt.Containers()
	byKey := map[key][]runtimeadapter.Container{}
	for _, c := range cs {
		k, ok := keyOf(c)
		if !ok {
			continue
		}
		if desired[k.uid] == nil {
			t.Fatalf("invariant 2: %s (%s, pod %s) remains %s after %s, but its pod is not desired",
				c.Name, c.State, k.uid, convergeFor, convergeFor)
		}
		byKey[k] = append(byKey[k], c)
	}
	statuses := map[types.UID]*v1.Pod{}
	for _, p := range request[*messages.PodStatuses](w, &messages.GetPodStatuses{}).Pods {
		statuses[p.UID] = p
	}
	for uid, pod := range desired {
		policy := pod.Spec.RestartPolicy
		var sandbox *runtimeadapter.Container
		runningSandboxes := 0
		for _, s := range byKey[key{uid, runtimeadapter.SandboxName}] {
			if s.State == runtimeadapter.StateRunning {
				runningSandboxes++
				sandbox = &s
			}
		}
		for _, c := range pod.Spec.Containers {
			insts := byKey[key{uid, c.Name}]
			var run []runtimeadapter.Container
			for _, i := range insts {
				if i.State == runtimeadapter.StateRunning {
					run = append(run, i)
				}
			}
			if policy == v1.RestartPolicyNever {
				continue // may have run and ended; invariant 1 and stability only
			}
			if policy == v1.RestartPolicyOnFailure && len(run) == 0 && len(insts) > 0 {
				newest := insts[len(insts)-1]
				if newest.State == runtimeadapter.StateExited && newest.ExitCode == 0 {
					continue // completed: not restarted under OnFailure
				}
			}
			if policy == v1.RestartPolicyOnFailure && len(insts) == 0 && completedPerStatus(statuses[types.UID(uid)], c.Name) {
				// Completed, then its exited instance was removed: the
				// node's container history keeps it completed (issue 12,
				// item 3: completed work is not run again).
				continue
			}
			if len(run) != 1 {
				w.notConverged(uid, "pod %s (%s, %s) container %s has %d running instances after %s: %s",
					pod.Name, uid, policy, c.Name, len(run), convergeFor, describe(insts))
			}
			if h := run[0].Labels[runtimeadapter.LabelContainerHash]; h != podsync.ContainerHash(&c) {
				w.notConverged(uid, "pod %s container %s runs spec hash %s, want %s", pod.Name, c.Name, h, podsync.ContainerHash(&c))
			}
			if sandbox == nil || !joined(w.rt, run[0], sandbox) {
				w.notConverged(uid, "pod %s container %s does not run in the pod's running sandbox (%d running sandboxes)",
					pod.Name, c.Name, runningSandboxes)
			}
		}
		if policy == v1.RestartPolicyAlways {
			if runningSandboxes != 1 || sandbox.Labels[runtimeadapter.LabelContainerHash] != podsync.SandboxHash(pod) {
				w.notConverged(uid, "pod %s has %d running sandboxes", pod.Name, runningSandboxes)
			}
			st := statuses[types.UID(uid)]
			if st == nil || st.Status.Phase != v1.PodRunning {
				w.notConverged(uid, "the node reports pod %s as %v, want Running", pod.Name, phaseOf(st))
			}
			for _, cs := range st.Status.ContainerStatuses {
				if cs.State.Running == nil || !cs.Ready {
					w.notConverged(uid, "the node reports container %s of pod %s as %+v (ready %v)", cs.Name, pod.Name, cs.State, cs.Ready)
				}
			}
		}
	}
}

// notConverged fails with what the node and the runtime say about the pod.
func (w *world) notConverged(uid string, format string, args ...any) {
	var b strings.Builder
	fmt.Fprintf(&b, "not converged: "+format, args...)
	for _, p := range request[*messages.PodStatuses](w, &messages.GetPodStatuses{}).Pods {
		if string(p.UID) == uid {
			fmt.Fprintf(&b, "\n  status: phase %s reason %q", p.Status.Phase, p.Status.Reason)
			for _, cs := range p.Status.ContainerStatuses {
				fmt.Fprintf(&b, "\n    %s: restarts %d state %+v", cs.Name, cs.RestartCount, cs.State)
			}
		}
	}
	for _, e := range request[*messages.Events](w, &messages.GetEvents{}).Items {
		if string(e.UID) == uid {
			fmt.Fprintf(&b, "\n  event %s %s %s %s: %s", e.Time.Format("15:04:05.000"), e.Type, e.Reason, e.Container, e.Message)
		}
	}
	for _, c := range w.rt.Calls() {
		if strings.Contains(c.Arg, uid[:min(len(uid), 8)]) || strings.Contains(c.Arg, "pod="+uid) {
			fmt.Fprintf(&b, "\n  call %s %s %s err=%v", c.Time.Format("15:04:05.000"), c.Method, c.Arg, c.Err)
		}
	}
	var relists []string
	for _, c := range w.rt.Calls() {
		if c.Method == fake.MethodList && strings.Contains(c.Arg, "pod= ") {
			relists = append(relists, c.Time.Format("15:04:05.000")+fmt.Sprintf("(err=%v)", c.Err != nil))
		}
	}
	fmt.Fprintf(&b, "\n  %d relists; the last: %v", len(relists), relists[max(0, len(relists)-5):])
	for _, c := range w.rt.Containers() {
		if k, ok := keyOf(c); ok && k.uid == uid {
			fmt.Fprintf(&b, "\n  container %s %s %s exit %d created %s finished %s", c.ID[:12], c.Name, c.State, c.ExitCode,
				c.CreatedAt.Format("15:04:05.000"), c.FinishedAt.Format("15:04:05.000"))
		}
	}
	w.t.Fatalf("%s", b.String())
}

func phaseOf(p *v1.Pod) any {
	if p == nil {
		return "missing"
	}
	return p.Status.Phase
}

func describe(cs []runtimeadapter.Container) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s=%s(exit %d)", c.Name, c.State, c.ExitCode))
	}
	return strings.Join(parts, ", ")
}

func describePods(pods map[string]*v1.Pod) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(pods)) {
		p := pods[name]
		var cs []string
		for _, c := range p.Spec.Containers {
			cs = append(cs, c.Name+"="+c.Image)
		}
		sort.Strings(cs)
		uid := "generated"
		if p.UID != "" {
			uid = string(p.UID)
		}
		parts = append(parts, fmt.Sprintf("%s{%s, grace %d, uid %s: %s}", name, p.Spec.RestartPolicy,
			*p.Spec.TerminationGracePeriodSeconds, uid, strings.Join(cs, " ")))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// completedPerStatus: the node reports container name of pod st as
// terminated with exit code 0.
func completedPerStatus(st *v1.Pod, name string) bool {
	if st == nil {
		return false
	}
	for _, cs := range st.Status.ContainerStatuses {
		if cs.Name == name {
			return cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0
		}
	}
	return false
}
