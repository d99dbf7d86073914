package podsync

import (
	"encoding/json"
	"fmt"
	"hash/fnv"

	v1 "k8s.io/api/core/v1"
)

// hashedContainer is the part of a container spec whose change means the
// running container must be replaced. It is a fixed, ordered struct (not
// v1.Container itself) so that a new field in a future k8s.io/api, or a
// field actorlet does not run, cannot change every hash on upgrade. The
// golden test pins the output.
type hashedContainer struct {
	Name       string             `json:"name"`
	Image      string             `json:"image"`
	Command    []string           `json:"command,omitempty"`
	Args       []string           `json:"args,omitempty"`
	WorkingDir string             `json:"workingDir,omitempty"`
	Env        []v1.EnvVar        `json:"env,omitempty"`
	Ports      []v1.ContainerPort `json:"ports,omitempty"`
}

// ContainerHash returns the spec hash recorded in the
// io.actorlet.container.hash label: FNV-32a over the canonical JSON of the
// fields actorlet runs, in hex.
func ContainerHash(c *v1.Container) string {
	return hashJSON(hashedContainer{
		Name: c.Name, Image: c.Image, Command: c.Command, Args: c.Args,
		WorkingDir: c.WorkingDir, Env: c.Env, Ports: c.Ports,
	})
}

// hashedSandbox is what makes a pod's sandbox need replacing.
type hashedSandbox struct {
	HostNetwork bool `json:"hostNetwork,omitempty"`
}

// SandboxHash returns the spec hash of a pod's sandbox.
func SandboxHash(pod *v1.Pod) string {
	return hashJSON(hashedSandbox{HostNetwork: pod.Spec.HostNetwork})
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
