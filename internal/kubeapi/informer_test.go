package kubeapi

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// A client-go informer on pods sees every state of a churned pod, in order,
// across watches the server drops: it resumes from its last
// resourceVersion, which the store still has. (With client-go's
// WatchListClient, a resumed watch-list starts from a fresh snapshot
// instead, as against the API server, so intermediate states may be
// folded: the test uses the list-then-watch protocol.)
func TestInformerSeesEveryChangeAcrossDroppedWatches(t *testing.T) {
	t.Setenv("KUBE_FEATURE_WatchListClient", "false")
	fb := &fakeBackend{}
	web := runningPod("default", "web", nil)
	fb.setPods(web)
	srv, h := serve(t, fb)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	factory := informers.NewSharedInformerFactory(cs, 0)
	inf := factory.Core().V1().Pods().Informer()
	var mu sync.Mutex
	var seen []string
	record := func(p any) {
		if pod, ok := p.(*v1.Pod); ok {
			mu.Lock()
			seen = append(seen, fmt.Sprint(pod.Status.ContainerStatuses[0].RestartCount))
			mu.Unlock()
		}
	}
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    record,
		UpdateFunc: func(_, p any) { record(p) },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); factory.Shutdown() }()
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	seenUpTo := func(n int32) bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) > 0 && seen[len(seen)-1] == fmt.Sprint(n)
	}
	want := []string{"0"}
	for i := int32(1); i <= 20; i++ {
		before := h.store.version()
		fb.setPods(crashing(web, i, t0))
		deadline := time.Now().Add(5 * time.Second)
		for h.store.version() == before { // each state recorded before the next
			if time.Now().After(deadline) {
				t.Fatalf("state %d not recorded", i)
			}
			_ = h.refresh(ctx)
		}
		want = append(want, fmt.Sprint(i))
		if i%5 == 0 {
			// Drop the watch once it has delivered: the changes made
			// while the informer reconnects must come from its resumed
			// watch. (A watch dropped before it delivered anything makes
			// client-go list again, which folds states.)
			deadline := time.Now().Add(10 * time.Second)
			for !seenUpTo(i) {
				if time.Now().After(deadline) {
					mu.Lock()
					got := fmt.Sprint(seen)
					mu.Unlock()
					t.Fatalf("informer saw %s, not yet %d", got, i)
				}
				time.Sleep(10 * time.Millisecond) // the informer works on its own goroutines
			}
			srv.CloseClientConnections()
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		mu.Lock()
		got := fmt.Sprint(seen)
		mu.Unlock()
		if got == fmt.Sprint(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("informer saw %s, want %s", got, fmt.Sprint(want))
		}
		time.Sleep(20 * time.Millisecond) // the informer works on its own goroutines
	}
}
