package dockerbench

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/supervision"
)

// Detection is one container exit and when actorlet knew of it.
type Detection struct {
	ID string
	// Finished is Docker's FinishedAt: from inspecting the container after
	// the run, else the earliest the statuses showed (a status made on the
	// die event alone carries the event's time; the relist's listing then
	// brings Docker's own).
	Finished time.Time
	Die      time.Time // Docker's die event
	Known    time.Time // a PodStatusChanged showed it not running
	// From actorlet's debug logs (zero when not logged): the relist actor
	// received the die event, or containerd's task exit (ExitIn); the pod
	// actor received the ContainerDied transition (or ContainerExited).
	EventIn, ExitIn, PLEG time.Time
}

// Detection modes: how a death reaches the pod actor.
const (
	ModeContainerd = "containerd" // containerd's task exit, Docker's events and the relist behind it
	ModeEvents     = "events"     // Docker's die event (no containerd followed)
	ModeRelist     = "relist"     // relisting every second
)

// FromFinished is the latency from Docker's FinishedAt.
func (d Detection) FromFinished() time.Duration { return d.Known.Sub(d.Finished) }

// FromDie is the latency from Docker's die event (-1 when the event was
// not seen).
func (d Detection) FromDie() time.Duration {
	if d.Die.IsZero() {
		return -1
	}
	return d.Known.Sub(d.Die)
}

// Detect runs pods pods whose container exits by itself (after 1.2 s to
// 2.1 s, different per pod so that exits spread out) and is restarted at
// once (CrashLoopBackOff 0), until exits exits have been detected, and
// returns them. Latency: from the container's exit (Docker's FinishedAt;
// the die event is recorded too) to the moment a subscriber of the node
// (messages.Subscribe, in this process) receives a PodStatusChanged showing
// that container not running. mode is one of the Mode constants.
func (e *Env) Detect(mode string, pods, exits int, timeout time.Duration) ([]Detection, error) {
	name := NodeName("detect-" + mode)
	defer e.CleanupNode(name)
	w := e.Watch(runtimeadapter.LabelNode + "=" + name)
	defer w.Stop()

	var mu sync.Mutex
	known := map[string]Detection{}
	onStatus := func(at time.Time, m *messages.PodStatusChanged) {
		mu.Lock()
		defer mu.Unlock()
		exitedIDs(m.Pod, func(id string, finished time.Time) {
			if id == "" {
				return
			}
			d, ok := known[id]
			if !ok {
				known[id] = Detection{ID: id, Finished: finished, Known: at}
				return
			}
			if !finished.IsZero() && (d.Finished.IsZero() || finished.Before(d.Finished)) {
				d.Finished = finished
				known[id] = d
			}
		})
	}
	tr := newTracer()
	n, err := e.StartNode(name, NodeConfig{Backoff: supervision.BackoffPolicy{}, RelistOnly: mode == ModeRelist, Containerd: mode == ModeContainerd, Logger: tr.Logger()}, onStatus)
	if err != nil {
		return nil, err
	}
	defer n.Close()
	var ps []*v1.Pod
	for i := range pods {
		after := 1200*time.Millisecond + time.Duration(i)*900*time.Millisecond/time.Duration(max(pods-1, 1))
		ps = append(ps, WorkloadPod(fmt.Sprintf("detect-%d", i), map[string]string{"TW_EXIT_AFTER": after.String()}))
	}
	if err := n.SetPods(ps); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(timeout)
	for {
		mu.Lock()
		got := len(known)
		mu.Unlock()
		if got >= exits {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("detect (%s): %d of %d exits detected within %s", mode, got, exits, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // the last die events
	evs, err := w.Events()
	if err != nil {
		return nil, fmt.Errorf("docker events: %w", err)
	}
	die := map[string]time.Time{}
	for _, ev := range evs {
		if ev.Action == "die" {
			die[ev.ID] = ev.Time
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var out []Detection
	inexact := 0
	for id, d := range known {
		d.Die = die[id]
		d.EventIn, d.PLEG = tr.at("runtime event", "die", id), tr.at("PLEG event", "ContainerDied", id)
		d.ExitIn = tr.at("runtime exit", "", id)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if in, err := e.Cli.ContainerInspect(ctx, id); err == nil && in.State != nil {
			if f, err := time.Parse(time.RFC3339Nano, in.State.FinishedAt); err == nil && f.Year() > 1 {
				d.Finished = f
			}
		}
		cancel()
		if d.Finished.IsZero() {
			continue
		}
		if !d.Die.IsZero() && !d.Finished.Before(d.Die) {
			inexact++ // only the die event's time is known, not Docker's FinishedAt
			continue
		}
		out = append(out, d)
	}
	if inexact > 0 {
		e.logf("detect (%s): %d exits left out: Docker's FinishedAt not known (container gone, status never corrected)", mode, inexact)
	}
	return out, nil
}
