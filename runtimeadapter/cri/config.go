package cri

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// The values of AnnotationNetwork.
const (
	networkHost = "host"
	networkPod  = "pod"
)

// podLogDir is the kubelet's log directory of a pod:
// <root>/<namespace>_<name>_<uid>.
func podLogDir(root string, labels map[string]string) string {
	ns := labels[runtimeadapter.LabelPodNamespace]
	if ns == "" {
		ns = "default"
	}
	return filepath.Join(root, ns+"_"+labels[runtimeadapter.LabelPodName]+"_"+labels[runtimeadapter.LabelPodUID])
}

// containerLogPath is a container's log file relative to its pod's log
// directory, as the kubelet's: <container>/<restartCount>.log.
func containerLogPath(labels map[string]string) string {
	name := labels[runtimeadapter.LabelContainerName]
	if name == "" {
		name = "unknown"
	}
	n := labels[runtimeadapter.LabelRestartCount]
	if _, err := strconv.Atoi(n); err != nil {
		n = "0"
	}
	return filepath.Join(name, n+".log")
}

// sandboxConfig is the PodSandboxConfig of a sandbox spec. hostNetwork
// leaves the hostname empty: containerd refuses a hostname without a UTS
// namespace of the pod's own, as the kubelet leaves it.
func sandboxConfig(spec runtimeadapter.ContainerSpec, logRoot string, hostNetwork bool) *runtimeapi.PodSandboxConfig {
	m, _ := runtimeadapter.ParseMeta(spec.Labels)
	network, mode := networkPod, runtimeapi.NamespaceMode_POD
	hostname := spec.Hostname
	if hostNetwork {
		network, mode, hostname = networkHost, runtimeapi.NamespaceMode_NODE, ""
	}
	ns := m.PodNamespace
	if ns == "" {
		ns = "default"
	}
	uid := m.PodUID
	if uid == "" {
		uid = spec.Name
	}
	annotations := map[string]string{AnnotationImage: spec.Image, AnnotationNetwork: network}
	if spec.PidMode == runtimeadapter.PidModePod {
		annotations[AnnotationPID] = runtimeadapter.PidModePod
	}
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: spec.Name, Uid: uid, Namespace: ns, Attempt: uint32(max(m.RestartCount, 0))},
		Hostname:     hostname,
		LogDirectory: podLogDir(logRoot, spec.Labels),
		Labels:       spec.Labels,
		Annotations:  annotations,
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: &runtimeapi.NamespaceOption{
					Network: mode, Pid: sandboxPid(annotations), Ipc: runtimeapi.NamespaceMode_POD,
				},
			},
		},
	}
	for _, p := range spec.PortBindings {
		cfg.PortMappings = append(cfg.PortMappings, &runtimeapi.PortMapping{
			Protocol: protocol(p.Protocol), ContainerPort: int32(p.ContainerPort), HostPort: int32(p.HostPort), HostIp: p.HostIP,
		})
	}
	return cfg
}

// sandboxConfigOf rebuilds the config a sandbox was run with from its
// status, for CreateContainer (which containerd reads its log directory
// and namespaces from).
func sandboxConfigOf(s *runtimeapi.PodSandboxStatus, logRoot string) *runtimeapi.PodSandboxConfig {
	mode := runtimeapi.NamespaceMode_POD
	if s.GetAnnotations()[AnnotationNetwork] == networkHost {
		mode = runtimeapi.NamespaceMode_NODE
	}
	return &runtimeapi.PodSandboxConfig{
		Metadata:     s.GetMetadata(),
		LogDirectory: podLogDir(logRoot, s.GetLabels()),
		Labels:       s.GetLabels(),
		Annotations:  s.GetAnnotations(),
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: &runtimeapi.NamespaceOption{
					Network: mode, Pid: sandboxPid(s.GetAnnotations()), Ipc: runtimeapi.NamespaceMode_POD,
				},
			},
		},
	}
}

// sandboxPid is the PID namespace mode of a sandbox with these
// annotations: POD when its containers share one (AnnotationPID).
func sandboxPid(annotations map[string]string) runtimeapi.NamespaceMode {
	if annotations[AnnotationPID] == runtimeadapter.PidModePod {
		return runtimeapi.NamespaceMode_POD
	}
	return runtimeapi.NamespaceMode_CONTAINER
}

func protocol(p string) runtimeapi.Protocol {
	switch strings.ToLower(p) {
	case "udp":
		return runtimeapi.Protocol_UDP
	case "sctp":
		return runtimeapi.Protocol_SCTP
	}
	return runtimeapi.Protocol_TCP
}

