package actors

import (
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/asynkron/protoactor-go/actor"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/internal/protocol"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
	"github.com/actorlet/actorlet/supervision"

	v1 "k8s.io/api/core/v1"
)

// The router hands each pod actor its PLEG batches in the order the relist
// sent them, whether a relist's batches came in one message
// (RelistTransitions) or one by one; a UID without an actor gets none; a
// pod whose actor is spawned mid-stream gets every batch sent after its
// spec, in order, and none sent before.
func TestRouterKeepsEachPodsBatchOrder(t *testing.T) {
	var mu sync.Mutex
	got := map[types.UID][]int{}
	hook := func(uid types.UID, msg any) {
		if m, ok := msg.(*protocol.PodTransitions); ok && len(m.Events) == 1 {
			seq, err := strconv.Atoi(m.Events[0].ContainerID)
			if err != nil {
				return
			}
			mu.Lock()
			got[uid] = append(got[uid], seq)
			mu.Unlock()
		}
	}
	podReceiveHook.Store(&hook)
	defer podReceiveHook.Store(nil)

	rt := fake.New(fake.AutoImages(true))
	defer rt.Close()
	hist, _ := supervision.NewHistory("") // memory only: cannot fail
	cfg := Config{NodeName: "router-order", Runtime: rt, PodInfraImage: "pause:1", Backoff: supervision.DefaultBackoffPolicy(),
		History: hist, Spec: podsync.SpecOptions{RootDir: t.TempDir()}}.withDefaults()
	sys := actor.NewActorSystem()
	defer sys.Shutdown()
	routerc := make(chan *actor.PID, 1)
	parent := sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			routerc <- c.Spawn(newRouterProps(cfg, c.Self(), &podDirectory{}))
		}
	}))
	defer func() { _ = sys.Root.StopFuture(parent).Wait() }()
	router := <-routerc

	a, b, late := testPod("a", "uid-a", v1.RestartPolicyAlways, "app"), testPod("b", "uid-b", v1.RestartPolicyAlways, "app"), testPod("late", "uid-late", v1.RestartPolicyAlways, "app")
	sys.Root.Send(router, &protocol.PodSpec{Pod: a})
	sys.Root.Send(router, &protocol.PodSpec{Pod: b})
	batch := func(uid types.UID, seq int) protocol.PodTransitions {
		return protocol.PodTransitions{UID: uid, Events: []protocol.PodLifecycleEvent{{Type: protocol.ContainerStarted, ContainerID: strconv.Itoa(seq)}}}
	}
	const rounds, spawnAt = 400, 150
	uids := []types.UID{"uid-a", "uid-b", "uid-late", "uid-nobody"}
	for seq := range rounds {
		if seq == spawnAt {
			sys.Root.Send(router, &protocol.PodSpec{Pod: late})
		}
		if seq%3 == 0 {
			for _, uid := range uids {
				one := batch(uid, seq)
				sys.Root.Send(router, &one)
			}
			continue
		}
		m := &protocol.RelistTransitions{}
		for _, uid := range uids {
			m.Pods = append(m.Pods, batch(uid, seq))
		}
		sys.Root.Send(router, m)
	}
	want := func(from int) []int {
		var w []int
		for i := from; i < rounds; i++ {
			w = append(w, i)
		}
		return w
	}
	expect := map[types.UID][]int{"uid-a": want(0), "uid-b": want(0), "uid-late": want(spawnAt)}
	waitFor(t, 20*time.Second, "every batch at its pod actor", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for uid, w := range expect {
			if len(got[uid]) < len(w) {
				return false
			}
		}
		return true
	})
	mu.Lock()
	defer mu.Unlock()
	for uid, w := range expect {
		if !slices.Equal(got[uid], w) {
			t.Errorf("pod %s received batches %v, want %v", uid, got[uid], w)
		}
	}
	if n := len(got["uid-nobody"]); n != 0 {
		t.Errorf("a UID without an actor received %d batches", n)
	}
}

// An idle pod actor's own struct is one 96-B size-class allocation per
// pod (a field that moves it to the next class costs every pod 16 B).
func TestPodActorSize(t *testing.T) {
	if n := unsafe.Sizeof(podActor{}); n > 96 {
		t.Errorf("podActor is %d B, over its 96-B size class", n)
	}
}
