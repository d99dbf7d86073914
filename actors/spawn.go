package actors

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/internal/images"
	"github.com/actorlet/actorlet/internal/metrics"
	"github.com/actorlet/actorlet/internal/nodestate"
	"github.com/actorlet/actorlet/internal/objstore"
	"github.com/actorlet/actorlet/internal/protocol"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/sources"
	"github.com/actorlet/actorlet/supervision"
)

// NodeProps returns the props of a node actor for cfg, fed by srcs. The
// node spawns its router and relist children when it starts and runs each
// source in its own goroutine until it stops.
func NodeProps(cfg Config, srcs ...sources.Source) *actor.Props {
	cfg = cfg.withDefaults()
	if cfg.History == nil {
		cfg.History, _ = supervision.NewHistory("") // memory only: cannot fail
	}
	if cfg.Images == nil {
		if svc, ok := capability[runtimeadapter.ImageService](cfg.Runtime); ok {
			cfg.progress = newPullProgress()
			cfg.Images = images.New(svc, images.WithClock(cfg.Clock.Now), cfg.progress.option())
		}
	}
	if cfg.starts == nil {
		cfg.starts = newStartSlots(cfg.ParallelPodStarts)
	}
	if cfg.order == nil {
		cfg.order = newStartOrder()
	}
	names := make([]string, 0, len(srcs)+1)
	for _, s := range srcs {
		names = append(names, s.Name())
	}
	if cfg.HostSource {
		names = append(names, HostSource)
	}
	log := cfg.Logger.Named("node")
	run := func(ctx context.Context, self *actor.PID, sys *actor.ActorSystem) {
		for _, s := range srcs {
			go runSource(ctx, s, self, sys)
		}
	}
	return actor.PropsFromProducer(func() actor.Actor {
		return &nodeActor{
			cfg: cfg, log: log, sources: names, runSources: run,
			pods: newNodeState(cfg, names), objects: objstore.New(),
			syncing: map[types.UID]time.Time{}, sourceErrs: map[string]error{},
			subscribers: map[string]*actor.PID{},
		}
	}, append(cfg.mailbox(metrics.KindNode), actor.WithSupervisor(actor.NewOneForOneStrategy(10, time.Minute, func(any) actor.Directive {
		return actor.RestartDirective
	})))...)
}

// runSource delivers a source's updates to the node as messages. A panic
// in the source is recovered and reported, never fatal to the process.
func runSource(ctx context.Context, s sources.Source, node *actor.PID, sys *actor.ActorSystem) {
	defer func() {
		if p := recover(); p != nil {
			err := fmt.Errorf("source %s panicked: %v\n%s", s.Name(), p, debug.Stack())
			sys.Root.Send(node, &protocol.SourceError{Source: s.Name(), Err: err})
		}
	}()
	// The source logs its own problems (once each); the node only needs the set.
	err := s.Run(ctx, func(u sources.Update) {
		if u.Err != nil {
			sys.Root.Send(node, &protocol.SourceError{Source: s.Name(), Err: u.Err})
			return
		}
		sys.Root.Send(node, &protocol.DesiredPods{Source: s.Name(), Pods: u.Pods, ConfigMaps: u.ConfigMaps, Secrets: u.Secrets})
	})
	if err != nil && ctx.Err() == nil {
		sys.Root.Send(node, &protocol.SourceError{Source: s.Name(), Err: fmt.Errorf("source %s stopped: %w", s.Name(), err)})
	}
}

// StopNode stops the node actor and its whole tree (children stop first)
// and waits for it, at most timeout; protoactor's ActorSystem.Shutdown
// stops no actors. Containers keep running. A pod's runtime call under way
// is cancelled, and its pod actor waits for it to end (at most 10 s), so
// that no call of the stopped node takes effect after a new node starts
// (a runtime that ignores the cancellation may still finish one).
func StopNode(root *actor.RootContext, pid *actor.PID, timeout time.Duration) error {
	done := make(chan struct{})
	watcher := root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			c.Watch(pid) // a watch on a dead PID answers Terminated at once
			c.Stop(pid)
		case *actor.Terminated:
			if m.Who.Equal(pid) {
				close(done)
			}
		}
	}))
	defer root.Stop(watcher)
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
		return fmt.Errorf("stop node actor %s: not stopped within %s", pid.Id, timeout)
	}
}

// newNodeState is the node's pod records, admitting pods against the
// node's allocatable resources.
func newNodeState(cfg Config, sources []string) *nodestate.State {
	s := nodestate.New(cfg.NodeName, sources)
	s.SetAllocatable(cfg.Spec.Allocatable)
	return s
}
