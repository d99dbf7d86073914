package node

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/messages"
)

// DefaultRequestTimeout bounds a request to a node (PodStatuses, ApplyPod
// ...) whose context has no deadline.
const DefaultRequestTimeout = 10 * time.Second

// The request helpers below ask a node a question and wait for its typed
// answer, so nobody type-asserts a future's result. Each waits until the
// node answers, ctx ends or its deadline (DefaultRequestTimeout without
// one) passes. c is the ActorSystem's Root, or any actor's context; from
// inside an actor's Receive prefer c.Request and handle the answer as a
// message: these helpers block.

// request sends msg to the node at pid and waits for an answer of type R.
func request[R any](ctx context.Context, c actor.SenderContext, pid *actor.PID, msg any) (R, error) {
	var zero R
	timeout := DefaultRequestTimeout
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	if err := ctx.Err(); err != nil {
		return zero, fmt.Errorf("ask node %s (%T): %w", pid.GetId(), msg, err)
	}
	if timeout <= 0 {
		return zero, fmt.Errorf("ask node %s (%T): %w", pid.GetId(), msg, context.DeadlineExceeded)
	}
	f := c.RequestFuture(pid, msg, timeout)
	var res any
	var err error
	if ctx.Done() == nil { // nothing ends ctx: the future's timeout is the bound
		res, err = f.Result()
	} else {
		done := make(chan struct{})
		go func() {
			res, err = f.Result()
			close(done)
		}()
		select {
		case <-done:
		case <-ctx.Done():
			return zero, fmt.Errorf("ask node %s (%T): %w", pid.GetId(), msg, ctx.Err())
		}
	}
	if err != nil {
		return zero, fmt.Errorf("ask node %s (%T): %w", pid.GetId(), msg, err)
	}
	r, ok := res.(R)
	if !ok {
		return zero, fmt.Errorf("ask node %s (%T): unexpected answer %T", pid.GetId(), msg, res)
	}
	return r, nil
}

// PodStatuses returns every pod the node knows, each a copy of its spec
// and last reported status (messages.GetPodStatuses).
func PodStatuses(ctx context.Context, c actor.SenderContext, pid *actor.PID) ([]*v1.Pod, error) {
	res, err := request[*messages.PodStatuses](ctx, c, pid, &messages.GetPodStatuses{})
	if err != nil {
		return nil, err
	}
	return res.Pods, nil
}

// Events returns the node's recent events, oldest first
// (messages.GetEvents).
func Events(ctx context.Context, c actor.SenderContext, pid *actor.PID) ([]messages.Event, error) {
	res, err := request[*messages.Events](ctx, c, pid, &messages.GetEvents{})
	if err != nil {
		return nil, err
	}
	return res.Items, nil
}

// Health returns the node's health checks (messages.GetHealth); the node
// is healthy when every check is OK.
func Health(ctx context.Context, c actor.SenderContext, pid *actor.PID) ([]messages.HealthCheck, error) {
	res, err := request[*messages.NodeHealth](ctx, c, pid, &messages.GetHealth{})
	if err != nil {
		return nil, err
	}
	return res.Checks, nil
}

// ApplyPod runs pod as a host-fed pod, or updates it (messages.ApplyPod):
// it returns the UID the pod runs under and warnings about fields actorlet
// ignores, or the error of the request or of the pod's validation (which
// names the field).
func ApplyPod(ctx context.Context, c actor.SenderContext, pid *actor.PID, pod *v1.Pod) (types.UID, []string, error) {
	res, err := request[*messages.ApplyPodResult](ctx, c, pid, &messages.ApplyPod{Pod: pod})
	if err != nil {
		return "", nil, err
	}
	return res.UID, res.Warnings, res.Err
}

// SetHostPods replaces the whole set of host-fed pods
// (messages.SetHostPods). results[i] is pods[i]'s: a pod whose Err is set
// failed validation and is left out of the set. The error is the
// request's.
func SetHostPods(ctx context.Context, c actor.SenderContext, pid *actor.PID, pods []*v1.Pod) (results []messages.ApplyPodResult, err error) {
	res, err := request[*messages.SetHostPodsResult](ctx, c, pid, &messages.SetHostPods{Pods: pods})
	if err != nil {
		return nil, err
	}
	return res.Results, nil
}

// DeletePod removes the host-fed pod namespace/name (messages.DeletePod);
// the error wraps messages.ErrPodNotFound when there is none.
func DeletePod(ctx context.Context, c actor.SenderContext, pid *actor.PID, namespace, name string) error {
	res, err := request[*messages.DeletePodResult](ctx, c, pid, &messages.DeletePod{Namespace: namespace, Name: name})
	if err != nil {
		return err
	}
	return res.Err
}

// StopAllPods stops and removes every pod the node runs and makes it
// ignore its sources from then on (messages.StopAllPods, what `actorlet
// run --stop-pods-on-exit` does); it returns once every pod's containers
// are gone.
func StopAllPods(ctx context.Context, c actor.SenderContext, pid *actor.PID) error {
	_, err := request[*messages.AllPodsStopped](ctx, c, pid, &messages.StopAllPods{})
	return err
}
