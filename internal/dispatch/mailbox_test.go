package dispatch

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/asynkron/protoactor-go/actor"
)

// counter is a mailbox middleware counting what it sees.
type counter struct{ posted, received, empty, started atomic.Int64 }

func (c *counter) MailboxStarted()     { c.started.Add(1) }
func (c *counter) MessagePosted(any)   { c.posted.Add(1) }
func (c *counter) MessageReceived(any) { c.received.Add(1) }
func (c *counter) MailboxEmpty()       { c.empty.Add(1) }
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// The ring keeps FIFO order across growing, wrapping and going back to
// its inline slots.
func TestRingOrder(t *testing.T) {
	var r ring
	next, want := 0, 0
	for round := range 50 {
		for range round % 9 { // 0..8 at a time: inline, grown, wrapped
			r.push(next)
			next++
		}
		for range round % 5 {
			if m := r.pop(); m != nil {
				if m.(int) != want {
					t.Fatalf("popped %v, want %d", m, want)
				}
				want++
			}
		}
	}
	for m := r.pop(); m != nil; m = r.pop() {
		if m.(int) != want {
			t.Fatalf("popped %v, want %d", m, want)
		}
		want++
	}
	if want != next || r.buf != nil {
		t.Fatalf("popped %d of %d; buffer kept after draining: %v", want, next, r.buf != nil)
	}
}

// Many actors on one pool, each sent numbered messages by several
// senders at once: every actor gets every message, each sender's in the
// order sent; the middlewares see each one posted and received.
func TestMailboxOrderPerActor(t *testing.T) {
	sys := actor.NewActorSystem()
	pool := NewWith(300, time.Second, 4)
	defer pool.Close()
	const actors, senders, each = 50, 4, 500
	var mw counter
	type got struct {
		mu   sync.Mutex
		last [senders]int
		n    int
		bad  string
	}
	gots := make([]*got, actors)
	pids := make([]*actor.PID, actors)
	for i := range actors {
		g := &got{last: [senders]int{-1, -1, -1, -1}}
		gots[i] = g
		pids[i] = sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
			if m, ok := c.Message().([2]int); ok {
				g.mu.Lock()
				if m[1] != g.last[m[0]]+1 && g.bad == "" {
					g.bad = fmt.Sprintf("sender %d: message %d after %d", m[0], m[1], g.last[m[0]])
				}
				g.last[m[0]] = m[1]
				g.n++
				g.mu.Unlock()
			}
		}, actor.WithDispatcher(pool), actor.WithMailbox(Mailbox(&mw))))
	}
	var wg sync.WaitGroup
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				for _, pid := range pids {
					sys.Root.Send(pid, [2]int{s, i})
				}
			}
		}()
	}
	wg.Wait()
	waitUntil(t, "every message received", func() bool {
		for _, g := range gots {
			g.mu.Lock()
			n := g.n
			g.mu.Unlock()
			if n != senders*each {
				return false
			}
		}
		return true
	})
	for i, g := range gots {
		if g.bad != "" {
			t.Errorf("actor %d: %s", i, g.bad)
		}
	}
	// Started is a system message each actor got too (counted by both).
	if p, r := mw.posted.Load(), mw.received.Load(); p != r || p < actors*senders*each {
		t.Errorf("middleware: %d posted, %d received, want equal and ≥ %d", p, r, actors*senders*each)
	}
	if mw.started.Load() != actors || mw.empty.Load() == 0 {
		t.Errorf("middleware: %d started (want %d), %d empty (want some)", mw.started.Load(), actors, mw.empty.Load())
	}
	for _, pid := range pids {
		if err := sys.Root.StopFuture(pid).Wait(); err != nil {
			t.Fatal(err)
		}
	}
}

