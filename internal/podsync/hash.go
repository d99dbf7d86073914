package podsync

import (
	"encoding/json"
	"fmt"
	"hash/fnv"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// hashedContainer is the part of a container spec whose change means the
// running container must be replaced. It is a fixed, ordered struct (not
// v1.Container itself) so that a new field in a future k8s.io/api, or a
// field actorlet does not run, cannot change every hash on upgrade. The
// golden test pins the output.
type hashedContainer struct {
	Name         string             `json:"name"`
	Image        string             `json:"image"`
	Command      []string           `json:"command,omitempty"`
	Args         []string           `json:"args,omitempty"`
	WorkingDir   string             `json:"workingDir,omitempty"`
	Env          []v1.EnvVar        `json:"env,omitempty"`
	Ports        []v1.ContainerPort `json:"ports,omitempty"`
	VolumeMounts []v1.VolumeMount   `json:"volumeMounts,omitempty"`
	Limits       v1.ResourceList    `json:"limits,omitempty"`
	Security     *hashedSecurity    `json:"security,omitempty"`
}

// hashedSecurity is the container's own security settings that change
// what runs, normalised so that harmless explicit values (privileged:
// false) hash as absent.
type hashedSecurity struct {
	RunAsUser       *int64   `json:"runAsUser,omitempty"`
	RunAsGroup      *int64   `json:"runAsGroup,omitempty"`
	ReadOnlyRootfs  bool     `json:"readOnlyRootFilesystem,omitempty"`
	Privileged      bool     `json:"privileged,omitempty"`
	NoNewPrivileges bool     `json:"noNewPrivileges,omitempty"`
	CapAdd          []string `json:"capAdd,omitempty"`
	CapDrop         []string `json:"capDrop,omitempty"`
	// The profiles hash as absent when unset, so containers created before
	// actorlet honoured them keep their hash.
	Seccomp  *v1.SeccompProfile  `json:"seccompProfile,omitempty"`
	AppArmor *v1.AppArmorProfile `json:"appArmorProfile,omitempty"`
}

func securityOf(sc *v1.SecurityContext) *hashedSecurity {
	if sc == nil {
		return nil
	}
	h := hashedSecurity{RunAsUser: sc.RunAsUser, RunAsGroup: sc.RunAsGroup}
	h.ReadOnlyRootfs = sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem
	h.Privileged = sc.Privileged != nil && *sc.Privileged
	h.NoNewPrivileges = sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation
	if sc.Capabilities != nil {
		for _, c := range sc.Capabilities.Add {
			h.CapAdd = append(h.CapAdd, string(c))
		}
		for _, c := range sc.Capabilities.Drop {
			h.CapDrop = append(h.CapDrop, string(c))
		}
	}
	h.Seccomp, h.AppArmor = sc.SeccompProfile, sc.AppArmorProfile
	if h.RunAsUser == nil && h.RunAsGroup == nil && !h.ReadOnlyRootfs && !h.Privileged && !h.NoNewPrivileges &&
		len(h.CapAdd) == 0 && len(h.CapDrop) == 0 && h.Seccomp == nil && h.AppArmor == nil {
		return nil
	}
	return &h
}

// ContainerHash returns the spec hash recorded in the
// io.actorlet.container.hash label: FNV-32a over the canonical JSON of the
// fields actorlet runs, in hex.
func ContainerHash(c *v1.Container) string {
	return hashJSON(hashedContainer{
		Name: c.Name, Image: c.Image, Command: c.Command, Args: c.Args,
		WorkingDir: c.WorkingDir, Env: c.Env, Ports: c.Ports,
		VolumeMounts: c.VolumeMounts, Limits: c.Resources.Limits, Security: securityOf(c.SecurityContext),
	})
}

// hashedSandbox is what makes a pod's sandbox need replacing.
type hashedSandbox struct {
	HostNetwork  bool                         `json:"hostNetwork,omitempty"`
	PortBindings []runtimeadapter.PortBinding `json:"portBindings,omitempty"`
	Hostname     string                       `json:"hostname,omitempty"`
	// SharePID: absent when false, so sandboxes made before actorlet
	// honoured shareProcessNamespace keep their hash.
	SharePID bool `json:"shareProcessNamespace,omitempty"`
}

// SandboxHash returns the spec hash of a pod's sandbox: its network
// (hostNetwork, the host ports it publishes), hostname and PID namespace
// (shareProcessNamespace: every container joins it when it is made). Docker binds
// ports only when the sandbox is created, so a host port edit replaces it.
func SandboxHash(pod *v1.Pod) string {
	return hashJSON(hashedSandbox{HostNetwork: pod.Spec.HostNetwork, PortBindings: PortBindings(pod), Hostname: pod.Spec.Hostname, SharePID: sharesPID(pod)})
}

func hashJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil { // only plain data above: cannot happen
		panic(fmt.Sprintf("podsync: hash: %v", err))
	}
	h := fnv.New32a()
	h.Write(b)
	return fmt.Sprintf("%08x", h.Sum32())
}
