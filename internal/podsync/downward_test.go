package podsync

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestDownwardFieldRef(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	pod.Labels = map[string]string{"app": "web"}
	d := Downward{NodeName: "n1", HostIPs: []string{"10.0.0.5", "fd00::5"}, PodIPs: []string{"172.17.0.3"}}
	tests := []struct {
		d       Downward
		path    string
		want    string
		wantErr string
	}{
		{d: d, path: "status.podIP", want: "172.17.0.3"},
		{d: d, path: "status.podIPs", want: "172.17.0.3"},
		{d: d, path: "status.hostIP", want: "10.0.0.5"},
		{d: d, path: "status.hostIPs", want: "10.0.0.5,fd00::5"},
		{d: d, path: "spec.nodeName", want: "n1"},
		{d: d, path: "metadata.labels['app']", want: "web"},
		{d: Downward{PodIPs: []string{"a", "b"}}, path: "status.podIPs", want: "a,b"},
		{d: Downward{}, path: "status.podIP", want: ""},
		{d: Downward{}, path: "status.podIPs", want: ""},
		{d: Downward{}, path: "status.hostIP", wantErr: `fieldPath "status.hostIP": the node's address is not known`},
		{d: Downward{}, path: "status.hostIPs", wantErr: `fieldPath "status.hostIPs": the node's address is not known`},
		{d: d, path: "status.phase", wantErr: `fieldPath "status.phase" is not supported by actorlet`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := tt.d.FieldRef(pod, tt.path)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("FieldRef(%q) = %q, %v, want error %q", tt.path, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("FieldRef(%q) = %q, %v, want %q", tt.path, got, err, tt.want)
			}
		})
	}
}

func TestPodIPsFor(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	host := []string{"10.0.0.5"}
	if got := PodIPsFor(pod, "172.17.0.3", host); strings.Join(got, ",") != "172.17.0.3" {
		t.Errorf("bridge pod: %q, want the sandbox's address", got)
	}
	if got := PodIPsFor(pod, "", host); got != nil {
		t.Errorf("bridge pod without address: %q, want none", got)
	}
	pod.Spec.HostNetwork = true
	if got := PodIPsFor(pod, "", host); strings.Join(got, ",") != "10.0.0.5" {
		t.Errorf("hostNetwork pod: %q, want the host's addresses", got)
	}
}

