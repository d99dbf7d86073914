// Package dispatch runs actor mailboxes on a pool of reused goroutines.
//
// protoactor-go's default dispatcher starts a goroutine each time an idle
// mailbox gets a message. A pod actor's mailbox is idle almost always, so
// each message it gets pays for a new goroutine, and, when the runtime
// starts goroutines with 2 KiB of stack (its starting size adapts to the
// average stack use it sees at each GC), for growing that stack: the
// mailbox's own frames use about 1 KiB before the actor's Receive runs.
// Measured in the pipeline benchmark (BENCHMARKS.md), that growth was a
// fifth of the CPU of a PLEG batch. A Pool runs mailboxes on goroutines
// that keep their grown stacks from one mailbox to the next.
package dispatch

import (
	"sync"
	"sync/atomic"
	"time"
)

// Pool is an actor.Dispatcher (Schedule, Throughput). Schedule queues the
// mailbox for the pool's goroutines and starts one more while none is
// idle and fewer than the pool's bound run; it never blocks (beyond the
// queue, mailboxes wait in an overflow list that the pool's goroutines
// take from once the queue is empty: a burst, such as a relist's batches
// for 10,000 pods, costs no goroutine per mailbox). So a Receive that blocks holds one of the pool's goroutines:
// mailboxes queued behind it wait only if every goroutine of the pool is
// held at once. Actors run on a pool must not block in Receive (actorlet's
// pod actors never wait on the runtime there).
//
// A goroutine with nothing to do for the pool's idle time ends; Close ends
// them all at once (a testing/synctest bubble's clock stops when its test
// returns: close the pool before). After Close, Schedule runs each mailbox
// on a goroutine of its own, as the default dispatcher.
type Pool struct {
	queue      chan func()
	throughput int
	idleFor    time.Duration
	max        int32
	running    atomic.Int32 // goroutines of the pool
	idle       atomic.Int32 // of which waiting for the queue
	closed     atomic.Bool
	done       chan struct{}
	closeOnce  sync.Once

	// overflow: mailboxes scheduled while the queue was full, in order
	// (nil once empty: a burst's list is not kept); over is its length.
	mu       sync.Mutex
	overflow []func()
	over     atomic.Int32
	// wake, queued after an overflow, runs one overflowed mailbox (made
	// once: a method value would be allocated each time).
	wake func()
}

// Defaults of New.
const (
	// DefaultIdle is how long a goroutine waits for another mailbox.
	DefaultIdle = time.Second
	// DefaultMax bounds the pool's goroutines.
	DefaultMax = 256
	// queueLen bounds the mailboxes queued (beyond it: the overflow list).
	queueLen = 4096
)

// New returns a pool whose mailboxes process at most throughput messages
// before they yield (protoactor's default is 300), with DefaultIdle and
// DefaultMax.
func New(throughput int) *Pool { return NewWith(throughput, DefaultIdle, DefaultMax) }

// NewWith returns a pool with its idle time and its bound of goroutines.
func NewWith(throughput int, idle time.Duration, max int) *Pool {
	p := &Pool{queue: make(chan func(), queueLen), throughput: throughput, idleFor: idle, max: int32(max), done: make(chan struct{})}
	p.wake = p.runOverflowed
	return p
}

// popOverflow takes the first overflowed mailbox (nil: none).
func (p *Pool) popOverflow() func() {
	if p.over.Load() == 0 {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.overflow) == 0 {
		return nil
	}
	fn := p.overflow[0]
	p.overflow[0] = nil
	p.overflow = p.overflow[1:]
	if len(p.overflow) == 0 {
		p.overflow = nil
	}
	p.over.Add(-1)
	return fn
}

// runOverflowed runs the first overflowed mailbox, if any.
func (p *Pool) runOverflowed() {
	if fn := p.popOverflow(); fn != nil {
		fn()
	}
}

// Close ends the pool's goroutines once they have run what is queued.
func (p *Pool) Close() {
	p.closeOnce.Do(func() {
		p.closed.Store(true)
		close(p.done)
	})
}

// drain runs what is queued on goroutines of their own.
func (p *Pool) drain() {
	for {
		select {
		case fn := <-p.queue:
			go fn()
		default:
			for fn := p.popOverflow(); fn != nil; fn = p.popOverflow() {
				go fn()
			}
			return
		}
	}
}

// Throughput is the messages a mailbox processes before it yields.
func (p *Pool) Throughput() int { return p.throughput }

// Running is the number of the pool's goroutines.
func (p *Pool) Running() int { return int(p.running.Load()) }

// Schedule runs fn on a goroutine of the pool.
func (p *Pool) Schedule(fn func()) {
	if p.closed.Load() {
		go fn()
		return
	}
	queued := false
	// While mailboxes wait in the overflow, later ones wait behind them:
	// the overflow is taken only once the queue is empty, and mailboxes
	// scheduled again as soon as they ran (messages arriving at the
	// pool's pace) would keep it from ever being empty (an overflowed
	// mailbox starved).
	if p.over.Load() == 0 {
		select {
		case p.queue <- fn:
			queued = true
		default: // the queue is full
		}
	}
	if !queued {
		p.mu.Lock()
		p.overflow = append(p.overflow, fn)
		p.over.Add(1)
		p.mu.Unlock()
		// The pool's goroutines take from the overflow when they find
		// the queue empty, before they wait; should every one be waiting
		// already (the queue emptied meanwhile), this wakes one.
		select {
		case p.queue <- p.wake:
		default:
		}
	}
	if p.closed.Load() { // closed meanwhile: its goroutines may be gone
		p.drain()
		return
	}
	if p.idle.Load() == 0 && p.reserve() {
		go p.work()
	}
}

// reserve counts one more goroutine, unless the pool has its bound.
func (p *Pool) reserve() bool {
	for {
		n := p.running.Load()
		if n >= p.max {
			return false
		}
		if p.running.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (p *Pool) work() {
	var t *time.Timer
	for {
		select {
		case fn := <-p.queue:
			fn()
			continue
		default:
		}
		if fn := p.popOverflow(); fn != nil {
			fn()
			continue
		}
		if t == nil {
			t = time.NewTimer(p.idleFor)
		} else {
			t.Reset(p.idleFor)
		}
		p.idle.Add(1)
		select {
		case fn := <-p.queue:
			p.idle.Add(-1)
			fn()
			continue
		case <-t.C:
		case <-p.done:
			p.idle.Add(-1)
			p.running.Add(-1)
			t.Stop()
			p.drain()
			return
		}
		p.idle.Add(-1)
		p.running.Add(-1)
		// A mailbox queued while this goroutine counted as idle started
		// no goroutine: take it unless another goroutine will.
		if (len(p.queue) == 0 && p.over.Load() == 0) || !p.reserve() {
			return
		}
	}
}
