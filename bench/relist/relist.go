package relist

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/actorlet/actorlet/internal/pleg"
	"github.com/actorlet/actorlet/internal/protocol"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// PerPod is the number of containers of every benchmark pod (the issue's
// "3 containers each"): a sandbox and two app containers.
const PerPod = 3

// Listing returns a listing of pods × PerPod running containers with the
// labels actorlet puts on them, in fresh memory (every call allocates new
// strings and label maps, as a runtime's List does). Container IDs are 64
// hex digits, as Docker's.
func Listing(pods int) runtimeadapter.ListResult {
	res := runtimeadapter.ListResult{ObservedAt: time.Now(), Containers: make([]runtimeadapter.Container, 0, pods*PerPod)}
	for p := range pods {
		uid := fmt.Sprintf("%08x-0000-4000-8000-%012x", p, p)
		for c := range PerPod {
			meta := runtimeadapter.Meta{
				Node:          "bench-node",
				PodUID:        uid,
				PodName:       "pod-" + strconv.Itoa(p),
				PodNamespace:  "default",
				ContainerName: "c" + strconv.Itoa(c),
				Type:          runtimeadapter.TypeApp,
				Hash:          "3f1a9c2e",
				GracePeriod:   30 * time.Second,
			}
			if c == 0 {
				meta.ContainerName, meta.Type = runtimeadapter.SandboxName, runtimeadapter.TypeSandbox
			}
			res.Containers = append(res.Containers, runtimeadapter.Container{
				ID:       fmt.Sprintf("%064x", p*PerPod+c+1),
				Name:     runtimeadapter.ContainerName(meta.ContainerName, meta.PodName, meta.PodNamespace, uid, 0),
				Image:    "registry.local/app:1",
				Labels:   meta.Labels(),
				State:    runtimeadapter.StateRunning,
				RawState: "running",
			})
		}
	}
	return res
}

// Flip changes, in place, every stride-th container of res, starting at
// the first app container, between running and exited, and returns the
// number flipped. Flip(res, 100) changes 1% of the containers, spread over
// different pods; Flip(res, len(res.Containers)) changes one.
func Flip(res runtimeadapter.ListResult, stride int) int {
	n := 0
	for i := 1; i < len(res.Containers); i += stride {
		c := &res.Containers[i]
		if c.State == runtimeadapter.StateRunning {
			c.State, c.RawState = runtimeadapter.StateExited, "exited"
		} else {
			c.State, c.RawState = runtimeadapter.StateRunning, "running"
		}
		n++
	}
	return n
}

// Impl is a relist implementation under test.
type Impl struct {
	Name string
	New  func() func(runtimeadapter.ListResult) []protocol.PodTransitions
}

// Impls are the two sides of every comparison: the baseline first.
var Impls = []Impl{
	{Name: "baseline", New: func() func(runtimeadapter.ListResult) []protocol.PodTransitions { return NewBaseline().Relist }},
	{Name: "actorlet", New: func() func(runtimeadapter.ListResult) []protocol.PodTransitions { return pleg.New().Relist }},
}

// Scenario is what changes between successive listings.
type Scenario struct {
	Name string
	// Stride: every Stride-th container flips between successive
	// listings; 0 for no change, -1 for exactly one container.
	Stride int
}

// Scenarios of the relist benchmark.
var Scenarios = []Scenario{
	{Name: "no change", Stride: 0},
	{Name: "1 changed", Stride: -1},
	{Name: "1% changed", Stride: 100},
}

// Sizes are the pod counts of the relist benchmark.
var Sizes = []int{100, 1000, 10000}

// Inputs holds the listings of one size. Every listing is in its own
// memory, so no relist compares a string with itself (a pointer-equal
// comparison would be unrealistically cheap).
type Inputs struct {
	Pods int
	// Prime is the first listing a relister sees (not timed).
	Prime runtimeadapter.ListResult
	// A and B alternate in the timed loop: for "no change" both equal
	// Prime's content; otherwise B differs from A by the scenario's
	// flips.
	A, B runtimeadapter.ListResult
	// Changed is how many containers differ between A and B.
	Changed int
}

// NewInputs builds the listings of one size and scenario.
func NewInputs(pods int, s Scenario) *Inputs {
	in := &Inputs{Pods: pods, Prime: Listing(pods), A: Listing(pods), B: Listing(pods)}
	switch {
	case s.Stride < 0:
		in.Changed = Flip(in.B, len(in.B.Containers))
	case s.Stride > 0:
		in.Changed = Flip(in.B, s.Stride)
	}
	return in
}

// Bench returns the benchmark of impl on in: after priming with Prime, each
// iteration relists B then A alternately (so each relist sees in.Changed
// changes), and checks the number of batches. Building the listing (the
// runtime's work) is not timed.
func Bench(impl Impl, in *Inputs) func(b *testing.B) {
	return func(b *testing.B) {
		relist := impl.New()
		relist(in.Prime)
		relist(in.B) // warm up buffers: measure the steady state
		relist(in.A)
		want := in.Changed // batches: every flipped container is in its own pod
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			l := in.B
			if i%2 == 1 {
				l = in.A
			}
			if got := relist(l); len(got) != want {
				b.Fatalf("%s: %d batches, want %d", impl.Name, len(got), want)
			}
			i++
		}
		b.ReportMetric(float64(in.Pods), "pods")
	}
}

// Result is one side of one case.
type Result struct {
	NsPerOp     float64
	AllocsPerOp int64
	BytesPerOp  int64
}

// Measure runs the benchmark of impl on in once with testing.Benchmark
// (-test.benchtime applies); ok is false if it failed.
func Measure(impl Impl, in *Inputs) (_ Result, ok bool) {
	r := testing.Benchmark(Bench(impl, in))
	if r.N == 0 {
		return Result{}, false
	}
	return Result{NsPerOp: float64(r.T.Nanoseconds()) / float64(r.N), AllocsPerOp: r.AllocsPerOp(), BytesPerOp: r.AllocedBytesPerOp()}, true
}
