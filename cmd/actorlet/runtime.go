package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/actorlet/actorlet/internal/pauseimage"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/cri"
	"github.com/actorlet/actorlet/runtimeadapter/docker"
)

// The values of --container-runtime, and the CRI defaults.
const (
	runtimeDocker      = "docker"
	runtimeCRI         = "cri"
	defaultCRIEndpoint = "unix:///run/containerd/containerd.sock"
	defaultPodLogsDir  = "/var/log/pods"
	// eventsProbe is how long the start waits to learn whether a CRI
	// runtime serves GetContainerEvents.
	eventsProbe = 500 * time.Millisecond
)

// openRuntime connects the runtime --container-runtime names, and logs
// whether it answers and which event path the PLEG uses. The node runs
// either way: a runtime that does not answer yet is listed again with
// backoff.
func openRuntime(ctx context.Context, f runFlags, log *zap.Logger) (runtimeadapter.Runtime, func(), error) {
	switch f.runtime {
	case runtimeDocker:
		dopts := []docker.Option{docker.WithLogger(log.Named("docker"))}
		if f.podInfraImage == pauseimage.DefaultTag {
			dopts = append(dopts, pauseimage.Local(f.podInfraImage))
		}
		dopts = append(dopts, containerdOption(log, f))
		drt, err := docker.New(dopts...)
		if err != nil {
			return nil, nil, fmt.Errorf("docker: %w", err)
		}
		pctx, cancel := context.WithTimeout(ctx, startPingTimeout)
		err = drt.Ping(pctx)
		cancel()
		if err != nil {
			log.Warn("Docker does not answer; running anyway: /healthz reports it, and the node lists again with backoff (1 s doubling to 30 s) until it answers",
				zap.Error(err))
		}
		return drt, func() { drt.Close() }, nil
	case runtimeCRI:
		logs, err := filepath.Abs(f.podLogsDir)
		if err != nil {
			return nil, nil, fmt.Errorf("--pod-logs-dir %s: %w", f.podLogsDir, err)
		}
		opts := cri.Options{
			Endpoint: f.endpoint, LogRoot: logs, StateDir: filepath.Join(f.rootDir, "cri"),
			PauseImage: f.podInfraImage, Logger: log.Named("cri"),
		}
		crt, err := cri.New(opts)
		if err != nil {
			return nil, nil, fmt.Errorf("--container-runtime-endpoint: %w", err)
		}
		pctx, cancel := context.WithTimeout(ctx, startPingTimeout)
		defer cancel()
		version, err := crt.Version(pctx)
		if err != nil {
			log.Warn("the CRI runtime does not answer; running anyway: /healthz reports it, and the node lists again with backoff (1 s doubling to 30 s) until it answers",
				zap.String("endpoint", f.endpoint), zap.Error(err))
		} else {
			api, _ := crt.APIVersion(pctx)
			fields := []zap.Field{zap.String("endpoint", f.endpoint), zap.String("runtime", version), zap.String("cri", api), zap.String("podLogsDir", logs)}
			if ready, why, err := crt.NetworkReady(pctx); err == nil && !ready {
				fields = append(fields, zap.String("podNetwork", "none (only hostNetwork pods run): "+why))
			}
			log.Info("CRI runtime", fields...)
		}
		if opts.Containerd = criExitPath(pctx, log, f, crt); opts.Containerd != "" {
			crt.Close()
			if crt, err = cri.New(opts); err != nil {
				return nil, nil, fmt.Errorf("--containerd-address: %w", err)
			}
		}
		return crt, rotateLogs(ctx, crt, f.nodeName), nil
	default:
		return nil, nil, fmt.Errorf("--container-runtime %q: want %s or %s", f.runtime, runtimeDocker, runtimeCRI)
	}
}

// rotateLogs rotates the node's container logs as the kubelet does for a
// CRI runtime (every 10 s, 10 MiB × 5 files) until the returned function
// is called, which also closes the runtime.
func rotateLogs(ctx context.Context, crt *cri.Runtime, node string) func() {
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		crt.RotateLogsEvery(rctx, node, cri.DefaultLogRotateInterval, cri.DefaultLogMaxSize, cri.DefaultLogMaxFiles)
	}()
	return func() {
		cancel()
		<-done
		crt.Close()
	}
}

