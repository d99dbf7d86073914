package docker

import (
	"strconv"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/strslice"
	"github.com/docker/go-connections/nat"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// noNewPrivileges is the security option that sets no_new_privs.
const noNewPrivileges = "no-new-privileges"

// containerConfig maps spec to Docker's container config: image, labels,
// env, working dir, user, entrypoint and cmd (nil keeps the image's), the
// hostname (dropped with a "container:<id>" network mode: the joined
// sandbox's applies, and Docker refuses both) and, for every port binding,
// the exposed port.
func containerConfig(spec runtimeadapter.ContainerSpec) *container.Config {
	cfg := &container.Config{
		Image:      spec.Image,
		Labels:     spec.Labels,
		Env:        spec.Env,
		WorkingDir: spec.WorkingDir,
		Hostname:   spec.Hostname,
		User:       spec.User,
	}
	if strings.HasPrefix(spec.NetworkMode, "container:") {
		cfg.Hostname = ""
	}
	if spec.Entrypoint != nil {
		cfg.Entrypoint = strslice.StrSlice(spec.Entrypoint)
	}
	if spec.Cmd != nil {
		cfg.Cmd = strslice.StrSlice(spec.Cmd)
	}
	for _, b := range spec.PortBindings {
		if cfg.ExposedPorts == nil {
			cfg.ExposedPorts = nat.PortSet{}
		}
		cfg.ExposedPorts[natPort(b)] = struct{}{}
	}
	return cfg
}

// hostConfig maps spec to Docker's host config. Always: restart policy
// "no" and json-file logs rotated at 10 MB × 5. From spec: network and
// PID modes;
// port bindings (several host ports may publish one container port);
// bind mounts (rprivate, ReadOnly honoured) in HostConfig.Mounts and tmpfs
// mounts in HostConfig.Tmpfs ("exec", as a Kubernetes memory emptyDir, plus
// "ro" and "size=<bytes>" as set: the Mounts API cannot lift Docker's
// noexec default before API 1.46); memory limit with MemorySwap equal to it
// (no swap, as the kubelet); CFS quota and period; CPU shares; user-facing
// security: privileged, capabilities, supplemental groups (GroupAdd),
// read-only root filesystem and no-new-privileges.
func hostConfig(spec runtimeadapter.ContainerSpec) *container.HostConfig {
	host := &container.HostConfig{
		RestartPolicy: container.RestartPolicy{Name: container.RestartPolicyDisabled},
		LogConfig: container.LogConfig{
			Type:   logDriver,
			Config: map[string]string{"max-size": logMaxSize, "max-file": logMaxFile},
		},
		NetworkMode:    container.NetworkMode(spec.NetworkMode),
		PidMode:        pidMode(spec.PidMode),
		Privileged:     spec.Privileged,
		ReadonlyRootfs: spec.ReadOnlyRootfs,
	}
	for _, b := range spec.PortBindings {
		if host.PortBindings == nil {
			host.PortBindings = nat.PortMap{}
		}
		p := natPort(b)
		host.PortBindings[p] = append(host.PortBindings[p], nat.PortBinding{HostIP: b.HostIP, HostPort: strconv.Itoa(b.HostPort)})
	}
	for _, m := range spec.Mounts {
		switch m.Type {
		case runtimeadapter.MountTmpfs:
			if host.Tmpfs == nil {
				host.Tmpfs = map[string]string{}
			}
			host.Tmpfs[m.Target] = tmpfsOptions(m)
		default: // MountBind
			host.Mounts = append(host.Mounts, mount.Mount{
				Type: mount.TypeBind, Source: m.Source, Target: m.Target, ReadOnly: m.ReadOnly,
			})
		}
	}
	r := spec.Resources
	host.Memory = r.MemoryBytes
	if r.MemoryBytes > 0 {
		host.MemorySwap = r.MemoryBytes
	}
	host.CPUPeriod = r.CPUPeriod
	host.CPUQuota = r.CPUQuota
	host.CPUShares = r.CPUShares
	if len(spec.CapAdd) > 0 {
		host.CapAdd = strslice.StrSlice(spec.CapAdd)
	}
	if len(spec.CapDrop) > 0 {
		host.CapDrop = strslice.StrSlice(spec.CapDrop)
	}
	for _, g := range spec.GroupAdd {
		host.GroupAdd = append(host.GroupAdd, strconv.FormatInt(g, 10))
	}
	if spec.NoNewPrivileges {
		host.SecurityOpt = append(host.SecurityOpt, noNewPrivileges)
	}
	if spec.Seccomp != "" {
		host.SecurityOpt = append(host.SecurityOpt, "seccomp="+spec.Seccomp)
	}
	if spec.AppArmor != "" {
		host.SecurityOpt = append(host.SecurityOpt, "apparmor="+spec.AppArmor)
	}
	return host
}

// pidMode is Docker's PID mode of a spec's: a sandbox's PidModePod is
// its own namespace (the containers join it with "container:<id>").
func pidMode(m string) container.PidMode {
	if m == runtimeadapter.PidModePod {
		return ""
	}
	return container.PidMode(m)
}

// natPort is Docker's "<port>/<protocol>" key of a binding; an empty
// protocol means tcp.
func natPort(b runtimeadapter.PortBinding) nat.Port {
	proto := strings.ToLower(b.Protocol)
	if proto == "" {
		proto = "tcp"
	}
	return nat.Port(strconv.Itoa(b.ContainerPort) + "/" + proto)
}

// tmpfsOptions is the option string of a tmpfs mount in HostConfig.Tmpfs.
func tmpfsOptions(m runtimeadapter.Mount) string {
	opts := []string{"rw", "exec"}
	if m.ReadOnly {
		opts[0] = "ro"
	}
	if m.SizeBytes > 0 {
		opts = append(opts, "size="+strconv.FormatInt(m.SizeBytes, 10))
	}
	return strings.Join(opts, ",")
}
