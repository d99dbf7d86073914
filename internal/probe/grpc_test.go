package probe

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// grpcServer serves grpc.health.v1 on 127.0.0.1 (when hs is not nil) and
// returns its port; the server stops at test end.
func grpcServer(t *testing.T, hs healthpb.HealthServer) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	if hs != nil {
		healthpb.RegisterHealthServer(s, hs)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(l) }()
	t.Cleanup(func() { s.Stop(); <-done })
	return l.Addr().(*net.TCPAddr).Port
}

// hangingHealth answers no Check until the call's context ends.
type hangingHealth struct {
	healthpb.UnimplementedHealthServer
}

func (hangingHealth) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// silentListener accepts connections and never speaks, so no gRPC
// connection is ever ready; it returns its port.
func silentListener(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var conns []net.Conn
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().(*net.TCPAddr).Port
}

func TestGRPC(t *testing.T) {
	hs := health.NewServer()
	hs.SetServingStatus("up", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("down", healthpb.HealthCheckResponse_NOT_SERVING)
	healthy := grpcServer(t, hs)
	noHealth := grpcServer(t, nil)
	hanging := grpcServer(t, hangingHealth{})
	silent := silentListener(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()

	const timeout = 300 * time.Millisecond
	tests := []struct {
		name    string
		ctx     context.Context
		host    string
		port    int
		service string
		want    Result
		wantOut string
	}{
		{"server serving", context.Background(), "127.0.0.1", healthy, "", Success, "service healthy"},
		{"service serving", context.Background(), "127.0.0.1", healthy, "up", Success, "service healthy"},
		{"service not serving", context.Background(), "127.0.0.1", healthy, "down", Failure, `service unhealthy (responded with "NOT_SERVING")`},
		{"unknown service", context.Background(), "127.0.0.1", healthy, "nope", Failure, "error: health rpc probe failed: rpc error: code = NotFound"},
		{"no health service", context.Background(), "127.0.0.1", noHealth, "", Failure, "error: this server does not implement the grpc health protocol (grpc.health.v1.Health)"},
		{"rpc timeout", context.Background(), "127.0.0.1", hanging, "", Failure, "timeout: health rpc did not complete within 300ms"},
		{"connect timeout", context.Background(), "127.0.0.1", silent, "", Failure, `timeout: failed to connect service "127.0.0.1:` + strconv.Itoa(silent) + `" within 300ms`},
		{"no listener", context.Background(), "127.0.0.1", closedPort(t), "", Failure, "timeout: failed to connect service"},
		{"cancelled", cancelled, "127.0.0.1", healthy, "", Unknown, "probe cancelled"},
		{"no host", context.Background(), "", healthy, "", Unknown, "no host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			r, out := GRPC(tt.ctx, tt.host, tt.port, tt.service, timeout)
			if r != tt.want || !strings.Contains(out, tt.wantOut) {
				t.Errorf("%v %q, want %v with %q", r, out, tt.want, tt.wantOut)
			}
			if took := time.Since(start); took > timeout+2*time.Second {
				t.Errorf("took %v, want at most about %v", took, timeout)
			}
		})
	}
}
