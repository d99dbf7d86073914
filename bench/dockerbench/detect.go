package dockerbench

import (
	"cmp"
	"context"
	"fmt"
	"slices"
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
	// Published and Received date containerd's exit event (zero when not
	// logged): the shim's publish (the envelope's timestamp) and the
	// follower's read of it off the gRPC stream.
	Published, Received time.Time
	// Starting: how many other containers of the node Docker started in
	// the 250 ms before the exit or the 50 ms after it (a start's runc
	// and shim work comes before its start event): the load the
	// benchmark's own restarts put on the daemons at that moment.
	Starting int
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
	return e.DetectLives(mode, pods, exits, timeout, 1200*time.Millisecond, 900*time.Millisecond)
}

// DetectLives is Detect with the containers' lives spread from life to
// life+spread (pod i of n: life + i·spread/(n-1)).
func (e *Env) DetectLives(mode string, pods, exits int, timeout, life, spread time.Duration) ([]Detection, error) {
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
		after := life + time.Duration(i)*spread/time.Duration(max(pods-1, 1))
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
	type start struct {
		id string
		at time.Time
	}
	var starts []start
	for _, ev := range evs {
		switch ev.Action {
		case "die":
			die[ev.ID] = ev.Time
		case "start":
			starts = append(starts, start{ev.ID, ev.Time})
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
		d.Published, d.Received = tr.field("runtime exit", "", id, "publishedAt"), tr.field("runtime exit", "", id, "receivedAt")
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
		for _, st := range starts {
			if st.id != id && st.at.After(d.Finished.Add(-250*time.Millisecond)) && st.at.Before(d.Finished.Add(50*time.Millisecond)) {
				d.Starting++
			}
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

// logSlowest logs the n slowest exits of ds (exited_at → subscriber),
// each split into its stages, so that a tail can be told apart: the shim
// and containerd, actorlet's goroutines and actors, or the pod sync.
func (e *Env) logSlowest(mode string, ds []Detection, n int) {
	ds = slices.Clone(ds)
	slices.SortFunc(ds, func(a, b Detection) int { return cmp.Compare(b.FromFinished(), a.FromFinished()) })
	ms := func(from, to time.Time) string {
		if from.IsZero() || to.IsZero() {
			return "?"
		}
		return fmt.Sprintf("%.2f", float64(to.Sub(from))/float64(time.Millisecond))
	}
	for i, d := range ds[:min(n, len(ds))] {
		e.logf("detect (%s): slowest #%d %s: total %s ms = shim %s + containerd/gRPC %s + follower→pod actor %s + →subscriber %s (relist actor at +%s; at %s, %d other starts around it)",
			mode, i+1, d.ID[:12], ms(d.Finished, d.Known), ms(d.Finished, d.Published), ms(d.Published, d.Received),
			ms(d.Received, d.PLEG), ms(d.PLEG, d.Known), ms(d.Received, d.ExitIn), d.Finished.Format("15:04:05.000"), d.Starting)
	}
	var alone, near []time.Duration
	for _, d := range ds {
		if d.PLEG.IsZero() {
			continue
		}
		if d.Starting == 0 {
			alone = append(alone, d.PLEG.Sub(d.Finished))
		} else {
			near = append(near, d.PLEG.Sub(d.Finished))
		}
	}
	e.logf("detect (%s): exited_at → pod actor, exits with no other start within -250/+50 ms: %d, p50 / p90 / p99 %s; with one or more: %d, %s",
		mode, len(alone), triple(alone), len(near), triple(near))
}
