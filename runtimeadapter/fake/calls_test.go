package fake

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

func TestCallLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		rt := New(WithImages(image))
		s := spec("u1", "web")
		start := time.Now()
		id, _ := rt.Create(ctx, s)
		time.Sleep(time.Second)
		_ = rt.Start(ctx, id)
		_ = rt.Stop(ctx, id, 7*time.Second)
		_ = rt.Start(ctx, "missing")
		_, _ = rt.List(ctx, runtimeadapter.ListOptions{Node: node, PodUID: "u1", All: true})

		calls := rt.Calls()
		want := []Call{
			{Method: MethodCreate, Arg: s.Name, Time: start},
			{Method: MethodStart, Arg: id, Time: start.Add(time.Second)},
			{Method: MethodStop, Arg: id, Grace: 7 * time.Second, Time: start.Add(time.Second)},
			{Method: MethodStart, Arg: "missing", Time: start.Add(time.Second)},
			{Method: MethodList, Arg: "node=node-1 pod=u1 all=true", Time: start.Add(time.Second)},
		}
		if len(calls) != len(want) {
			t.Fatalf("%d calls logged, want %d: %+v", len(calls), len(want), calls)
		}
		for i, c := range calls {
			w := want[i]
			if c.Method != w.Method || c.Arg != w.Arg || c.Grace != w.Grace || !c.Time.Equal(w.Time) {
				t.Errorf("call %d = %+v, want %+v", i, c, w)
			}
			if (c.Err != nil) != (i == 3) {
				t.Errorf("call %d error %v", i, c.Err)
			}
		}
		wantErrIs(t, calls[3].Err, runtimeadapter.ErrNotFound)

		if n := rt.CallCount(MethodStart); n != 2 {
			t.Errorf("CallCount(Start) = %d, want 2", n)
		}
		rt.ResetCalls()
		if len(rt.Calls()) != 0 || rt.CallCount(MethodStart) != 0 {
			t.Error("ResetCalls left calls")
		}
	})
}

func TestCallLogRecordsRunningCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := New()
		rt.SetDelay(MethodEnsureImage, time.Minute)
		done := make(chan error)
		go func() { done <- rt.EnsureImage(context.Background(), "x") }()
		synctest.Wait()
		if calls := rt.Calls(); len(calls) != 1 || calls[0].Err != nil {
			t.Fatalf("running call not logged: %+v", calls)
		}
		err := <-done
		if calls := rt.Calls(); calls[0].Err != err {
			t.Fatalf("logged error %v, returned %v", calls[0].Err, err)
		}
	})
}
