package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/internal/metrics"
	"github.com/actorlet/actorlet/internal/protocol"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// Batches returns one PodTransitions per pod, as the relist sends them:
// the pod's containers as the runtime lists them now, and one event (the
// app container started). Since the containers are exactly what the pod
// actor already holds, its sync finds nothing to do: a batch costs the
// message path plus one plan and status computation, no runtime call.
// With unknown, the UIDs are of no pod (the router drops such batches).
func (e *Env) Batches(unknown bool) ([]*protocol.PodTransitions, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := e.RT.List(ctx, runtimeadapter.ListOptions{Node: e.Name, All: true})
	if err != nil {
		return nil, err
	}
	byPod := map[types.UID]*protocol.PodTransitions{}
	var out []*protocol.PodTransitions
	for _, c := range res.Containers {
		uid := types.UID(c.Labels[runtimeadapter.LabelPodUID])
		b := byPod[uid]
		if b == nil {
			b = &protocol.PodTransitions{UID: uid, ObservedAt: time.Now()}
			if unknown {
				b.UID = "unknown-" + uid
			}
			byPod[uid] = b
			out = append(out, b)
		}
		b.Containers = append(b.Containers, c)
		if c.Labels[runtimeadapter.LabelContainerType] == string(runtimeadapter.TypeApp) {
			b.Events = append(b.Events, protocol.PodLifecycleEvent{Type: protocol.ContainerStarted, ContainerID: c.ID, ContainerName: c.Labels[runtimeadapter.LabelContainerName]})
		}
	}
	return out, nil
}

// Processed returns how many user messages actors of kind (metrics.KindPod,
// KindRouter) have processed, from actorlet's own mailbox counter
// (actorlet_mailbox_messages_total{kind}). It reads that one counter, not
// the whole registry: Feed polls it every millisecond, and gathering the
// registry each time was 14 % of the profile's samples.
func (e *Env) Processed(kind string) (float64, error) {
	if e.metrics == nil {
		return 0, errors.New("node started without metrics")
	}
	return e.metrics.MailboxMessages(kind), nil
}

// Throughput is one feeding of batches to the router.
type Throughput struct {
	Batches, Events int
	Elapsed         time.Duration
	// CPU is the process's CPU time (user + system, all threads) over
	// Elapsed: less sensitive than Elapsed to other processes on the
	// machine.
	CPU time.Duration
}

// PerSec returns events per second.
func (t Throughput) PerSec() float64 { return float64(t.Events) / t.Elapsed.Seconds() }

// CPUPerEvent returns the CPU time per event.
func (t Throughput) CPUPerEvent() time.Duration { return t.CPU / time.Duration(max(t.Events, 1)) }

// cpuTime is this process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Feed sends every batch rounds times to the router from one goroutine,
// as the relist actor sends them: each round one
// protocol.RelistTransitions holding every pod's batch (a relist's
// batches travel to the router in one message; the router hands each pod
// actor its own). It waits until actors of kind have processed what that
// takes: for metrics.KindPod one message per batch and round (every batch
// received and stepped by its pod actor), for metrics.KindRouter one per
// round. Elapsed runs from the first send to that moment (polled every
// millisecond). The messages are made before the clock starts, as the
// batches themselves are (the relist's own cost is the relist
// benchmark's).
func (e *Env) Feed(batches []*protocol.PodTransitions, rounds int, kind string, timeout time.Duration) (Throughput, error) {
	before, err := e.Processed(kind)
	if err != nil {
		return Throughput{}, err
	}
	t := Throughput{Batches: len(batches) * rounds}
	for _, b := range batches {
		t.Events += len(b.Events) * rounds
	}
	want := float64(t.Batches)
	if kind == metrics.KindRouter {
		want = float64(rounds)
	}
	msgs := make([]*protocol.RelistTransitions, rounds)
	for i := range msgs {
		m := &protocol.RelistTransitions{Pods: make([]protocol.PodTransitions, len(batches))}
		for j, b := range batches {
			m.Pods[j] = *b
		}
		msgs[i] = m
	}
	start, cpu0 := time.Now(), cpuTime()
	for _, m := range msgs {
		e.Sys.Root.Send(e.Router, m)
	}
	deadline := start.Add(timeout)
	for {
		n, err := e.Processed(kind)
		if err != nil {
			return t, err
		}
		if n-before >= want {
			t.Elapsed, t.CPU = time.Since(start), cpuTime()-cpu0
			return t, nil
		}
		if time.Now().After(deadline) {
			return t, fmt.Errorf("%s actors processed %.0f of %.0f messages within %s", kind, n-before, want, timeout)
		}
		time.Sleep(time.Millisecond)
	}
}

// Kill makes the app containers of the first n pods exit at once (the
// fake's Kill, as `docker kill`: a die event each), and measures until a
// subscriber of the node has seen, for every one of those pods, a
// PodStatusChanged showing a container not running: die event → relist
// actor → router → pod actor (which acts on the event at once; the relist
// the event triggers confirms it) → pod status → node → subscriber. The
// pod actors' syncs then only wait (the benchmark's CrashLoopBackOff is an
// hour).
func (e *Env) Kill(n int, timeout time.Duration) (Throughput, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := e.RT.List(ctx, runtimeadapter.ListOptions{Node: e.Name})
	if err != nil {
		return Throughput{}, err
	}
	want := map[types.UID]bool{}
	for _, uid := range e.UIDs[:min(n, len(e.UIDs))] {
		want[uid] = true
	}
	var ids []string
	for _, c := range res.Containers {
		if want[types.UID(c.Labels[runtimeadapter.LabelPodUID])] && c.Labels[runtimeadapter.LabelContainerType] == string(runtimeadapter.TypeApp) {
			ids = append(ids, c.ID)
		}
	}
	var dead atomic.Int64
	seen := map[types.UID]bool{}
	w := e.Sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		m, ok := c.Message().(*messages.PodStatusChanged)
		if !ok || !want[m.Pod.UID] || seen[m.Pod.UID] {
			return
		}
		for _, cs := range m.Pod.Status.ContainerStatuses {
			if cs.State.Running == nil {
				seen[m.Pod.UID] = true
				dead.Add(1)
				return
			}
		}
	}))
	e.Sys.Root.Send(e.Node, &messages.Subscribe{PID: w})
	defer func() {
		e.Sys.Root.Send(e.Node, &messages.Unsubscribe{PID: w})
		e.Sys.Root.Stop(w)
	}()
	t := Throughput{Batches: len(ids), Events: len(ids)}
	start, cpu0 := time.Now(), cpuTime()
	for _, id := range ids {
		if err := e.RT.Kill(id, 137); err != nil {
			return t, err
		}
	}
	deadline := start.Add(timeout)
	for {
		if dead.Load() >= int64(len(want)) {
			t.Elapsed, t.CPU = time.Since(start), cpuTime()-cpu0
			return t, nil
		}
		if time.Now().After(deadline) {
			return t, fmt.Errorf("%d of %d pods reported their container's death within %s", dead.Load(), len(want), timeout)
		}
		time.Sleep(time.Millisecond)
	}
}
