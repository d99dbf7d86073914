package docker

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

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

// owner is whose a container is, as this adapter learnt it (create, list,
// inspect), so a task exit, which names only the container, can be routed.
type owner struct {
	node, uid string
	at        time.Time // when learnt
}

// ExitPath names the containerd this Runtime follows, or "" without one.
func (r *Runtime) ExitPath() string {
	if r.tasks == nil {
		return ""
	}
	return fmt.Sprintf("containerd task events at %s, namespace %s", r.tasks.Addr(), taskevents.DockerNamespace)
}

// ExecExits counts the exits of exec processes the Exits streams saw and
// did not report (they are not deaths).
func (r *Runtime) ExecExits() int64 { return r.execExits.Load() }

// Exits implements runtimeadapter.ExitSource: the init-process exits of
// node's containers, from Docker's containerd. Exits of containers this
// Runtime has not created, listed or inspected are not reported (their
// die event and the relist still are); exec exits never are.
func (r *Runtime) Exits(ctx context.Context, node string) (<-chan runtimeadapter.Exit, <-chan error) {
	out := make(chan runtimeadapter.Exit)
	errs := make(chan error, 1)
	fail := func(err error) (<-chan runtimeadapter.Exit, <-chan error) {
		errs <- err
		close(errs)
		close(out)
		return out, errs
	}
	if r.tasks == nil {
		return fail(fmt.Errorf("docker: container exits of node %s: no containerd configured: %w", node, runtimeadapter.ErrUnavailable))
	}
	raw, rerrs, err := r.tasks.Subscribe(ctx, taskevents.DockerNamespace)
	if err != nil {
		return fail(r.exitsErr(ctx, node, err))
	}
	go func() {
		defer close(errs)
		defer close(out)
		for e := range raw {
			if !e.Init() {
				r.execExits.Add(1)
				continue
			}
			r.ledger.Record(e, time.Now())
			uid, ok := r.ownerOf(e.ContainerID, node)
			if !ok {
				r.log.Debug("docker: task exit of a container not known as this node's", zap.String("id", e.ContainerID))
				continue
			}
			x := runtimeadapter.Exit{ContainerID: e.ContainerID, PodUID: uid, ExitCode: int(e.ExitStatus), ExitedAt: e.ExitedAt, OOMKilled: e.OOMKilled}
			select {
			case out <- x:
			case <-ctx.Done():
				errs <- ctx.Err()
				return
			}
		}
		errs <- r.exitsErr(ctx, node, <-rerrs)
	}()
	return out, errs
}

func (r *Runtime) exitsErr(ctx context.Context, node string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("docker: container exits of node %s: %w: %w", node, runtimeadapter.ErrUnavailable, err)
}

// learn records whose the containers cs are, from their labels, if
// actorlet's (one lock for the lot: List learns a whole listing).
func (r *Runtime) learn(at time.Time, cs ...runtimeadapter.Container) {
	if r.tasks == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range cs {
		node, uid := cs[i].Labels[runtimeadapter.LabelNode], cs[i].Labels[runtimeadapter.LabelPodUID]
		if cs[i].ID != "" && node != "" && uid != "" {
			r.owners[cs[i].ID] = owner{node: node, uid: uid, at: at}
		}
	}
}

func (r *Runtime) ownerOf(id, node string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o, ok := r.owners[id]
	return o.uid, ok && o.node == node
}

// correct applies the ledger to containers as Docker reported them.
func (r *Runtime) correct(cs []runtimeadapter.Container) {
	if r.ledger == nil || r.ledger.Len() == 0 {
		return
	}
	now := time.Now()
	for i := range cs {
		if r.ledger.Correct(&cs[i], now) {
			r.log.Debug("docker: still reports running a container whose task exited; reporting it exited",
				zap.String("id", cs[i].ID), zap.Time("exitedAt", cs[i].FinishedAt))
		}
	}
}

// FindContainerd returns the socket of Docker's containerd to pass to
// WithContainerd: flag when set (a path or unix://path), else the first
// of /run/containerd/containerd.sock and
// /var/run/docker/containerd/containerd.sock that is a socket. The error
// says why there is none (absent, not a socket, no permission).
func FindContainerd(flag string) (string, error) { return taskevents.FindDocker(flag) }
