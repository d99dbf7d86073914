package dispatch

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// Every function scheduled runs once, from many schedulers at once.
func TestEveryFunctionRunsOnce(t *testing.T) {
	p := New(300)
	defer p.Close()
	const schedulers, each = 8, 2000
	var ran [schedulers * each]atomic.Int32
	var wg sync.WaitGroup
	wg.Add(schedulers * each)
	for s := range schedulers {
		go func() {
			for i := range each {
				p.Schedule(func() { ran[s*each+i].Add(1); wg.Done() })
			}
		}()
	}
	wg.Wait()
	for i := range ran {
		if n := ran[i].Load(); n != 1 {
			t.Fatalf("function %d ran %d times", i, n)
		}
	}
	if n := p.Running(); n > DefaultMax {
		t.Errorf("%d goroutines, bound %d", n, DefaultMax)
	}
}

// Mailboxes scheduled one after the other run on one goroutine, which
// ends once idle for the pool's idle time.
func TestGoroutinesAreReusedThenEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewWith(300, time.Second, 8)
		for i := range 100 {
			done := make(chan struct{})
			p.Schedule(func() { close(done) })
			<-done
			synctest.Wait() // the goroutine waits for the queue again
			if n := p.Running(); n != 1 {
				t.Fatalf("after %d mailboxes: %d goroutines, want 1", i+1, n)
			}
		}
		time.Sleep(999 * time.Millisecond)
		synctest.Wait()
		if n := p.Running(); n != 1 {
			t.Fatalf("%d goroutines before the idle time, want 1", n)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if n := p.Running(); n != 0 {
			t.Fatalf("%d goroutines after the idle time, want 0", n)
		}
	})
}

// A mailbox that blocks holds one goroutine: the others go on; with every
// goroutine of the pool held, mailboxes wait in the queue, and run once
// one is free.
func TestBlockedMailboxHoldsOneGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewWith(300, time.Second, 2)
		defer p.Close()
		release := make(chan struct{})
		p.Schedule(func() { <-release })
		ran := make(chan int, 10)
		p.Schedule(func() { ran <- 1 })
		synctest.Wait()
		if len(ran) != 1 {
			t.Fatal("a mailbox waited behind a blocked one with a goroutine free")
		}
		p.Schedule(func() { <-release })
		synctest.Wait()
		p.Schedule(func() { ran <- 2 })
		synctest.Wait()
		if len(ran) != 1 || p.Running() != 2 {
			t.Fatalf("both goroutines held: %d ran, %d goroutines (bound 2)", len(ran), p.Running())
		}
		close(release)
		synctest.Wait()
		if len(ran) != 2 {
			t.Fatal("the queued mailbox did not run once a goroutine was free")
		}
	})
}

// A full queue never blocks Schedule: the mailboxes beyond it wait in the
// overflow list, as those in the queue do, for the pool's goroutines (no
// goroutine of their own: a burst of 10,000 made as many), in order, and
// the list is not kept once drained.
func TestFullQueueNeverBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewWith(300, time.Second, 1)
		defer p.Close()
		release := make(chan struct{})
		p.Schedule(func() { <-release })
		synctest.Wait()
		var ran atomic.Int32
		var order []int
		for i := range queueLen + 5 {
			p.Schedule(func() {
				ran.Add(1)
				if i >= queueLen {
					order = append(order, i-queueLen) // one goroutine: no race
				}
			})
		}
		synctest.Wait()
		if n := ran.Load(); n != 0 {
			t.Fatalf("%d mailboxes ran while the pool's one goroutine was held", n)
		}
		if p.Running() != 1 {
			t.Fatalf("%d goroutines, want the pool's bound, 1", p.Running())
		}
		close(release)
		synctest.Wait()
		if n := ran.Load(); n != queueLen+5 {
			t.Fatalf("%d of %d mailboxes ran", n, queueLen+5)
		}
		if !slices.Equal(order, []int{0, 1, 2, 3, 4}) {
			t.Errorf("overflowed mailboxes ran in order %v", order)
		}
		if p.overflow != nil || p.over.Load() != 0 {
			t.Errorf("overflow kept after draining: %d entries, cap %d", p.over.Load(), cap(p.overflow))
		}
	})
}

// Mailboxes overflowed while every goroutine of the pool had just found
// the queue empty still run: the wake-up queued with them takes them.
func TestOverflowRunsWithGoroutinesIdle(t *testing.T) {
	for range 200 {
		p := NewWith(300, time.Hour, 2)
		var ran atomic.Int32
		const n = queueLen * 3
		for range n {
			p.Schedule(func() { ran.Add(1) })
		}
		deadline := time.Now().Add(10 * time.Second)
		for ran.Load() != n {
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d mailboxes ran", ran.Load(), n)
			}
			time.Sleep(time.Millisecond)
		}
		p.Close()
	}
}

// A goroutine that reaches its idle time while a mailbox is queued takes
// it (no mailbox is left in the queue with no goroutine to run it).
func TestNoMailboxLeftBehind(t *testing.T) {
	p := NewWith(300, time.Microsecond, 4)
	defer p.Close()
	for range 20000 {
		done := make(chan struct{})
		p.Schedule(func() { close(done) })
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("a scheduled mailbox did not run within 10 s")
		}
	}
}

// Close ends the pool's goroutines, after what was queued ran; later
// mailboxes still run.
func TestClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewWith(300, time.Hour, 2)
		release := make(chan struct{})
		var ran atomic.Int32
		p.Schedule(func() { <-release })
		p.Schedule(func() { <-release })
		synctest.Wait()
		p.Schedule(func() { ran.Add(1) }) // queued: both goroutines are held
		p.Close()
		close(release)
		synctest.Wait()
		if n := p.Running(); n != 0 || ran.Load() != 1 {
			t.Fatalf("after Close: %d goroutines, %d queued mailboxes ran (want 0, 1)", n, ran.Load())
		}
		done := make(chan struct{})
		p.Schedule(func() { close(done) })
		<-done
	})
}

// An overflowed mailbox is not starved by mailboxes scheduled after it:
// mailboxes scheduled again as soon as they ran (a message posted to each
// while it runs: actors that message each other, or messages arriving at
// the pool's pace) would otherwise keep the queue from ever being empty,
// which is when the overflow was taken.
func TestOverflowNotStarvedByRescheduling(t *testing.T) {
	p := NewWith(300, time.Second, 1)
	defer p.Close()
	release := make(chan struct{})
	held := make(chan struct{})
	p.Schedule(func() { close(held); <-release })
	<-held
	var stop atomic.Bool
	var spins atomic.Int64
	var spin func()
	spin = func() {
		if spins.Add(1); !stop.Load() {
			p.Schedule(spin) // a message came while it ran: scheduled again
		}
	}
	defer stop.Store(true)
	for range queueLen {
		p.Schedule(spin)
	}
	ran := make(chan struct{})
	p.Schedule(func() { close(ran) }) // the queue is full: overflowed
	close(release)
	// Each busy mailbox runs about once before it; allow 20 times.
	deadline := time.Now().Add(20 * time.Second)
	for spins.Load() < 20*queueLen && time.Now().Before(deadline) {
		select {
		case <-ran:
			return
		case <-time.After(time.Millisecond):
		}
	}
	select {
	case <-ran:
	default:
		t.Fatalf("overflowed mailbox did not run while busy mailboxes ran %d times", spins.Load())
	}
}