func TestDownwardResourceFieldRef(t *testing.T) {
	q := resource.MustParse
	pod := testPod(v1.RestartPolicyAlways, "app", "side")
	pod.Spec.Containers[0].Resources = v1.ResourceRequirements{
		Limits:   v1.ResourceList{v1.ResourceCPU: q("1500m"), v1.ResourceMemory: q("64Mi")},
		Requests: v1.ResourceList{v1.ResourceCPU: q("250m"), v1.ResourceMemory: q("32Mi")},
	}
	d := Downward{Allocatable: v1.ResourceList{v1.ResourceCPU: q("4"), v1.ResourceMemory: q("8Gi"), v1.ResourceEphemeralStorage: q("100Gi")}}
	app, side := &pod.Spec.Containers[0], &pod.Spec.Containers[1]
	tests := []struct {
		name      string
		d         Downward
		c         *v1.Container
		res, cn   string
		divisor   string
		want      string
		wantError string
	}{
		{name: "cpu limit in cores rounds up", d: d, c: app, res: "limits.cpu", want: "2"},
		{name: "cpu limit in millicores", d: d, c: app, res: "limits.cpu", divisor: "1m", want: "1500"},
		{name: "cpu request", d: d, c: app, res: "requests.cpu", divisor: "1m", want: "250"},
		{name: "cpu request in cores", d: d, c: app, res: "requests.cpu", want: "1"},
		{name: "memory limit bytes", d: d, c: app, res: "limits.memory", want: "67108864"},
		{name: "memory limit Mi", d: d, c: app, res: "limits.memory", divisor: "1Mi", want: "64"},
		{name: "memory request M rounds up", d: d, c: app, res: "requests.memory", divisor: "1M", want: "34"},
		{name: "unset cpu limit is allocatable", d: d, c: side, res: "limits.cpu", want: "4"},
		{name: "unset memory limit is allocatable", d: d, c: side, res: "limits.memory", divisor: "1Gi", want: "8"},
		{name: "unset ephemeral limit is allocatable", d: d, c: side, res: "limits.ephemeral-storage", divisor: "1Gi", want: "100"},
		{name: "unset request is 0", d: d, c: side, res: "requests.memory", want: "0"},
		{name: "containerName picks another", d: d, c: side, cn: "app", res: "limits.memory", divisor: "1Mi", want: "64"},
		{name: "unknown container", d: d, c: app, cn: "nope", res: "limits.cpu", wantError: `resource "limits.cpu": container "nope" not found in the pod`},
		{name: "unknown allocatable", d: Downward{}, c: side, res: "limits.cpu", wantError: `container "side" sets no limit and the node's allocatable cpu is not known`},
		{name: "hugepages", d: d, c: app, res: "limits.hugepages-2Mi", wantError: `resource "limits.hugepages-2Mi" is not supported by actorlet`},
		{name: "bare name", d: d, c: app, res: "cpu", wantError: `resource "cpu" is not supported by actorlet`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref := &v1.ResourceFieldSelector{Resource: tt.res, ContainerName: tt.cn}
			if tt.divisor != "" {
				ref.Divisor = q(tt.divisor)
			}
			got, err := tt.d.ResourceFieldRef(pod, tt.c, ref)
			if tt.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantError) {
					t.Fatalf("= %q, %v, want error containing %q", got, err, tt.wantError)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("= %q, %v, want %q", got, err, tt.want)
			}
		})
	}

	// A pod-level limit is the limit of a container that sets none.
	withPod := pod.DeepCopy()
	withPod.Spec.Resources = &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: q("200Mi")}}
	for c, want := range map[string]string{"side": "200", "app": "64"} {
		got, err := d.ResourceFieldRef(withPod, nil, &v1.ResourceFieldSelector{Resource: "limits.memory", ContainerName: c, Divisor: q("1Mi")})
		if err != nil || got != want {
			t.Errorf("limits.memory of %s with a pod-level limit of 200Mi: %q, %v; want %q", c, got, err, want)
		}
	}
}

func TestAppSpecForEnv(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	c := &pod.Spec.Containers[0]
	c.Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")}
	c.Env = []v1.EnvVar{
		fieldEnv("POD_IP", "status.podIP"), fieldEnv("HOST_IP", "status.hostIP"),
		{Name: "MEM", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}}},
		{Name: "URL", Value: "http://$(POD_IP):$(MEM)"},
	}
	d := Downward{NodeName: node, HostIPs: []string{"10.0.0.5"}, PodIPs: []string{"172.17.0.3"}}
	s, err := AppSpecFor(SpecOptions{RootDir: "/r"}, d, pod, c, "sb", 0)
	if err != nil {
		t.Fatal(err)
	}
	wantStrings(t, "env", s.Env, []string{"POD_IP=172.17.0.3", "HOST_IP=10.0.0.5", "MEM=64", "URL=http://172.17.0.3:64"})
}

func TestWithHostIPs(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	st := v1.PodStatus{PodIP: "172.17.0.3", PodIPs: []v1.PodIP{{IP: "172.17.0.3"}}}
	if got := WithHostIPs(st, pod, nil); got.HostIP != "" || got.HostIPs != nil {
		t.Errorf("no host addresses: %+v, want none", got)
	}
	got := WithHostIPs(st, pod, []string{"10.0.0.5", "fd00::5"})
	if got.HostIP != "10.0.0.5" || len(got.HostIPs) != 2 || got.HostIPs[1].IP != "fd00::5" || got.PodIP != "172.17.0.3" {
		t.Errorf("bridge pod: %+v", got)
	}
	pod.Spec.HostNetwork = true
	got = WithHostIPs(v1.PodStatus{}, pod, []string{"10.0.0.5"})
	if got.PodIP != "10.0.0.5" || len(got.PodIPs) != 1 || got.PodIPs[0].IP != "10.0.0.5" || got.HostIP != "10.0.0.5" {
		t.Errorf("hostNetwork pod: %+v, want the host's addresses as the pod's", got)
	}
}
