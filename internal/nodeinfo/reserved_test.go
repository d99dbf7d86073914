package nodeinfo

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestParseReserved(t *testing.T) {
	tests := []struct {
		in      string
		cpu     string // "" not set
		mem     string
		wantErr string
	}{
		{in: ""},
		{in: "cpu=200m,memory=500Mi", cpu: "200m", mem: "500Mi"},
		{in: " memory = 1Gi ", mem: "1Gi"},
		{in: "cpu", wantErr: `"cpu" is not name=quantity`},
		{in: "pid=100", wantErr: `resource "pid": only cpu and memory`},
		{in: "cpu=lots", wantErr: "cpu: quantities must match"},
		{in: "cpu=-1", wantErr: "cpu: negative"},
		{in: "cpu=1,cpu=2", wantErr: "cpu given twice"},
	}
	for _, tt := range tests {
		got, err := ParseReserved("--system-reserved", tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "--system-reserved") {
				t.Errorf("%q: error %v, want one naming the flag and saying %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		for name, want := range map[v1.ResourceName]string{v1.ResourceCPU: tt.cpu, v1.ResourceMemory: tt.mem} {
			q, ok := got[name]
			if (want != "") != ok || (ok && q.Cmp(resource.MustParse(want)) != 0) {
				t.Errorf("%q: %s = %v (set %v), want %q", tt.in, name, q.String(), ok, want)
			}
		}
	}
}

func TestReserve(t *testing.T) {
	capacity := v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("1Gi"),
		v1.ResourceEphemeralStorage: resource.MustParse("10Gi")}
	got := Reserve(capacity, v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")},
		v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("2Gi")})
	for name, want := range map[v1.ResourceName]string{v1.ResourceCPU: "1250m", v1.ResourceMemory: "0", v1.ResourceEphemeralStorage: "10Gi"} {
		if q := got[name]; q.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("%s: %s, want %s", name, q.String(), want)
		}
	}
	if q := capacity[v1.ResourceCPU]; q.Cmp(resource.MustParse("2")) != 0 {
		t.Errorf("capacity changed: cpu %s", q.String())
	}
}
