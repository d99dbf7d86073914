package metrics_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/actorlet/actorlet/internal/metrics"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// unwrapper is the method InstrumentRuntime's result has.
type unwrapper interface {
	Unwrap() runtimeadapter.Runtime
}

// opCalls returns how many op calls actorlet_runtime_operations_duration_seconds
// has observed (0 when the series does not exist yet).
func opCalls(t *testing.T, reg prometheus.Gatherer, op string) uint64 {
	t.Helper()
	s := series(t, reg, "actorlet_runtime_operations_duration_seconds", labels{"operation": op})
	if s == nil {
		return 0
	}
	return s.GetHistogram().GetSampleCount()
}

// opErrors returns actorlet_runtime_operations_errors_total{operation=op}.
func opErrors(t *testing.T, reg prometheus.Gatherer, op string) float64 {
	t.Helper()
	return value(t, reg, "actorlet_runtime_operations_errors_total", labels{"operation": op})
}

func TestObserveRuntimeOp(t *testing.T) {
	m, reg := newMetrics(t)
	m.ObserveRuntimeOp(metrics.OpCreate, 30*time.Millisecond, nil)
	m.ObserveRuntimeOp(metrics.OpCreate, 10*time.Millisecond, errors.New("boom"))
	if n, sum := histogram(t, reg, "actorlet_runtime_operations_duration_seconds", labels{"operation": "create"}); n != 2 || sum < 0.039 || sum > 0.041 {
		t.Errorf("create durations: %d samples, sum %v; want 2, 0.04", n, sum)
	}
	// Every operation's error counter exists from the start.
	err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP actorlet_runtime_operations_errors_total Number of container runtime calls that returned an error, by operation.
# TYPE actorlet_runtime_operations_errors_total counter
actorlet_runtime_operations_errors_total{operation="create"} 1
actorlet_runtime_operations_errors_total{operation="ensure_image"} 0
actorlet_runtime_operations_errors_total{operation="inspect"} 0
actorlet_runtime_operations_errors_total{operation="list"} 0
actorlet_runtime_operations_errors_total{operation="logs"} 0
actorlet_runtime_operations_errors_total{operation="remove"} 0
actorlet_runtime_operations_errors_total{operation="start"} 0
actorlet_runtime_operations_errors_total{operation="stop"} 0
`), "actorlet_runtime_operations_errors_total")
	if err != nil {
		t.Error(err)
	}
}

// testSpec is a managed container of node "n1" running image "busybox".
func testSpec(name string) runtimeadapter.ContainerSpec {
	meta := runtimeadapter.Meta{
		Node: "n1", PodUID: "uid-1", PodName: "web", PodNamespace: "default",
		ContainerName: name, Type: runtimeadapter.TypeApp,
	}
	return runtimeadapter.ContainerSpec{
		Name:   runtimeadapter.ContainerName(name, "web", "default", "uid-1", 0),
		Image:  "busybox",
		Labels: meta.Labels(),
	}
}

func TestInstrumentRuntimeTimesEveryOperation(t *testing.T) {
	m, reg := newMetrics(t)
	inner := fake.New(fake.AutoImages(true))
	defer inner.Close()
	rt := metrics.InstrumentRuntime(inner, m)
	ctx := context.Background()

	if err := rt.EnsureImage(ctx, "busybox"); err != nil {
		t.Fatal(err)
	}
	id, err := rt.Create(ctx, testSpec("app"))
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	if c, err := rt.Inspect(ctx, id); err != nil || c.ID != id || c.State != runtimeadapter.StateRunning {
		t.Fatalf("inspect through the decorator: %+v, %v", c, err)
	}
	if res, err := rt.List(ctx, runtimeadapter.ListOptions{Node: "n1", All: true}); err != nil || len(res.Containers) != 1 {
		t.Fatalf("list through the decorator: %+v, %v", res, err)
	}
	if err := rt.Stop(ctx, id, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := rt.Remove(ctx, id); err != nil {
		t.Fatal(err)
	}

	for _, op := range []string{"ensure_image", "create", "start", "inspect", "list", "stop", "remove"} {
		if n := opCalls(t, reg, op); n != 1 {
			t.Errorf("%s: %d calls timed, want 1", op, n)
		}
		if e := opErrors(t, reg, op); e != 0 {
			t.Errorf("%s: %v errors, want 0", op, e)
		}
	}
	for _, method := range []string{fake.MethodEnsureImage, fake.MethodCreate, fake.MethodStart,
		fake.MethodInspect, fake.MethodList, fake.MethodStop, fake.MethodRemove} {
		if n := inner.CallCount(method); n != 1 {
			t.Errorf("inner %s called %d times, want 1", method, n)
		}
	}
}

func TestInstrumentRuntimeCountsErrorsAndPassesThemThrough(t *testing.T) {
	m, reg := newMetrics(t)
	inner := fake.New(fake.AutoImages(true))
	defer inner.Close()
	rt := metrics.InstrumentRuntime(inner, m)
	ctx := context.Background()

	if err := rt.EnsureImage(ctx, "busybox"); err != nil {
		t.Fatal(err)
	}
	id, err := rt.Create(ctx, testSpec("app"))
	if err != nil {
		t.Fatal(err)
	}
	inner.InjectError(fake.MethodStart, runtimeadapter.ErrUnavailable, 1)
	if err := rt.Start(ctx, id); !errors.Is(err, runtimeadapter.ErrUnavailable) {
		t.Fatalf("start with an injected error: %v, want ErrUnavailable", err)
	}
	if err := rt.Start(ctx, id); err != nil {
		t.Fatalf("second start: %v", err)
	}
	if err := rt.Remove(ctx, "no-such-container"); !errors.Is(err, runtimeadapter.ErrNotFound) {
		t.Fatalf("remove of a missing container: %v, want ErrNotFound", err)
	}
	_, err = rt.Create(ctx, testSpec("app"))
	var conflict *runtimeadapter.NameConflictError
	if !errors.As(err, &conflict) || conflict.ID != id {
		t.Fatalf("create of a taken name: %v, want a *NameConflictError carrying %s", err, id)
	}

	if n, e := opCalls(t, reg, "start"), opErrors(t, reg, "start"); n != 2 || e != 1 {
		t.Errorf("start: %d calls, %v errors; want 2, 1", n, e)
	}
	if n, e := opCalls(t, reg, "remove"), opErrors(t, reg, "remove"); n != 1 || e != 1 {
		t.Errorf("remove: %d calls, %v errors; want 1, 1", n, e)
	}
	if n, e := opCalls(t, reg, "create"), opErrors(t, reg, "create"); n != 2 || e != 1 {
		t.Errorf("create: %d calls, %v errors; want 2, 1", n, e)
	}
	if e := opErrors(t, reg, "list"); e != 0 {
		t.Errorf("list: %v errors, want 0", e)
	}
}

func TestInstrumentRuntimeTimesTheCall(t *testing.T) {
	m, reg := newMetrics(t)
	inner := fake.New(fake.AutoImages(true))
	defer inner.Close()
	inner.SetDelay(fake.MethodList, 50*time.Millisecond)
	rt := metrics.InstrumentRuntime(inner, m)
	if _, err := rt.List(context.Background(), runtimeadapter.ListOptions{Node: "n1"}); err != nil {
		t.Fatal(err)
	}
	if n, sum := histogram(t, reg, "actorlet_runtime_operations_duration_seconds", labels{"operation": "list"}); n != 1 || sum < 0.05 {
		t.Errorf("list: %d samples, sum %v s; want 1 taking at least the 50 ms delay", n, sum)
	}
}

func TestInstrumentRuntimePassesEventsThrough(t *testing.T) {
	m, _ := newMetrics(t)
	inner := fake.New(fake.AutoImages(true))
	defer inner.Close()
	rt := metrics.InstrumentRuntime(inner, m)
	es, ok := rt.(runtimeadapter.EventSource)
	if !ok {
		t.Fatal("instrumented fake is not an EventSource")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, _ := es.Events(ctx, "n1")

	if err := rt.EnsureImage(ctx, "busybox"); err != nil {
		t.Fatal(err)
	}
	id, err := rt.Create(ctx, testSpec("app"))
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-events:
		if ev.Kind != runtimeadapter.EventStart || ev.ContainerID != id {
			t.Errorf("event %+v, want start of %s", ev, id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event through the decorator")
	}
}

// Stubs with each combination of the optional interfaces.
type (
	plainRuntime  struct{ runtimeadapter.Runtime }
	eventsRuntime struct {
		runtimeadapter.Runtime
		runtimeadapter.EventSource
	}
	logsRuntime struct {
		runtimeadapter.Runtime
		runtimeadapter.LogSource
	}
	eventsLogsRuntime struct {
		runtimeadapter.Runtime
		runtimeadapter.EventSource
		runtimeadapter.LogSource
	}
)

// stubLogs is a LogSource: "missing" is not found, anything else logs "hello\n".
type stubLogs struct{}

func (stubLogs) Logs(_ context.Context, id string, _ runtimeadapter.LogOptions) (io.ReadCloser, error) {
	if id == "missing" {
		return nil, runtimeadapter.ErrNotFound
	}
	return io.NopCloser(strings.NewReader("hello\n")), nil
}

func TestInstrumentRuntimePreservesOptionalInterfaces(t *testing.T) {
	inner := fake.New(fake.AutoImages(true))
	defer inner.Close()
	cases := []struct {
		name               string
		rt                 runtimeadapter.Runtime
		hasEvents, hasLogs bool
	}{
		{"neither", plainRuntime{inner}, false, false},
		{"events", eventsRuntime{inner, inner}, true, false},
		{"logs", logsRuntime{inner, stubLogs{}}, false, true},
		{"events and logs", eventsLogsRuntime{inner, inner, stubLogs{}}, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, reg := newMetrics(t)
			rt := metrics.InstrumentRuntime(tc.rt, m)
			if _, ok := rt.(runtimeadapter.EventSource); ok != tc.hasEvents {
				t.Errorf("EventSource: %v, want %v", ok, tc.hasEvents)
			}
			ls, ok := rt.(runtimeadapter.LogSource)
			if ok != tc.hasLogs {
				t.Errorf("LogSource: %v, want %v", ok, tc.hasLogs)
			}
			u, isWrapper := rt.(unwrapper)
			if !isWrapper || u.Unwrap() != tc.rt {
				t.Errorf("Unwrap: %v, want the inner runtime", isWrapper)
			}
			if _, err := rt.List(context.Background(), runtimeadapter.ListOptions{Node: "n1"}); err != nil {
				t.Fatal(err)
			}
			if n := opCalls(t, reg, "list"); n != 1 {
				t.Errorf("list: %d calls timed, want 1", n)
			}
			if !ok {
				return
			}
			rc, err := ls.Logs(context.Background(), "c1", runtimeadapter.LogOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := io.ReadAll(rc); string(b) != "hello\n" {
				t.Errorf("logs through the decorator: %q", b)
			}
			rc.Close()
			if _, err := ls.Logs(context.Background(), "missing", runtimeadapter.LogOptions{}); !errors.Is(err, runtimeadapter.ErrNotFound) {
				t.Errorf("logs of a missing container: %v, want ErrNotFound", err)
			}
			if n, e := opCalls(t, reg, "logs"), opErrors(t, reg, "logs"); n != 2 || e != 1 {
				t.Errorf("logs: %d calls, %v errors; want 2, 1", n, e)
			}
		})
	}
}

func TestInstrumentRuntimeMatchesTheFakesInterfaces(t *testing.T) {
	m, _ := newMetrics(t)
	inner := fake.New()
	defer inner.Close()
	rt := metrics.InstrumentRuntime(inner, m)
	var in, out runtimeadapter.Runtime = inner, rt
	_, innerEvents := in.(runtimeadapter.EventSource)
	_, outerEvents := out.(runtimeadapter.EventSource)
	_, innerLogs := in.(runtimeadapter.LogSource)
	_, outerLogs := out.(runtimeadapter.LogSource)
	if innerEvents != outerEvents || innerLogs != outerLogs {
		t.Errorf("fake: EventSource %v LogSource %v; instrumented: %v %v", innerEvents, innerLogs, outerEvents, outerLogs)
	}
}

func TestInstrumentRuntimeWithoutMetricsReturnsTheRuntime(t *testing.T) {
	inner := fake.New()
	defer inner.Close()
	if rt := metrics.InstrumentRuntime(inner, nil); rt != runtimeadapter.Runtime(inner) {
		t.Errorf("InstrumentRuntime(rt, nil) = %T, want rt itself", rt)
	}
	m, _ := newMetrics(t)
	if rt := metrics.InstrumentRuntime(nil, m); rt != nil {
		t.Errorf("InstrumentRuntime(nil, m) = %T, want nil", rt)
	}
}
