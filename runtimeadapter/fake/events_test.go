package fake

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

type seen struct {
	kind runtimeadapter.EventKind
	id   string
}

// collect reads n events or fails.
func collect(t *testing.T, evs <-chan runtimeadapter.Event, n int) []seen {
	t.Helper()
	var out []seen
	for range n {
		select {
		case e, ok := <-evs:
			if !ok {
				t.Fatalf("stream closed after %d events: %v", len(out), out)
			}
			if e.Labels[runtimeadapter.LabelContainerName] == "" || e.Time.IsZero() {
				t.Errorf("event without labels or time: %+v", e)
			}
			out = append(out, seen{e.Kind, e.ContainerID})
		case <-time.After(time.Minute):
			t.Fatalf("only %d events: %v", len(out), out)
		}
	}
	return out
}

func TestEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := New(WithImages(image))
		rt.ScriptContainer("job", Behavior{ExitCode: 1, ExitAfter: time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		evs, errs := rt.Events(ctx, node)

		web := run(t, rt, spec("u1", "web"))
		run(t, rt, specOn("node-2", "u2", "web")) // other node: no events
		rt.AddContainer(runtimeadapter.Container{Name: "unlabelled"})
		job := run(t, rt, spec("u1", "job"))
		time.Sleep(time.Second) // job exits
		synctest.Wait()
		if err := rt.OOMKill(web); err != nil {
			t.Fatal(err)
		}
		if err := rt.Remove(context.Background(), web); err != nil {
			t.Fatal(err)
		}
		hog := run(t, rt, spec("u1", "hog"))
		if err := rt.RemoveExternally(hog); err != nil {
			t.Fatal(err)
		}

		got := collect(t, evs, 9)
		want := []seen{
			{runtimeadapter.EventStart, web},
			{runtimeadapter.EventStart, job},
			{runtimeadapter.EventDie, job},
			{runtimeadapter.EventOOM, web},
			{runtimeadapter.EventDie, web},
			{runtimeadapter.EventDestroy, web},
			{runtimeadapter.EventStart, hog},
			{runtimeadapter.EventDie, hog},
			{runtimeadapter.EventDestroy, hog},
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("event %d = %v, want %v", i, got[i], want[i])
			}
		}

		cancel()
		if _, ok := <-evs; ok {
			t.Fatal("event after the end")
		}
		wantErrIs(t, <-errs, context.Canceled)
	})
}

func TestEventsNotBlockedBySlowReader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := New(WithImages(image))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		evs, _ := rt.Events(ctx, node)
		var ids []string
		for i := range 50 {
			s := spec("u1", "web")
			s.Name += string(rune('a'+i%26)) + string(rune('a'+i/26))
			ids = append(ids, run(t, rt, s)) // nobody reads yet
		}
		got := collect(t, evs, 50)
		for i, e := range got {
			if e.id != ids[i] || e.kind != runtimeadapter.EventStart {
				t.Fatalf("event %d = %v", i, e)
			}
		}
	})
}

func TestBreakEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := New(WithImages(image))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		evs, errs := rt.Events(ctx, node)
		broken := errors.New("unexpected EOF")
		rt.BreakEvents(broken)
		if _, ok := <-evs; ok {
			t.Fatal("stream still open")
		}
		wantErrIs(t, <-errs, broken)

		// A new stream works.
		evs, _ = rt.Events(ctx, node)
		id := run(t, rt, spec("u1", "web"))
		if got := collect(t, evs, 1); got[0].id != id {
			t.Fatalf("got %v", got)
		}
		rt.BreakEvents(nil)
	})
}

func TestEventsEndOnClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := New()
		evs, errs := rt.Events(context.Background(), node)
		rt.Close()
		if _, ok := <-evs; ok {
			t.Fatal("stream still open")
		}
		wantErrIs(t, <-errs, runtimeadapter.ErrUnavailable)

		evs, errs = rt.Events(context.Background(), node)
		if _, ok := <-evs; ok {
			t.Fatal("stream on a closed runtime opened")
		}
		wantErrIs(t, <-errs, runtimeadapter.ErrUnavailable)
	})
}

// A silenced stream stays open and delivers nothing, undelivered events
// included; the next n streams opened are silent too, later ones flow.
// Silent streams still end as any other.
func TestSilenceEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := New(WithImages(image))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		old, oldErrs := rt.Events(ctx, node)
		run(t, rt, spec("u1", "queued")) // queued on old, not read yet
		rt.SilenceEvents(1)
		next, nextErrs := rt.Events(ctx, node) // silent too
		flowing, _ := rt.Events(ctx, node)     // flows
		id := run(t, rt, spec("u1", "web"))
		if got := collect(t, flowing, 1); got[0] != (seen{runtimeadapter.EventStart, id}) {
			t.Fatalf("the stream opened after the silent ones got %v", got)
		}
		synctest.Wait()
		for name, evs := range map[string]<-chan runtimeadapter.Event{"silenced": old, "opened silent": next} {
			select {
			case e, ok := <-evs:
				t.Fatalf("%s stream: %+v, %v; want it open and silent", name, e, ok)
			default:
			}
		}

		rt.SilenceEvents(-1)
		rt.ClearFaults() // streams opened from now on flow; silent ones stay silent
		again, _ := rt.Events(ctx, node)
		id = run(t, rt, spec("u1", "db"))
		if got := collect(t, again, 1); got[0] != (seen{runtimeadapter.EventStart, id}) {
			t.Fatalf("a stream opened after ClearFaults got %v", got)
		}
		synctest.Wait()
		select {
		case e := <-old:
			t.Fatalf("silenced stream spoke after ClearFaults: %+v", e)
		default:
		}

		broken := errors.New("unexpected EOF")
		rt.BreakEvents(broken)
		for _, evs := range []<-chan runtimeadapter.Event{old, next} {
			if _, ok := <-evs; ok {
				t.Fatal("a silent stream delivered an event when broken")
			}
		}
		wantErrIs(t, <-oldErrs, broken)
		wantErrIs(t, <-nextErrs, broken)
	})
}
