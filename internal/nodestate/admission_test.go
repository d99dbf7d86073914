package nodestate

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func portPod(name string, ports ...v1.ContainerPort) *v1.Pod {
	p := testPod(name, "uid-"+name, v1.RestartPolicyAlways, "app")
	p.Spec.Containers[0].Ports = ports
	return p
}

func TestPortConflict(t *testing.T) {
	tcp80 := v1.ContainerPort{ContainerPort: 80, HostPort: 8080, Protocol: v1.ProtocolTCP}
	udp80 := v1.ContainerPort{ContainerPort: 80, HostPort: 8080, Protocol: v1.ProtocolUDP}
	lo80 := v1.ContainerPort{ContainerPort: 80, HostPort: 8080, Protocol: v1.ProtocolTCP, HostIP: "127.0.0.1"}
	other80 := v1.ContainerPort{ContainerPort: 80, HostPort: 8080, Protocol: v1.ProtocolTCP, HostIP: "127.0.0.2"}
	noHost := v1.ContainerPort{ContainerPort: 80, Protocol: v1.ProtocolTCP}
	tests := []struct {
		name string
		want v1.ContainerPort
		have v1.ContainerPort
		hit  bool
	}{
		{"same port and protocol", tcp80, tcp80, true},
		{"other protocol", udp80, tcp80, false},
		{"wildcard against a specific IP", tcp80, lo80, true},
		{"specific IP against wildcard", lo80, tcp80, true},
		{"two different IPs", lo80, other80, false},
		{"same IP", lo80, lo80, true},
		{"no host port asks nothing", noHost, tcp80, false},
	}
	for _, tt := range tests {
		_, hit := portConflict(portPod("new", tt.want), []*v1.Pod{portPod("old", tt.have)})
		if hit != tt.hit {
			t.Errorf("%s: conflict %v, want %v", tt.name, hit, tt.hit)
		}
	}
}
