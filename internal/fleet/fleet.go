// Package fleet is what a node of a fleet writes to etcd, next to the pods
// it reads with sources/etcd (the key schema is sources/etcd's Keys):
//
//   - <prefix>/nodes/<node>/heartbeat: a Heartbeat document under a lease
//     of the node lease duration (default 40 s, as the kubelet's node
//     lease), kept alive by the etcd client every third of it. A node
//     that dies stops renewing it and etcd deletes the key within the
//     lease duration; a node that stops cleanly revokes it. While the key
//     lives, the node's age since its last renewal is the lease's granted
//     TTL minus its remaining TTL (see HeartbeatAge).
//   - <prefix>/nodes/<node>/status/<namespace>/<name>: the pod's status, a
//     v1.Pod document with only metadata (name, namespace, uid and the
//     io.actorlet/node annotation) and status, written on every change the
//     node reports and deleted once a removed pod has fully stopped. At
//     start, status keys whose pod key is gone are deleted. These keys have
//     no lease: a reader tells a stale status by the node's heartbeat.
//   - <prefix>/nodes/<node>/events/<sequence>: the node's recent events
//     (an EventRecord each, oldest first by key), under leases of the event
//     TTL (default 1 h) and at most MaxEvents (default 100): the oldest
//     are deleted past it.
//
// Nothing here ever blocks an actor: status changes are queued (the latest
// per pod wins) and written by a goroutine of the Publisher; events are
// polled from the node. Failed writes are retried with exponential backoff
// (0.5 s doubling to 30 s, forever); a panic in a loop is logged and the
// loop goes on.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cenkalti/backoff/v4"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/node"
	"github.com/actorlet/actorlet/sources/etcd"
)

// Defaults of Options.
const (
	// DefaultLeaseDuration is the heartbeat lease's TTL, as the kubelet's
	// --node-lease-duration-seconds (40 s).
	DefaultLeaseDuration = 40 * time.Second
	// DefaultEventTTL is how long an event stays in etcd at most.
	DefaultEventTTL = time.Hour
	// DefaultMaxEvents bounds a node's events in etcd.
	DefaultMaxEvents = 100
	// DefaultEventPollPeriod is how often the node's recent events are
	// read to write the new ones.
	DefaultEventPollPeriod = 2 * time.Second
	// DefaultRequestTimeout bounds one etcd request.
	DefaultRequestTimeout = 5 * time.Second
	// defaultBackoffInitial and defaultBackoffMax bound the waits between
	// retries of failed writes.
	defaultBackoffInitial = 500 * time.Millisecond
	defaultBackoffMax     = 30 * time.Second
	// eventLeaseShare: an event lease is used for new events during the
	// first tenth of its TTL, so an event lives 90–100 % of the TTL.
	eventLeaseShare = 10
	// revokeTimeout bounds revoking the heartbeat lease at Stop.
	revokeTimeout = 500 * time.Millisecond
)

// Client is what the Publisher needs of an etcd client; *clientv3.Client
// has it.
type Client interface {
	clientv3.KV
	clientv3.Lease
}

// Options configure a Publisher. Client, Keys and Node are required.
type Options struct {
	Client Client
	Keys   etcd.Keys
	Node   string
	// LeaseDuration is the heartbeat lease's TTL, rounded up to whole
	// seconds (default DefaultLeaseDuration, 40 s). etcd raises a TTL
	// below its minimum (1.5 × its election timeout, 2 s by default).
	LeaseDuration time.Duration
	// EventTTL is the events' lifetime (default DefaultEventTTL, 1 h).
	EventTTL time.Duration
	// MaxEvents bounds the node's events in etcd (default 100).
	MaxEvents int
	// EventPollPeriod (default 2 s) and RequestTimeout (default 5 s).
	EventPollPeriod time.Duration
	RequestTimeout  time.Duration
	// BackoffInitial and BackoffMax bound the retry waits (default 0.5 s
	// and 30 s).
	BackoffInitial, BackoffMax time.Duration
	// Logger (default: none).
	Logger *zap.Logger
}

