package nodestate_test

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/internal/nodestate"
)

// A node actor feeds its state the events it hears and carries out the
// effects: here a pod is held until the first listing of the runtime, and
// its replacement (a new UID under the same namespace/name) waits for the
// old instance to be gone.
func ExampleState_Step() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	pod := func(uid string) *v1.Pod {
		p := &v1.Pod{}
		p.Namespace, p.Name, p.UID = "default", "web", types.UID(uid)
		p.Spec.Containers = []v1.Container{{Name: "app", Image: "web:" + uid}}
		return p
	}
	s := nodestate.New("node-1", []string{"file"})
	show := func(effects []nodestate.Effect) {
		for _, e := range effects {
			fmt.Println(e)
		}
	}
	show(s.Step(now, nodestate.SourceSet{Source: "file", Pods: []*v1.Pod{pod("v1")}, Synced: true}))
	show(s.Step(now, nodestate.Listing{ObservedAt: now}))
	show(s.Step(now, nodestate.SourceSet{Source: "file", Pods: []*v1.Pod{pod("v2")}, Synced: true}))
	show(s.Step(now, nodestate.Terminated{UID: "v1"}))
	fmt.Println(s.Record("v2").Phase)
	// Output:
	// add default/web(v1)
	// remove default/web(v1)
	// hold default/web(v2) for default/web(v1)
	// publish default/web(v1)  removed
	// add default/web(v2)
	// Running
}
