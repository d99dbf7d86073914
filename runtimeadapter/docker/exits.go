package docker

import (
	"context"
	"time"

	"github.com/actorlet/actorlet/internal/taskevents"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// WithContainerd follows the task events of Docker's containerd listening
// on the unix socket addr (see taskevents.FindDocker), namespace moby:
// the Runtime then implements runtimeadapter.ExitSource with a non-empty
// ExitPath. A container's exit reaches Exits as soon as containerd
// publishes it, before dockerd has handled it and sent its die event, and
// while an Exits stream is open, List and Inspect report a container
// whose task exited as exited even while dockerd still says running
// (taskevents.Ledger). Nothing is dialled before the first Exits; an empty
// addr is ignored.
func WithContainerd(addr string) Option {
	return func(o *options) { o.containerd = addr }
}

// ExitPath names the containerd this Runtime follows, or "" without one.
func (r *Runtime) ExitPath() string { return r.exits.Path() }

// ExecExits counts the exits of exec processes the Exits streams saw and
// did not report (they are not deaths).
func (r *Runtime) ExecExits() int64 { return r.exits.ExecExits() }

// Exits implements runtimeadapter.ExitSource: the init-process exits of
// node's containers, from Docker's containerd. Exits of containers this
// Runtime has not created, listed or inspected are not reported (their
// die event and the relist still are); exec exits never are.
func (r *Runtime) Exits(ctx context.Context, node string) (<-chan runtimeadapter.Exit, <-chan error) {
	return r.exits.Exits(ctx, node)
}

// learn records whose the containers cs are, from their labels, if
// actorlet's.
func (r *Runtime) learn(at time.Time, cs ...runtimeadapter.Container) { r.exits.Learn(at, cs...) }

// correct applies the ledger to containers as Docker reported them.
func (r *Runtime) correct(cs []runtimeadapter.Container) { r.exits.Correct(cs) }

// FindContainerd returns the socket of Docker's containerd to pass to
// WithContainerd: flag when set (a path or unix://path), else the first
// of /run/containerd/containerd.sock and
// /var/run/docker/containerd/containerd.sock that is a socket. The error
// says why there is none (absent, not a socket, no permission).
func FindContainerd(flag string) (string, error) { return taskevents.FindDocker(flag) }
