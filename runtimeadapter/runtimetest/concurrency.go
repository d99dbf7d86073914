package runtimetest

import (
	"fmt"
	"sync"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// concurrencyCases: pod actors call the runtime at once, one per pod.
var concurrencyCases = []testCase{
	{"ParallelPods", func(e *env) {
		const pods = 4
		var wg sync.WaitGroup
		got := make([]string, pods)
		errs := make([]error, pods)
		for i := range pods {
			wg.Go(func() {
				spec := e.spec(e.pod(fmt.Sprintf("p%d", i)), "app", runtimeadapter.TypeApp, Workload{})
				id, err := e.Runtime.Create(e.ctx, spec)
				if err == nil {
					e.track(id)
					err = e.Runtime.Start(e.ctx, id)
				}
				got[i], errs[i] = id, err
			})
		}
		wg.Wait()
		seen := map[string]bool{}
		for i, err := range errs {
			if err != nil {
				e.t.Fatalf("pod %d: %v", i, err)
			}
			if seen[got[i]] {
				e.t.Fatalf("two pods got container %s", got[i])
			}
			seen[got[i]] = true
		}
		for i, id := range got {
			cs := e.list(runtimeadapter.ListOptions{PodUID: e.pod(fmt.Sprintf("p%d", i)).uid}).Containers
			if len(cs) != 1 || cs[0].ID != id || cs[0].State != runtimeadapter.StateRunning {
				e.t.Errorf("pod %d lists %+v, want its running container %s", i, cs, id)
			}
		}
		var lists sync.WaitGroup
		for range pods {
			lists.Go(func() {
				if res, err := e.Runtime.List(e.ctx, runtimeadapter.ListOptions{Node: e.Node, All: true}); err != nil || len(res.Containers) != pods {
					e.t.Errorf("concurrent List: %d containers, %v; want %d", len(res.Containers), err, pods)
				}
			})
		}
		lists.Wait()
	}},
}
