package pipeline

import (
	"fmt"
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/actorlet/actorlet/internal/dispatch"
)

// Floor is what protoactor itself costs, measured with the pipeline's
// sizes: n actors that do nothing but count their messages, spawned as
// children of one parent (as pod actors are of the router).
type Floor struct {
	Name      string
	Bytes     float64    // heap per idle actor (HeapAlloc delta, after GC)
	Send      Throughput // one message to each actor per round, from one goroutine
	PerSecond float64
}

// MeasureFloor spawns n bare actors with protoactor's default mailbox and
// dispatcher, and n with the pod actors' (dispatch.Mailbox on a
// dispatch.Pool), and measures each set's bytes per actor and its CPU
// per message sent to an idle actor (rounds messages per actor, the best
// of tries).
func MeasureFloor(n, rounds, tries int) ([]Floor, error) {
	var out []Floor
	for _, pooled := range []bool{false, true} {
		f, err := measureFloor(n, rounds, tries, pooled)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func measureFloor(n, rounds, tries int, pooled bool) (Floor, error) {
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}))
	defer sys.Shutdown()
	var got atomic.Int64
	count := func(c actor.Context) {
		if _, ok := c.Message().(int); ok {
			got.Add(1)
		}
	}
	f := Floor{Name: "protoactor's default mailbox and dispatcher (a goroutine per activation)"}
	props := actor.PropsFromFunc(count)
	var pool *dispatch.Pool
	if pooled {
		pool = dispatch.New(300)
		defer pool.Close()
		f.Name = "dispatch.Mailbox on a dispatch.Pool (the pod actors')"
		props = actor.PropsFromFunc(count, actor.WithMailbox(dispatch.Mailbox()), actor.WithDispatcher(pool))
	}
	kids := make(chan []*actor.PID, 1)
	parent := sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(struct{}); ok {
			pids := make([]*actor.PID, n)
			for i := range pids {
				pids[i] = c.Spawn(props)
			}
			kids <- pids
		}
	}))
	h1 := heapAlloc()
	sys.Root.Send(parent, struct{}{})
	pids := <-kids
	time.Sleep(200 * time.Millisecond) // Started processed
	h2 := heapAlloc()
	f.Bytes = float64(int64(h2)-int64(h1)) / float64(n)
	for range max(tries, 1) {
		before := got.Load()
		t := Throughput{Batches: n * rounds, Events: n * rounds}
		start, cpu0 := time.Now(), cpuTime()
		for r := range rounds {
			for _, pid := range pids {
				sys.Root.Send(pid, r)
			}
		}
		deadline := start.Add(time.Minute)
		for got.Load()-before < int64(t.Events) {
			if time.Now().After(deadline) {
				return f, fmt.Errorf("floor: %d of %d messages processed within a minute", got.Load()-before, t.Events)
			}
			time.Sleep(200 * time.Microsecond)
		}
		t.Elapsed, t.CPU = time.Since(start), cpuTime()-cpu0
		if f.Send.Events == 0 || t.CPUPerEvent() < f.Send.CPUPerEvent() {
			f.Send = t
		}
	}
	runtime.KeepAlive(pids)
	if err := sys.Root.StopFuture(parent).Wait(); err != nil {
		return f, err
	}
	return f, nil
}
