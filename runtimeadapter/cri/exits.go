package cri

import (
	"context"
	"time"

	"github.com/actorlet/actorlet/internal/taskevents"
	"github.com/actorlet/actorlet/runtimeadapter"
)

var _ runtimeadapter.ExitSource = (*Runtime)(nil)

// ExitPath names the containerd whose task events this Runtime follows
// (Options.Containerd, namespace k8s.io), or "" without one: then the
// PLEG finds deaths by relisting.
func (r *Runtime) ExitPath() string { return r.exits.Path() }

// ExecExits counts the exits of exec processes (ExecSync: probes, hooks)
// the Exits streams saw and did not report: they are not deaths.
func (r *Runtime) ExecExits() int64 { return r.exits.ExecExits() }

// Exits implements runtimeadapter.ExitSource: the exits of node's
// containers' (and sandboxes') init processes, from containerd's task
// events in namespace k8s.io, where the CRI plugin keeps its containers
// under their CRI IDs. The CRI plugin learns of an exit from the same
// event: until it has handled it, List and Inspect report the container
// exited with containerd's exit status and time (what the CRI status
// shows next). Containers this Runtime has not created, listed or
// inspected are not reported (the relist finds them); exec exits never
// are.
func (r *Runtime) Exits(ctx context.Context, node string) (<-chan runtimeadapter.Exit, <-chan error) {
	return r.exits.Exits(ctx, node)
}

// ContainerdNamespace is the containerd namespace of the CRI plugin's
// containers, which Options.Containerd follows.
const ContainerdNamespace = taskevents.CRINamespace

// followExits keeps the task-event follower in step with a listing of
// opts observed at observed: whose each listed container is (for routing
// its exit), which are gone, and the listing corrected for exits the CRI
// plugin has not handled yet.
func (r *Runtime) followExits(opts runtimeadapter.ListOptions, out []runtimeadapter.Container, observed time.Time) {
	if r.exits == nil {
		return
	}
	seen := make(map[string]bool, len(out))
	for i := range out {
		seen[out[i].ID] = true
	}
	r.exits.Forget(opts, seen, observed)
	r.exits.Learn(observed, out...)
	r.exits.Correct(out)
}
