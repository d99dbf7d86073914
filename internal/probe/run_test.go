package probe

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestRunNetwork(t *testing.T) {
	srv := newProbeServer(t, false)
	c := &v1.Container{Ports: []v1.ContainerPort{{Name: "web", ContainerPort: int32(srv.port(t))}}}
	target := Target{Container: c, Host: "127.0.0.1"}
	named := intstr.FromString("web")
	hs := health.NewServer()
	hs.SetServingStatus("down", healthpb.HealthCheckResponse_NOT_SERVING)
	grpcPort := grpcServer(t, hs)
	tests := []struct {
		name    string
		probe   *v1.Probe
		want    Result
		wantErr string
	}{
		{"httpGet by port name", &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/", Port: named}}}, Success, ""},
		{"httpGet 500", &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/error", Port: named}}}, Failure, ""},
		{"httpGet unknown port name", &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Port: intstr.FromString("nope")}}}, Unknown, "nope"},
		{"tcpSocket by port name", &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: named}}}, Success, ""},
		{"tcpSocket own host", &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Host: "127.0.0.1", Port: intstr.FromInt32(int32(closedPort(t)))}}}, Failure, ""},
		{"tcpSocket unknown port name", &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromString("nope")}}}, Unknown, "nope"},
		{"grpc", &v1.Probe{ProbeHandler: v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: int32(grpcPort)}}}, Success, ""},
		{"grpc service", &v1.Probe{ProbeHandler: v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: int32(grpcPort), Service: new("down")}}}, Failure, ""},
		{"no handler", &v1.Probe{}, Unknown, "no handler"},
		{"nil", nil, Unknown, "no probe"},
	}
	for _, tt := range tests {
		r, out, err := Run(context.Background(), tt.probe, target)
		if r != tt.want {
			t.Errorf("%s: %v %q %v, want %v", tt.name, r, out, err, tt.want)
		}
		if (err != nil) != (r == Unknown) || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: error %v, want one containing %q exactly for Unknown", tt.name, err, tt.wantErr)
		}
	}
}

// TestRunTimeout checks that Run applies timeoutSeconds (default 1 s).
func TestRunTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt, id := fakeContainer(t)
		rt.SetExecHang("app")
		target := Target{Execer: rt, ContainerID: id}
		for _, tt := range []struct {
			seconds int32
			want    time.Duration
		}{{0, time.Second}, {3, 3 * time.Second}} {
			p := &v1.Probe{TimeoutSeconds: tt.seconds, ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"hang"}}}}
			start := time.Now()
			r, _, err := Run(context.Background(), p, target)
			if r != Failure || err != nil || time.Since(start) != tt.want {
				t.Errorf("timeoutSeconds %d: %v, %v after %v; want Failure after %v", tt.seconds, r, err, time.Since(start), tt.want)
			}
		}
		calls := rt.ExecCalls()
		if len(calls) != 2 || calls[0].ContainerID != id || calls[0].Cmd[0] != "hang" {
			t.Errorf("exec calls %+v", calls)
		}
	})
}

func TestRunExecWithoutExecer(t *testing.T) {
	p := &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}
	if r, _, err := Run(context.Background(), p, Target{ContainerID: "x"}); r != Unknown || err == nil {
		t.Fatalf("%v, %v; want Unknown with an error", r, err)
	}
}
