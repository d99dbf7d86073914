package actors

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/actorlet/actorlet/internal/probe"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// minStopGrace is the least grace SIGTERM gets after a preStop hook used
// up the grace period (2 s, as the kubelet's minimum).
const minStopGrace = 2 * time.Second

// runHook runs a postStart or preStop hook (exec, httpGet or sleep) of
// container c (instance id) within timeout, as the kubelet does: exec in
// the container, httpGet to the pod's IP (127.0.0.1 with hostNetwork)
// unless the hook names a host. An error says why the hook failed.
func (w *worker) runHook(h *v1.LifecycleHandler, c *v1.Container, id string, timeout time.Duration) error {
	if h == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	switch {
	case h.Exec != nil:
		ex, ok := capability[runtimeadapter.Execer](w.cfg.Runtime)
		if !ok {
			return errors.New("the runtime cannot run commands in containers")
		}
		res, err := ex.Exec(ctx, id, h.Exec.Command, timeout)
		if err != nil {
			return err
		}
		if res.ExitCode != 0 {
			return fmt.Errorf("command %q exited with %d: %s", h.Exec.Command, res.ExitCode, res.Output)
		}
		return nil
	case h.HTTPGet != nil:
		host := h.HTTPGet.Host
		if host == "" {
			host = w.podHost(ctx)
		}
		resolve := func(port intstr.IntOrString) (int, error) { return probe.ResolvePort(port, c) }
		r, out := probe.HTTPGet(ctx, host, h.HTTPGet, resolve, timeout)
		if r != probe.Success {
			return fmt.Errorf("httpGet %s: %s", h.HTTPGet.Path, out)
		}
		return nil
	case h.Sleep != nil:
		t := w.cfg.Clock.NewTimer(time.Duration(h.Sleep.Seconds) * time.Second)
		defer t.Stop()
		select {
		case <-t.C():
		case <-ctx.Done():
		}
		return nil
	}
	return errors.New("hook has no handler")
}

// podHost is where httpGet hooks go: 127.0.0.1 for hostNetwork pods, else
// the sandbox's IP.
func (w *worker) podHost(ctx context.Context) string {
	if w.hookPod != nil && w.hookPod.Spec.HostNetwork {
		return "127.0.0.1"
	}
	if w.sandboxID != "" {
		if sb, err := w.cfg.Runtime.Inspect(ctx, w.sandboxID); err == nil && sb.IP != "" {
			return sb.IP
		}
	}
	return "127.0.0.1"
}

// specOf finds a container of the pod by name (app or init).
func specOf(pod *v1.Pod, name string) *v1.Container {
	if pod == nil {
		return nil
	}
	for _, list := range [][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// preStop runs c's preStop hook before SIGTERM; it counts against the
// grace period. It returns the grace left for the stop (at least 2 s).
func (w *worker) preStop(k runtimeadapter.Container, name string, grace time.Duration) time.Duration {
	c := specOf(w.hookPod, name)
	if c == nil || c.Lifecycle == nil || c.Lifecycle.PreStop == nil || k.State != runtimeadapter.StateRunning {
		return grace
	}
	start := w.cfg.Clock.Now()
	if err := w.runHook(c.Lifecycle.PreStop, c, k.ID, grace); err != nil {
		w.event(messages.EventWarning, "FailedPreStopHook", name, fmt.Sprintf("PreStop hook for container %s failed: %v", name, err))
	}
	left := grace - w.cfg.Clock.Since(start)
	if left < minStopGrace {
		left = minStopGrace
	}
	return left
}