// containerConfig is the ContainerConfig of an app, init or sidecar spec
// in a sandbox whose network is network (networkHost or networkPod).
// seccompPath is where the spec's seccomp profile (JSON) was written, ""
// for none. It refuses what CRI cannot say: a tmpfs mount, a port
// published by a container (ports are the sandbox's).
func containerConfig(spec runtimeadapter.ContainerSpec, network, seccompPath string) (*runtimeapi.ContainerConfig, error) {
	if len(spec.PortBindings) > 0 {
		return nil, fmt.Errorf("container %s: ports are published by its pod's sandbox, not by a container in it", spec.Name)
	}
	m, _ := runtimeadapter.ParseMeta(spec.Labels)
	cfg := &runtimeapi.ContainerConfig{
		Metadata:    &runtimeapi.ContainerMetadata{Name: spec.Name, Attempt: uint32(max(m.RestartCount, 0))},
		Image:       &runtimeapi.ImageSpec{Image: spec.Image},
		Command:     spec.Entrypoint,
		Args:        spec.Cmd,
		WorkingDir:  spec.WorkingDir,
		Labels:      spec.Labels,
		Annotations: map[string]string{AnnotationImage: spec.Image},
		LogPath:     containerLogPath(spec.Labels),
	}
	for _, kv := range spec.Env {
		k, v, _ := strings.Cut(kv, "=")
		cfg.Envs = append(cfg.Envs, &runtimeapi.KeyValue{Key: k, Value: []byte(v)})
	}
	for _, mt := range spec.Mounts {
		if mt.Type == runtimeadapter.MountTmpfs {
			return nil, fmt.Errorf("container %s: tmpfs mount at %s (emptyDir medium Memory): not supported on a CRI runtime yet", spec.Name, mt.Target)
		}
		cfg.Mounts = append(cfg.Mounts, &runtimeapi.Mount{ContainerPath: mt.Target, HostPath: mt.Source, Readonly: mt.ReadOnly})
	}
	sc := &runtimeapi.LinuxContainerSecurityContext{
		Privileged:     spec.Privileged,
		ReadonlyRootfs: spec.ReadOnlyRootfs,
		NoNewPrivs:     spec.NoNewPrivileges,
		// Merge: the runtime adds the groups of the image's /etc/group.
		SupplementalGroups: spec.GroupAdd,
		NamespaceOptions: &runtimeapi.NamespaceOption{
			Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD,
		},
	}
	if network == networkHost {
		sc.NamespaceOptions.Network = runtimeapi.NamespaceMode_NODE
	}
	if strings.HasPrefix(spec.PidMode, "container:") { // the sandbox's: the pod's (shareProcessNamespace)
		sc.NamespaceOptions.Pid = runtimeapi.NamespaceMode_POD
	}
	if spec.User != "" {
		u, g, hasGroup := strings.Cut(spec.User, ":")
		uid, err := strconv.ParseInt(u, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("container %s: user %q: not a numeric uid[:gid]", spec.Name, spec.User)
		}
		sc.RunAsUser = &runtimeapi.Int64Value{Value: uid}
		if hasGroup {
			gid, err := strconv.ParseInt(g, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("container %s: user %q: not a numeric uid[:gid]", spec.Name, spec.User)
			}
			sc.RunAsGroup = &runtimeapi.Int64Value{Value: gid}
		}
	}
	if len(spec.CapAdd) > 0 || len(spec.CapDrop) > 0 {
		sc.Capabilities = &runtimeapi.Capability{AddCapabilities: caps(spec.CapAdd), DropCapabilities: caps(spec.CapDrop)}
	}
	switch spec.Seccomp {
	case "":
		// The runtime's default profile, as on Docker (the kubelet's own
		// default is Unconfined).
		sc.Seccomp = &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}
	case runtimeadapter.SeccompUnconfined:
		sc.Seccomp = &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}
	default:
		sc.Seccomp = &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: seccompPath}
	}
	switch spec.AppArmor {
	case "":
	case runtimeadapter.AppArmorUnconfined:
		sc.Apparmor = &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}
	default:
		sc.Apparmor = &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: spec.AppArmor}
	}
	cfg.Linux = &runtimeapi.LinuxContainerConfig{SecurityContext: sc}
	if res := spec.Resources; res != (runtimeadapter.Resources{}) {
		cfg.Linux.Resources = &runtimeapi.LinuxContainerResources{
			CpuPeriod: res.CPUPeriod, CpuQuota: res.CPUQuota, CpuShares: res.CPUShares, MemoryLimitInBytes: res.MemoryBytes,
		}
	}
	return cfg, nil
}

// caps names capabilities as CRI wants them: without "CAP_" ("ALL" kept).
func caps(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, strings.TrimPrefix(strings.ToUpper(n), "CAP_"))
	}
	return out
}

// writeSeccomp writes a seccomp profile's JSON under dir, named by its
// hash (so one profile is one file), and returns its path.
func writeSeccomp(dir, profile string) (string, error) {
	sum := sha256.Sum256([]byte(profile))
	path := filepath.Join(dir, "seccomp", hex.EncodeToString(sum[:])+".json")
	if fileExists(path) {
		return path, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("seccomp profile: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(profile), 0o644); err != nil {
		return "", fmt.Errorf("seccomp profile %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("seccomp profile %s: %w", path, err)
	}
	return path, nil
}
