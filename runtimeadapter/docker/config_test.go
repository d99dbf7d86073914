package docker

import (
	"reflect"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/strslice"
	"github.com/docker/go-connections/nat"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// baseHost is what every container gets, whatever its spec.
func baseHost() *container.HostConfig {
	return &container.HostConfig{
		RestartPolicy: container.RestartPolicy{Name: container.RestartPolicyDisabled},
		LogConfig: container.LogConfig{
			Type:   "json-file",
			Config: map[string]string{"max-size": "10m", "max-file": "5"},
		},
	}
}

func TestHostConfig(t *testing.T) {
	tests := []struct {
		name string
		spec runtimeadapter.ContainerSpec
		want func(h *container.HostConfig) // applied to baseHost()
	}{
		{name: "empty spec: restart no, rotated logs"},
		{name: "network mode", spec: runtimeadapter.ContainerSpec{NetworkMode: "container:abc"},
			want: func(h *container.HostConfig) { h.NetworkMode = "container:abc" }},
		{name: "port bindings", spec: runtimeadapter.ContainerSpec{PortBindings: []runtimeadapter.PortBinding{
			{HostPort: 8080, ContainerPort: 80, Protocol: "tcp"},
			{HostIP: "127.0.0.1", HostPort: 8081, ContainerPort: 80, Protocol: "tcp"}, // one container port, two host ports
			{HostPort: 53, ContainerPort: 5353, Protocol: "udp"},
			{HostPort: 9000, ContainerPort: 9000, Protocol: "SCTP"},
			{HostPort: 7000, ContainerPort: 7000}, // no protocol: tcp
		}}, want: func(h *container.HostConfig) {
			h.PortBindings = nat.PortMap{
				"80/tcp":    {{HostPort: "8080"}, {HostIP: "127.0.0.1", HostPort: "8081"}},
				"5353/udp":  {{HostPort: "53"}},
				"9000/sctp": {{HostPort: "9000"}},
				"7000/tcp":  {{HostPort: "7000"}},
			}
		}},
		{name: "bind mounts", spec: runtimeadapter.ContainerSpec{Mounts: []runtimeadapter.Mount{
			{Type: runtimeadapter.MountBind, Source: "/var/lib/actorlet/pods/u/volumes/empty-dir/a", Target: "/a"},
			{Type: runtimeadapter.MountBind, Source: "/etc/ssl", Target: "/etc/ssl", ReadOnly: true, SizeBytes: 5},
		}}, want: func(h *container.HostConfig) {
			h.Mounts = []mount.Mount{
				{Type: mount.TypeBind, Source: "/var/lib/actorlet/pods/u/volumes/empty-dir/a", Target: "/a"},
				{Type: mount.TypeBind, Source: "/etc/ssl", Target: "/etc/ssl", ReadOnly: true},
			}
		}},
		{name: "tmpfs mounts", spec: runtimeadapter.ContainerSpec{Mounts: []runtimeadapter.Mount{
			{Type: runtimeadapter.MountTmpfs, Target: "/cache"},
			{Type: runtimeadapter.MountTmpfs, Target: "/sized", SizeBytes: 64 << 20},
			{Type: runtimeadapter.MountTmpfs, Target: "/ro", ReadOnly: true, SizeBytes: 1000},
		}}, want: func(h *container.HostConfig) {
			h.Tmpfs = map[string]string{"/cache": "rw,exec", "/sized": "rw,exec,size=67108864", "/ro": "ro,exec,size=1000"}
		}},
		{name: "memory limit: no swap beyond it", spec: runtimeadapter.ContainerSpec{Resources: runtimeadapter.Resources{MemoryBytes: 128 << 20}},
			want: func(h *container.HostConfig) { h.Memory, h.MemorySwap = 128<<20, 128<<20 }},
		{name: "cpu quota and shares", spec: runtimeadapter.ContainerSpec{Resources: runtimeadapter.Resources{CPUPeriod: 100000, CPUQuota: 50000, CPUShares: 512}},
			want: func(h *container.HostConfig) { h.CPUPeriod, h.CPUQuota, h.CPUShares = 100000, 50000, 512 }},
		{name: "security", spec: runtimeadapter.ContainerSpec{
			Privileged: true, ReadOnlyRootfs: true, NoNewPrivileges: true,
			CapAdd: []string{"NET_ADMIN", "SYS_TIME"}, CapDrop: []string{"ALL"},
			User: "1000:1000", // a Config field
		}, want: func(h *container.HostConfig) {
			h.Privileged, h.ReadonlyRootfs = true, true
			h.SecurityOpt = []string{"no-new-privileges"}
			h.CapAdd = strslice.StrSlice{"NET_ADMIN", "SYS_TIME"}
			h.CapDrop = strslice.StrSlice{"ALL"}
		}},
		{name: "PID mode: the sandbox's", spec: runtimeadapter.ContainerSpec{PidMode: "container:abc"},
			want: func(h *container.HostConfig) { h.PidMode = "container:abc" }},
		{name: "PID mode of a sandbox its pod shares: its own", spec: runtimeadapter.ContainerSpec{PidMode: runtimeadapter.PidModePod}},
		{name: "supplemental groups", spec: runtimeadapter.ContainerSpec{GroupAdd: []int64{2000, 4000}},
			want: func(h *container.HostConfig) { h.GroupAdd = []string{"2000", "4000"} }},
		{name: "seccomp profile JSON and AppArmor profile", spec: runtimeadapter.ContainerSpec{
			NoNewPrivileges: true, Seccomp: `{"defaultAction":"SCMP_ACT_ALLOW"}`, AppArmor: "k8s-nginx",
		}, want: func(h *container.HostConfig) {
			h.SecurityOpt = []string{"no-new-privileges", `seccomp={"defaultAction":"SCMP_ACT_ALLOW"}`, "apparmor=k8s-nginx"}
		}},
		{name: "unconfined", spec: runtimeadapter.ContainerSpec{Seccomp: runtimeadapter.SeccompUnconfined, AppArmor: runtimeadapter.AppArmorUnconfined},
			want: func(h *container.HostConfig) { h.SecurityOpt = []string{"seccomp=unconfined", "apparmor=unconfined"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := baseHost()
			if tt.want != nil {
				tt.want(want)
			}
			if got := hostConfig(tt.spec); !reflect.DeepEqual(got, want) {
				t.Errorf("hostConfig =\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

func TestContainerConfig(t *testing.T) {
	labels := map[string]string{"io.actorlet.node": "n"}
	tests := []struct {
		name string
		spec runtimeadapter.ContainerSpec
		want *container.Config
	}{
		{name: "plain", spec: runtimeadapter.ContainerSpec{
			Image: "img:1", Labels: labels, Env: []string{"A=1"}, WorkingDir: "/srv", Hostname: "web",
		}, want: &container.Config{Image: "img:1", Labels: labels, Env: []string{"A=1"}, WorkingDir: "/srv", Hostname: "web"}},
		{name: "entrypoint and cmd: nil keeps the image's, empty clears", spec: runtimeadapter.ContainerSpec{
			Image: "img", Entrypoint: []string{"/bin/sh"}, Cmd: []string{},
		}, want: &container.Config{Image: "img", Entrypoint: strslice.StrSlice{"/bin/sh"}, Cmd: strslice.StrSlice{}}},
		{name: "joined network: no hostname", spec: runtimeadapter.ContainerSpec{
			Image: "img", Hostname: "web", NetworkMode: "container:abc",
		}, want: &container.Config{Image: "img"}},
		{name: "host network keeps the hostname field", spec: runtimeadapter.ContainerSpec{
			Image: "img", Hostname: "web", NetworkMode: "host",
		}, want: &container.Config{Image: "img", Hostname: "web"}},
		{name: "user", spec: runtimeadapter.ContainerSpec{Image: "img", User: "1000:2000"},
			want: &container.Config{Image: "img", User: "1000:2000"}},
		{name: "exposed ports of the bindings, deduplicated", spec: runtimeadapter.ContainerSpec{Image: "pause", PortBindings: []runtimeadapter.PortBinding{
			{HostPort: 8080, ContainerPort: 80, Protocol: "tcp"},
			{HostPort: 8081, ContainerPort: 80, Protocol: "tcp"},
			{HostPort: 53, ContainerPort: 53, Protocol: "udp"},
		}}, want: &container.Config{Image: "pause", ExposedPorts: nat.PortSet{"80/tcp": {}, "53/udp": {}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := containerConfig(tt.spec); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("containerConfig =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}