func (o *Options) setDefaults() error {
	if o.Client == nil {
		return errors.New("fleet: no etcd client")
	}
	if err := etcd.ValidNodeName(o.Node); err != nil {
		return fmt.Errorf("fleet: %w", err)
	}
	if o.LeaseDuration <= 0 {
		o.LeaseDuration = DefaultLeaseDuration
	}
	if o.EventTTL <= 0 {
		o.EventTTL = DefaultEventTTL
	}
	if o.MaxEvents <= 0 {
		o.MaxEvents = DefaultMaxEvents
	}
	if o.EventPollPeriod <= 0 {
		o.EventPollPeriod = DefaultEventPollPeriod
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.BackoffInitial <= 0 {
		o.BackoffInitial = defaultBackoffInitial
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = defaultBackoffMax
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	return nil
}

// EventSource returns the node's recent events, oldest first (as the
// node's GetEvents answers).
type EventSource func(ctx context.Context) ([]messages.Event, error)

// Publisher writes a node's heartbeat, pod statuses and events to etcd.
// Create it with New, Start it once, and Stop it.
type Publisher struct {
	o   Options
	log *zap.Logger

	ctx    context.Context // the loops', ended by Stop
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	pending map[string]*messages.PodStatusChanged // by namespace/name, the latest change
	wake    chan struct{}                         // signalled when pending grows

	writeMu sync.Mutex               // one status write at a time (the loop, or Stop's flush)
	written map[string]writtenStatus // by namespace/name: what this process wrote
	swept   bool                     // stale statuses of a former run deleted

	events *eventWriter // the event loop's state

	detach   func(timeout time.Duration) // undoes Attach
	stopOnce sync.Once
}

// New checks opts and returns a Publisher that has not started.
func New(opts Options) (*Publisher, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	return &Publisher{
		o: opts, log: opts.Logger.With(zap.String("node", opts.Node)),
		pending: map[string]*messages.PodStatusChanged{}, wake: make(chan struct{}, 1),
		written: map[string]writtenStatus{},
	}, nil
}

// Start runs the heartbeat, the status writer and, with events non-nil,
// the event writer, each in a goroutine, until Stop.
func (p *Publisher) Start(events EventSource) {
	p.ctx, p.cancel = context.WithCancel(context.Background())
	ctx := p.ctx
	p.goLoop("heartbeat", func() { p.heartbeatLoop(ctx) })
	p.goLoop("status", func() { p.statusLoop(ctx) })
	if events != nil {
		p.goLoop("events", func() { p.eventsLoop(ctx, events) })
	}
}

// Attach subscribes p to the node actor's status changes (through a small
// actor that only queues them) and starts p with the node's events. Stop
// undoes it.
func (p *Publisher) Attach(root *actor.RootContext, nodePID *actor.PID) {
	pid := root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*messages.PodStatusChanged); ok {
			p.PodStatusChanged(m)
		}
	}))
	root.Send(nodePID, &messages.Subscribe{PID: pid})
	p.detach = func(timeout time.Duration) {
		root.Send(nodePID, &messages.Unsubscribe{PID: pid})
		// The node handles its messages in order: once it answers a request
		// sent after the Unsubscribe, every change it published is in the
		// subscriber's mailbox, and a poison pill queued after them lets
		// the subscriber take them all (within timeout) before it stops.
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		_, _ = node.Events(ctx, root, nodePID)
		cancel()
		_ = root.PoisonFuture(pid).Wait()
	}
	p.Start(func(ctx context.Context) ([]messages.Event, error) {
		// Stop need not wait for the answer: ending ctx ends the wait.
		ctx, cancel := context.WithTimeout(ctx, p.o.RequestTimeout)
		defer cancel()
		evs, err := node.Events(ctx, root, nodePID)
		if err != nil {
			return nil, fmt.Errorf("ask the node for its events: %w", err)
		}
		return evs, nil
	})
}

// Stop takes the last status changes from the node (after Attach), stops
// every loop (cutting their requests short), revokes the heartbeat lease,
// so readers see the node gone at once (its pods keep running), and
// writes the status changes still queued, for at most timeout. When etcd
// does not answer it takes about timeout plus 0.5 s (the revocation).
// Calls after the first do nothing.
func (p *Publisher) Stop(timeout time.Duration) {
	p.stopOnce.Do(func() {
		if p.detach != nil {
			p.detach(timeout)
		}
		if p.cancel != nil {
			p.cancel()
		}
		p.wg.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if rest := p.writeStatuses(ctx, p.takePending()); len(rest) > 0 {
			p.log.Warn("pod statuses not written before exiting", zap.Int("pods", len(rest)))
		}
	})
}

// goLoop runs loop in a goroutine; a panic is logged with its stack and
// the loop runs again a second later (the loops keep their state in the
// Publisher, so it goes on where it was).
func (p *Publisher) goLoop(name string, loop func()) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for p.safely(name, loop) && sleep(p.ctx, time.Second) {
		}
	}()
}

// safely runs f and reports whether it panicked.
func (p *Publisher) safely(name string, f func()) (panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			p.log.Error("fleet writer panicked; running it again", zap.String("loop", name),
				zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
			panicked = true
		}
	}()
	f()
	return false
}

// newBackoff is the retry policy: exponential, never giving up.
func (p *Publisher) newBackoff() *backoff.ExponentialBackOff {
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval = p.o.BackoffInitial
	bo.MaxInterval = p.o.BackoffMax
	bo.MaxElapsedTime = 0
	bo.Reset()
	return bo
}

// request returns a context for one etcd request.
func (p *Publisher) request(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, p.o.RequestTimeout)
}

// sleep waits d or until ctx ends, and reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