// A panic in one actor on the pool goes to its supervisor, which restarts
// it (its messages after the panic are processed, by the new instance);
// an actor beside it on the same pool never notices.
func TestMailboxPanicIsSupervisedAndIsolated(t *testing.T) {
	sys := actor.NewActorSystem()
	pool := NewWith(300, time.Second, 2)
	defer pool.Close()
	var restarts, crasherGot, otherGot atomic.Int64
	props := func(crash bool) *actor.Props {
		return actor.PropsFromFunc(func(c actor.Context) {
			switch m := c.Message().(type) {
			case *actor.Restarting:
				restarts.Add(1)
			case int:
				if crash && m%10 == 0 {
					panic(fmt.Sprintf("message %d", m))
				}
				if crash {
					crasherGot.Add(1)
				} else {
					otherGot.Add(1)
				}
			}
		}, actor.WithDispatcher(pool), actor.WithMailbox(Mailbox()))
	}
	var parent *actor.PID
	parentGot := make(chan [2]*actor.PID, 1)
	// A parent with a restarting strategy (up to 100 restarts a minute).
	parent = sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			parentGot <- [2]*actor.PID{c.Spawn(props(true)), c.Spawn(props(false))}
		}
	}, actor.WithSupervisor(actor.NewOneForOneStrategy(100, time.Minute, actor.DefaultDecider))))
	kids := <-parentGot
	// Messages 10, 20, …, 100 panic; 101–105, after the last restart,
	// show it done.
	for i := 1; i <= 105; i++ {
		sys.Root.Send(kids[0], i)
		sys.Root.Send(kids[1], i)
	}
	waitUntil(t, "both actors' messages processed", func() bool {
		return crasherGot.Load() == 95 && otherGot.Load() == 105
	})
	if n := restarts.Load(); n != 10 {
		t.Errorf("%d restarts, want 10 (one per panic)", n)
	}
	if err := sys.Root.StopFuture(parent).Wait(); err != nil {
		t.Fatal(err)
	}
}

// A suspended mailbox keeps its user messages until resumed, while system
// messages still run; a panic's restart uses exactly this.
func TestMailboxSuspendHoldsUserMessages(t *testing.T) {
	pool := NewWith(300, time.Second, 2)
	defer pool.Close()
	inv := &recorder{}
	m := Mailbox()().(*mailbox)
	m.RegisterHandlers(inv, pool)
	m.PostSystemMessage(&actor.SuspendMailbox{})
	m.PostUserMessage("u1")
	m.PostSystemMessage("s1")
	waitUntil(t, "the system message", func() bool { return inv.seen() == "s1" })
	if n := m.UserMessageCount(); n != 1 {
		t.Fatalf("%d user messages pending while suspended, want 1", n)
	}
	m.PostSystemMessage(&actor.ResumeMailbox{})
	waitUntil(t, "the user message after resume", func() bool { return inv.seen() == "s1 u1" })
}

// recorder is a MessageInvoker that records what it gets.
type recorder struct {
	mu  sync.Mutex
	got string
}

func (r *recorder) add(m any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.got != "" {
		r.got += " "
	}
	r.got += fmt.Sprint(m)
}
func (r *recorder) seen() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got
}
func (r *recorder) InvokeSystemMessage(m any) { r.add(m) }
func (r *recorder) InvokeUserMessage(m any)   { r.add(m) }
func (r *recorder) EscalateFailure(any, any)  {}

// An idle mailbox with one message at a time allocates nothing per
// message (the pod actor's case: one PLEG batch, then idle).
func TestMailboxOneMessageAllocatesNothing(t *testing.T) {
	inv := &countInvoker{}
	m := Mailbox()().(*mailbox)
	m.RegisterHandlers(inv, inline{})
	msg := any(&struct{ x int }{})
	allocs := testing.AllocsPerRun(1000, func() { m.PostUserMessage(msg) })
	if allocs != 0 || inv.n.Load() != 1001 {
		t.Errorf("%.1f allocations per message (want 0); %d of 1001 processed", allocs, inv.n.Load())
	}
}

// inline is a dispatcher that runs the mailbox at once, on the caller.
type inline struct{}

func (inline) Schedule(fn func()) { fn() }
func (inline) Throughput() int    { return 300 }

type countInvoker struct{ n atomic.Int64 }

func (c *countInvoker) InvokeSystemMessage(any)  {}
func (c *countInvoker) InvokeUserMessage(any)    { c.n.Add(1) }
func (c *countInvoker) EscalateFailure(any, any) {}

// A mailbox is one 160-B allocation per actor (a field that moves it to
// the next size class costs every pod of a node 16 B more).
func TestMailboxSize(t *testing.T) {
	if n := unsafe.Sizeof(mailbox{}); n > 160 {
		t.Errorf("mailbox is %d B, over its 160-B size class", n)
	}
}
