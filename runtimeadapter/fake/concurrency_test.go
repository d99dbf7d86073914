package fake

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// TestMain fails the package if an Events stream's goroutine outlives its
// test.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestConcurrentUse hammers one Runtime from many goroutines; run with
// -race.
func TestConcurrentUse(t *testing.T) {
	rt := New(WithImages(image))
	rt.Script(image, Behavior{ExitAfter: time.Millisecond})
	rt.ScriptContainer("w3", Behavior{RunForever: true, IgnoreSIGTERM: true})
	rt.InjectError(MethodStart, runtimeadapter.ErrUnavailable, 5)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	evs, _ := rt.Events(ctx, node)
	go func() {
		for range evs {
		}
	}()

	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 30 {
				s := spec(fmt.Sprintf("u%d", i%5), fmt.Sprintf("w%d", w))
				s.Name += fmt.Sprint(i)
				id, err := rt.Create(ctx, s)
				if err != nil {
					t.Error(err)
					return
				}
				_ = rt.Start(ctx, id)
				_, _ = rt.List(ctx, runtimeadapter.ListOptions{Node: node, All: i%2 == 0})
				_ = rt.Stop(ctx, id, time.Millisecond)
				_ = rt.Kill(id, 137)
				_, _ = rt.Inspect(ctx, id)
				_ = rt.Containers()
				_ = rt.Calls()
				if i%3 == 0 {
					_ = rt.Remove(ctx, id)
				}
			}
		})
	}
	wg.Wait()
	if n := rt.CallCount(MethodCreate); n != 240 {
		t.Errorf("CallCount(Create) = %d, want 240", n)
	}
}
