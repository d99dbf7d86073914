// Command grpchealth is the gRPC server actorlet's tests probe: it serves
// grpc.health.v1 (Check) in plain text on --addr (default :9000) and runs
// until SIGTERM or SIGINT, then exits 0.
//
// Every service name is known; its status is read at each Check from
// --state-dir (default /state): NOT_SERVING while the file
// "<service>.notserving" exists there ("server.notserving" for the
// empty service name, the server as a whole), else SERVING. So a test
// flips a status by creating or removing a file on a volume the container
// mounts. Other files, and a missing directory, leave it SERVING.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func main() {
	addr := flag.String("addr", ":9000", "listen address")
	dir := flag.String("state-dir", "/state", "directory of the <service>.notserving files")
	flag.Parse()
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "grpchealth:", err)
		os.Exit(2)
	}
	s := grpc.NewServer()
	healthpb.RegisterHealthServer(s, health{dir: *dir})
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		sig := <-sigs
		fmt.Printf("grpchealth: %v, exiting 0\n", sig)
		s.Stop()
	}()
	fmt.Printf("grpchealth: serving grpc.health.v1 on %s, state in %s\n", l.Addr(), *dir)
	if err := s.Serve(l); err != nil {
		fmt.Fprintln(os.Stderr, "grpchealth:", err)
		os.Exit(2)
	}
}

// health answers Check from the files in dir.
type health struct {
	healthpb.UnimplementedHealthServer
	dir string
}

func (h health) Check(_ context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	name := req.GetService()
	if name == "" {
		name = "server"
	}
	st := healthpb.HealthCheckResponse_SERVING
	if _, err := os.Stat(filepath.Join(h.dir, filepath.Base(name)+".notserving")); err == nil {
		st = healthpb.HealthCheckResponse_NOT_SERVING
	}
	return &healthpb.HealthCheckResponse{Status: st}, nil
}
