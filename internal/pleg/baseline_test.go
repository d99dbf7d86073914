package pleg_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/actorlet/actorlet/bench/relist"
	"github.com/actorlet/actorlet/internal/pleg"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// The baseline of the relist benchmark (bench/relist.Baseline, the
// kubelet's map-rebuilding relist) must produce exactly the Relister's
// batches, or the comparison would not be of the same job.
func TestBaselineMatchesRelister(t *testing.T) {
	states := []runtimeadapter.State{runtimeadapter.StateRunning, runtimeadapter.StateRunning, runtimeadapter.StateExited, runtimeadapter.StateUnknown}
	for seed := range uint64(100) {
		rng := rand.New(rand.NewPCG(seed, 7))
		r, b := pleg.New(), relist.NewBaseline()
		pool := make([]runtimeadapter.Container, 30)
		for i := range pool {
			uid := fmt.Sprintf("pod%d", rng.IntN(5))
			pool[i] = runtimeadapter.Container{
				ID: fmt.Sprintf("id%02d", i), State: states[rng.IntN(len(states))],
				Labels: map[string]string{runtimeadapter.LabelPodUID: uid, runtimeadapter.LabelContainerName: fmt.Sprintf("c%d", i%3)},
			}
		}
		present := make([]bool, len(pool))
		for step := range 25 {
			for i := range pool {
				switch rng.IntN(12) {
				case 0:
					present[i] = !present[i]
				case 1:
					pool[i].State = states[rng.IntN(len(states))]
				}
			}
			var cs []runtimeadapter.Container
			for i, c := range pool {
				if present[i] {
					cs = append(cs, c)
				}
			}
			if rng.IntN(4) == 0 {
				rng.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
			}
			if rng.IntN(5) == 0 { // entries both ignore
				cs = append(cs, runtimeadapter.Container{ID: "stray", State: runtimeadapter.StateRunning}, runtimeadapter.Container{})
			}
			l := runtimeadapter.ListResult{Containers: cs, ObservedAt: time.Unix(int64(step), 0)}
			got, want := r.Relist(l), b.Relist(l)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d step %d:\n relister %+v\n baseline %+v", seed, step, got, want)
			}
		}
	}
}

// On the benchmark's own inputs both sides report the same batches.
func TestBaselineMatchesRelisterOnBenchInputs(t *testing.T) {
	for _, s := range relist.Scenarios {
		in := relist.NewInputs(200, s)
		r, b := pleg.New(), relist.NewBaseline()
		for i, l := range []runtimeadapter.ListResult{in.Prime, in.B, in.A, in.B} {
			got, want := r.Relist(l), b.Relist(l)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, listing %d: relister and baseline differ", s.Name, i)
			}
			if i > 0 && len(got) != in.Changed {
				t.Fatalf("%s, listing %d: %d batches, want %d", s.Name, i, len(got), in.Changed)
			}
		}
	}
}

// BenchmarkRelistVsBaseline runs both sides on the same listings:
//
//	go test -run '^$' -bench RelistVsBaseline ./internal/pleg/
//
// (bench/cmd/actorlet-bench -only relist prints them as a table with the
// ratios.)
func BenchmarkRelistVsBaseline(b *testing.B) {
	for _, s := range relist.Scenarios {
		for _, pods := range relist.Sizes {
			in := relist.NewInputs(pods, s)
			for _, impl := range relist.Impls {
				b.Run(fmt.Sprintf("%s/%s/pods=%d", impl.Name, s.Name, pods), relist.Bench(impl, in))
			}
		}
	}
}
