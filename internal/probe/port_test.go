package probe

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestResolvePort(t *testing.T) {
	c := &v1.Container{Ports: []v1.ContainerPort{{Name: "http", ContainerPort: 8080}, {ContainerPort: 9090}, {Name: "big", ContainerPort: 70000}}}
	tests := []struct {
		port    intstr.IntOrString
		c       *v1.Container
		want    int
		wantErr bool
	}{
		{intstr.FromInt32(80), nil, 80, false},
		{intstr.FromString("http"), c, 8080, false},
		{intstr.FromString("8081"), c, 8081, false}, // a number stored as a string
		{intstr.FromString("http"), nil, 0, true},
		{intstr.FromString("grpc"), c, 0, true},
		{intstr.FromString("big"), c, 0, true},
		{intstr.FromString(""), c, 0, true}, // unnamed ports do not match ""
		{intstr.FromInt32(0), nil, 0, true},
		{intstr.FromInt32(65536), nil, 0, true},
		{intstr.FromInt32(65535), nil, 65535, false},
	}
	for _, tt := range tests {
		got, err := ResolvePort(tt.port, tt.c)
		if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
			t.Errorf("ResolvePort(%v) = %d, %v; want %d, error %v", tt.port.String(), got, err, tt.want, tt.wantErr)
		}
	}
}
