package pleg

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// benchListing lists pods × perPod running containers with realistic labels.
func benchListing(pods, perPod int) runtimeadapter.ListResult {
	res := runtimeadapter.ListResult{ObservedAt: time.Now()}
	for p := range pods {
		uid := fmt.Sprintf("%08x-0000-4000-8000-%012x", p, p)
		for c := range perPod {
			meta := runtimeadapter.Meta{
				Node:          "node-1",
				PodUID:        uid,
				PodName:       "pod-" + strconv.Itoa(p),
				PodNamespace:  "default",
				ContainerName: "c" + strconv.Itoa(c),
				Type:          runtimeadapter.TypeApp,
				Hash:          "abcdef",
				GracePeriod:   30 * time.Second,
			}
			res.Containers = append(res.Containers, runtimeadapter.Container{
				ID:     fmt.Sprintf("%064x", p*perPod+c+1),
				Name:   runtimeadapter.ContainerName(meta.ContainerName, meta.PodName, meta.PodNamespace, uid, 0),
				Image:  "registry.local/app:1",
				Labels: meta.Labels(),
				State:  runtimeadapter.StateRunning,
			})
		}
	}
	return res
}

func BenchmarkRelistNoChange(b *testing.B) {
	for _, pods := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("pods=%d", pods), func(b *testing.B) {
			r := New()
			r.Relist(benchListing(pods, 3))
			// An equal listing in fresh memory, as a runtime would return.
			res := benchListing(pods, 3)
			r.Relist(res) // warm the reused buffers: measure the steady state
			b.ReportAllocs()
			for b.Loop() {
				if got := r.Relist(res); got != nil {
					b.Fatalf("unexpected transitions: %d", len(got))
				}
			}
		})
	}
}

// BenchmarkRelistOneChange flips one container each iteration among many
// unchanged ones: the steady state of a busy node.
func BenchmarkRelistOneChange(b *testing.B) {
	for _, pods := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("pods=%d", pods), func(b *testing.B) {
			res := benchListing(pods, 3)
			r := New()
			r.Relist(res)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				c := &res.Containers[i%len(res.Containers)]
				if c.State == runtimeadapter.StateRunning {
					c.State = runtimeadapter.StateExited
				} else {
					c.State = runtimeadapter.StateRunning
				}
				if got := r.Relist(res); len(got) != 1 {
					b.Fatalf("got %d batches, want 1", len(got))
				}
				i++
			}
		})
	}
}
