package cri_test

import (
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/runtimeadapter/cri"
)

// fakeCRIEvents is a CRI runtime service that serves GetContainerEvents
// as told: nil (the embedded server's answer, codes.Unimplemented, as
// containerd 1.6), or a function run as the stream.
type fakeCRIEvents struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	serve func(runtimeapi.RuntimeService_GetContainerEventsServer) error
}

func (f *fakeCRIEvents) GetContainerEvents(req *runtimeapi.GetEventsRequest, s runtimeapi.RuntimeService_GetContainerEventsServer) error {
	if f.serve == nil {
		return f.UnimplementedRuntimeServiceServer.GetContainerEvents(req, s)
	}
	return f.serve(s)
}

// TestEventsSupported: the probe of CRI's GetContainerEvents tells
// Unimplemented (containerd 1.6) from a served stream, whether it
// delivers an event or stays quiet for the probe, and fails on any other
// error.
func TestEventsSupported(t *testing.T) {
	cases := []struct {
		name    string
		serve   func(runtimeapi.RuntimeService_GetContainerEventsServer) error
		served  bool
		wantErr bool
	}{
		{"Unimplemented, as containerd 1.6", nil, false, false},
		{"an event", func(s runtimeapi.RuntimeService_GetContainerEventsServer) error {
			return s.Send(&runtimeapi.ContainerEventResponse{ContainerId: "c1", ContainerEventType: runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT})
		}, true, false},
		{"open and quiet", func(s runtimeapi.RuntimeService_GetContainerEventsServer) error {
			<-s.Context().Done()
			return s.Context().Err()
		}, true, false},
		{"another error", func(runtimeapi.RuntimeService_GetContainerEventsServer) error {
			return status.Error(codes.PermissionDenied, "no")
		}, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sock := filepath.Join(t.TempDir(), "cri.sock")
			l, err := net.Listen("unix", sock)
			if err != nil {
				t.Fatal(err)
			}
			srv := grpc.NewServer()
			runtimeapi.RegisterRuntimeServiceServer(srv, &fakeCRIEvents{serve: tc.serve})
			go func() { _ = srv.Serve(l) }()
			defer srv.Stop()
			rt, err := cri.New(cri.Options{Endpoint: "unix://" + sock, LogRoot: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			served, err := rt.EventsSupported(t.Context(), 300*time.Millisecond)
			if served != tc.served || (err != nil) != tc.wantErr {
				t.Fatalf("EventsSupported = %v, %v; want %v, error %v", served, err, tc.served, tc.wantErr)
			}
		})
	}
}
