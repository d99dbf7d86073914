package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// GRPC probes by calling grpc.health.v1.Health/Check for service (""
// asks about the server as a whole) on host:port, in plain text, within
// timeout (timeout <= 0: only ctx bounds it), as the kubelet's gRPC prober
// does: the answer SERVING is Success; any other status, an error of the
// call (including a server without the health service) or no connection
// within the timeout is Failure. Like the kubelet, it waits for the
// connection until the timeout rather than failing at the first refused
// dial, so a server that is still starting gets the whole timeout. The
// output is the kubelet's message. Unknown means the probe could not be
// made: no host, or ctx was cancelled (the probe was abandoned, not
// failed).
func GRPC(ctx context.Context, host string, port int, service string, timeout time.Duration) (Result, string) {
	if host == "" {
		return Unknown, "grpc probe: no host to probe"
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	conn, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()), // the kubelet sends no credentials either
		grpc.WithUserAgent(UserAgent))
	if err != nil {
		return Failure, fmt.Sprintf("error: failed to connect service at %q: %v", addr, err)
	}
	defer conn.Close()
	if err := awaitReady(ctx, conn); err != nil {
		if cancelled(ctx) {
			return Unknown, "probe cancelled: " + err.Error()
		}
		return Failure, fmt.Sprintf("timeout: failed to connect service %q within %v: %v", addr, timeout, err)
	}
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		if cancelled(ctx) {
			return Unknown, "probe cancelled: " + err.Error()
		}
		switch status.Code(err) {
		case codes.Unimplemented:
			return Failure, "error: this server does not implement the grpc health protocol (grpc.health.v1.Health): " + status.Convert(err).Message()
		case codes.DeadlineExceeded:
			return Failure, fmt.Sprintf("timeout: health rpc did not complete within %v", timeout)
		}
		return Failure, "error: health rpc probe failed: " + err.Error()
	}
	if s := resp.GetStatus(); s != healthpb.HealthCheckResponse_SERVING {
		return Failure, fmt.Sprintf("service unhealthy (responded with %q)", s.String())
	}
	return Success, "service healthy"
}

// awaitReady connects conn and waits until it is ready or ctx ends (then
// it returns ctx's error), as a blocking dial does.
func awaitReady(ctx context.Context, conn *grpc.ClientConn) error {
	conn.Connect()
	for {
		s := conn.GetState()
		if s == connectivity.Ready {
			return nil
		}
		if !conn.WaitForStateChange(ctx, s) {
			return ctx.Err()
		}
	}
}

// cancelled reports whether ctx was cancelled rather than timed out.
func cancelled(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), context.Canceled)
}
