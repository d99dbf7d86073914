package dispatch

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

// Mailbox returns a protoactor mailbox producer for actors that are idle
// most of the time and get one message at a time (pod actors). It keeps
// protoactor's default mailbox's rules (system messages first; a
// suspended mailbox holds user messages until resumed; a panic in a
// message escalates as a failure to the actor's supervisor; at most the
// dispatcher's throughput of messages before it yields; the middlewares
// see every message posted and received) with less memory and fewer
// cache lines touched per message: one struct, one lock, the first
// pending messages held in the struct itself (no queue allocated, none
// kept while idle), and the function handed to the dispatcher made once,
// not once per activation.
func Mailbox(middlewares ...actor.MailboxMiddleware) actor.MailboxProducer {
	return func() actor.Mailbox {
		m := &mailbox{middlewares: &middlewares}
		m.process = m.processMessages
		return m
	}
}

const (
	idle int32 = iota
	running
)

// inlineLen is how many pending messages a mailbox holds without a
// queue of its own.
const inlineLen = 2

// ring is a FIFO of messages: in inline until it overflows, then in a
// slice twice as long each time; back to inline once empty.
type ring struct {
	buf    []any // nil: inline
	head   int
	n      int
	inline [inlineLen]any
}

func (r *ring) push(m any) {
	if r.buf == nil {
		r.buf = r.inline[:]
	}
	if r.n == len(r.buf) {
		grown := make([]any, 2*len(r.buf))
		for i := range r.n {
			grown[i] = r.buf[(r.head+i)%len(r.buf)]
		}
		clear(r.inline[:])
		r.buf, r.head = grown, 0
	}
	r.buf[(r.head+r.n)%len(r.buf)] = m
	r.n++
}

func (r *ring) pop() any {
	if r.n == 0 {
		return nil
	}
	m := r.buf[r.head]
	r.buf[r.head] = nil
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	if r.n == 0 {
		r.head = 0
		r.buf = nil // a grown queue is dropped once drained
	}
	return m
}

type mailbox struct {
	mu        sync.Mutex
	status    atomic.Int32 // idle or running (scheduled on the dispatcher)
	suspended atomic.Bool
	user      ring
	sys       []any // system messages (rare: lifecycle, supervision); nil when none

	invoker    actor.MessageInvoker
	dispatcher actor.Dispatcher
	process    func() // m.processMessages, made once
	// middlewares: the producer's, shared by all its mailboxes (a pointer:
	// the struct stays in the 160-B size class).
	middlewares *[]actor.MailboxMiddleware
}

func (m *mailbox) PostUserMessage(message any) {
	// protoactor's batches: each message of a batch is posted, then the
	// batch itself (as the default mailbox does).
	if b, ok := message.(actor.MessageBatch); ok {
		for _, msg := range b.GetMessages() {
			m.PostUserMessage(msg)
		}
	}
	if env, ok := message.(*actor.MessageEnvelope); ok {
		if b, ok := env.Message.(actor.MessageBatch); ok {
			for _, msg := range b.GetMessages() {
				m.PostUserMessage(msg)
			}
		}
	}
	for _, mw := range *m.middlewares {
		mw.MessagePosted(message)
	}
	m.mu.Lock()
	m.user.push(message)
	m.mu.Unlock()
	m.schedule()
}

func (m *mailbox) PostSystemMessage(message any) {
	for _, mw := range *m.middlewares {
		mw.MessagePosted(message)
	}
	m.mu.Lock()
	m.sys = append(m.sys, message)
	m.mu.Unlock()
	m.schedule()
}

func (m *mailbox) RegisterHandlers(invoker actor.MessageInvoker, dispatcher actor.Dispatcher) {
	m.invoker, m.dispatcher = invoker, dispatcher
}

func (m *mailbox) Start() {
	for _, mw := range *m.middlewares {
		mw.MailboxStarted()
	}
}

func (m *mailbox) UserMessageCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.user.n
}

func (m *mailbox) schedule() {
	if m.status.CompareAndSwap(idle, running) {
		m.dispatcher.Schedule(m.process)
	}
}

// pending reports whether a message waits that run would take.
func (m *mailbox) pending() (user int, any bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.user.n, len(m.sys) > 0 || (!m.suspended.Load() && m.user.n > 0)
}

func (m *mailbox) processMessages() {
	for {
		m.run()
		m.status.Store(idle)
		// Messages posted after run found the queues empty, whose posters
		// saw the mailbox running and scheduled nothing.
		user, more := m.pending()
		if more && m.status.CompareAndSwap(idle, running) {
			continue
		}
		if user == 0 && !m.suspended.Load() {
			for _, mw := range *m.middlewares {
				mw.MailboxEmpty()
			}
		}
		return
	}
}

// next pops the next message: a system message first; a user message
// unless suspended.
func (m *mailbox) next() (msg any, system bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.sys) > 0 {
		msg := m.sys[0]
		m.sys[0] = nil
		if m.sys = m.sys[1:]; len(m.sys) == 0 {
			m.sys = nil
		}
		return msg, true
	}
	if m.suspended.Load() {
		return nil, false
	}
	return m.user.pop(), false
}

func (m *mailbox) run() {
	var msg any
	defer func() {
		if r := recover(); r != nil {
			m.invoker.EscalateFailure(r, msg)
		}
	}()
	i, t := 0, m.dispatcher.Throughput()
	for {
		if i > t {
			i = 0
			runtime.Gosched()
		}
		i++
		var system bool
		msg, system = m.next()
		if msg == nil {
			return
		}
		if system {
			switch msg.(type) {
			case *actor.SuspendMailbox:
				m.suspended.Store(true)
			case *actor.ResumeMailbox:
				m.suspended.Store(false)
			default:
				m.invoker.InvokeSystemMessage(msg)
			}
		} else {
			m.invoker.InvokeUserMessage(msg)
		}
		for _, mw := range *m.middlewares {
			mw.MessageReceived(msg)
		}
	}
}
