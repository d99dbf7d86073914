package probe

import (
	"context"
	"errors"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// Target is what a probe runs against.
type Target struct {
	// Execer runs exec probes; nil makes them Unknown.
	Execer runtimeadapter.Execer
	// ContainerID is the container instance exec probes run in.
	ContainerID string
	// Container is the container's spec, for named ports (may be nil).
	Container *v1.Container
	// Host is the default host of httpGet and tcpSocket probes, and the
	// host of grpc probes: the pod's
	// IP on the pod network, 127.0.0.1 for a hostNetwork pod.
	Host string
}

// Run runs probe p once against t with p's timeout (Timeout) and returns
// its result, its output (for events) and, when the result is Unknown, why
// the probe could not be carried out. It dispatches to Exec, HTTPGet,
// TCPSocket or GRPC; a probe without a handler is Unknown.
func Run(ctx context.Context, p *v1.Probe, t Target) (Result, string, error) {
	if p == nil {
		return Unknown, "", errors.New("no probe")
	}
	timeout := Timeout(p)
	switch {
	case p.Exec != nil:
		return Exec(ctx, t.Execer, t.ContainerID, p.Exec, timeout)
	case p.HTTPGet != nil:
		resolve := func(port intstr.IntOrString) (int, error) { return ResolvePort(port, t.Container) }
		return withError(HTTPGet(ctx, t.Host, p.HTTPGet, resolve, timeout))
	case p.TCPSocket != nil:
		host := p.TCPSocket.Host
		if host == "" {
			host = t.Host
		}
		port, err := ResolvePort(p.TCPSocket.Port, t.Container)
		if err != nil {
			return Unknown, "", errors.New("tcpSocket probe: " + err.Error())
		}
		return withError(TCPSocket(ctx, host, port, timeout))
	case p.GRPC != nil:
		service := ""
		if p.GRPC.Service != nil {
			service = *p.GRPC.Service
		}
		return withError(GRPC(ctx, t.Host, int(p.GRPC.Port), service, timeout))
	default:
		return Unknown, "", errors.New("probe has no handler (exec, httpGet, tcpSocket, grpc)")
	}
}

// withError adds the error Run reports for an Unknown result.
func withError(r Result, out string) (Result, string, error) {
	if r == Unknown {
		return r, "", errors.New(out)
	}
	return r, out, nil
}