// runtimeVersion is the runtime's "<name>://<version>" for the node's
// nodeInfo (nil: the runtime does not say).
func runtimeVersion(rt runtimeadapter.Runtime) func(context.Context) (string, error) {
	if v, ok := rt.(interface {
		Version(context.Context) (string, error)
	}); ok {
		return v.Version
	}
	return nil
}

// containerdOption follows Docker's containerd when its socket is found
// (or named by --containerd-address), and says once which path a
// container's death takes to its pod.
func containerdOption(log *zap.Logger, f runFlags) docker.Option {
	switch {
	case !f.events:
		log.Info("container exits: found by relisting every --relist-period (--runtime-events=false)", zap.Duration("relistPeriod", f.relistPeriod))
		return docker.WithContainerd("")
	case f.containerd == "none":
		log.Info("container exits: Docker's die events (--containerd-address none), the relist as the safety net")
		return docker.WithContainerd("")
	}
	addr, err := docker.FindContainerd(f.containerd)
	if err != nil {
		log.Info("container exits: Docker's die events, the relist as the safety net; Docker's containerd is not followed", zap.Error(err))
		return docker.WithContainerd("")
	}
	log.Info("container exits: Docker's containerd task events, ahead of Docker's die events (the fallback, with the relist)",
		zap.String("containerd", addr), zap.String("namespace", "moby"))
	return docker.WithContainerd(addr)
}

// criExitPath decides how a container's death reaches its pod on a CRI
// runtime (criExits), says it once, and returns the containerd socket
// whose task events (namespace k8s.io) to follow ("": none, the PLEG
// relists every --relist-period). CRI's own GetContainerEvents is probed
// and named, but not followed: containerd 1.6 answers it Unimplemented,
// and where it is served (containerd 1.7+) containerd's task events are
// there too.
func criExitPath(ctx context.Context, log *zap.Logger, f runFlags, crt *cri.Runtime) string {
	fields := []zap.Field{zap.Duration("relistPeriod", f.relistPeriod), zap.String("criEvents", criEventsSupport(ctx, crt))}
	name, err := "", error(nil)
	if f.events && f.containerd == "" {
		name, err = crt.RuntimeName(ctx)
		fields = append(fields, zap.String("runtime", name))
	}
	addr, why := criExits(f.events, f.containerd, f.endpoint, name, err)
	if addr != "" {
		fields = append(fields, zap.String("containerd", addr), zap.String("namespace", cri.ContainerdNamespace))
	}
	log.Info("container exits: "+why, fields...)
	return addr
}

// criExits is criExitPath's decision: the containerd socket to follow
// ("" for none) and what to log. events is --runtime-events, flag
// --containerd-address, endpoint --container-runtime-endpoint; name is
// the runtime's CRI name, or nameErr why it is unknown (the runtime does
// not answer yet). Followed: --containerd-address when set ("none":
// nothing), else the endpoint's own socket when the runtime is
// containerd, or does not answer yet (a node agent may start first; if
// it turns out not to be containerd, the stream fails and the relist goes
// on).
func criExits(events bool, flag, endpoint, name string, nameErr error) (addr, why string) {
	switch {
	case !events:
		return "", "found by relisting every --relist-period (--runtime-events=false)"
	case flag == "none":
		return "", "found by relisting every --relist-period (--containerd-address none)"
	case flag != "":
		return flag, "containerd task events (--containerd-address), the relist as the safety net"
	case nameErr != nil:
		return endpoint, "containerd task events on the endpoint's socket if the runtime is containerd (it does not answer yet), the relist as the safety net"
	case name != "containerd":
		return "", "found by relisting every --relist-period (the runtime is not containerd)"
	}
	return endpoint, "containerd task events, the relist as the safety net"
}

// criEventsSupport says whether the runtime serves CRI's
// GetContainerEvents, for the start's log.
func criEventsSupport(ctx context.Context, crt *cri.Runtime) string {
	served, err := crt.EventsSupported(ctx, eventsProbe)
	switch {
	case err != nil:
		return "unknown (probing GetContainerEvents failed: " + err.Error() + ")"
	case served:
		return "GetContainerEvents served (not followed)"
	}
	return "GetContainerEvents Unimplemented (as on containerd 1.6)"
}
