package podsync

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// GracePeriod is the pod's terminationGracePeriodSeconds (30 s when unset,
// as Kubernetes defaults it).
func GracePeriod(pod *v1.Pod) time.Duration {
	if pod == nil || pod.Spec.TerminationGracePeriodSeconds == nil {
		return 30 * time.Second
	}
	return time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
}

func meta(node string, pod *v1.Pod, name string, typ runtimeadapter.ContainerType, hash string, restarts int) runtimeadapter.Meta {
	return runtimeadapter.Meta{
		Node: node, PodUID: string(pod.UID), PodName: pod.Name, PodNamespace: pod.Namespace,
		ContainerName: name, Type: typ, Hash: hash, RestartCount: restarts,
		GracePeriod: GracePeriod(pod),
	}
}

// hostname is the pod's hostname, cut to the 63 characters a Linux
// hostname (and a DNS-1123 label) allows.
func hostname(pod *v1.Pod) string {
	h := pod.Name
	if pod.Spec.Hostname != "" {
		h = pod.Spec.Hostname
	}
	if len(h) > 63 {
		h = h[:63]
	}
	return h
}

// SandboxSpec is the runtime spec of a pod's sandbox: the container that
// holds the pod's network namespace (the pause image).
func SandboxSpec(node string, pod *v1.Pod, image string, attempt int) runtimeadapter.ContainerSpec {
	m := meta(node, pod, runtimeadapter.SandboxName, runtimeadapter.TypeSandbox, SandboxHash(pod), attempt)
	s := runtimeadapter.ContainerSpec{
		Name:   runtimeadapter.ContainerName(runtimeadapter.SandboxName, pod.Name, pod.Namespace, string(pod.UID), attempt),
		Image:  image,
		Labels: m.Labels(),
	}
	if pod.Spec.HostNetwork {
		s.NetworkMode = "host"
	} else {
		s.Hostname = hostname(pod)
	}
	return s
}

// AppSpec is the runtime spec of one app container of pod, joining the
// network namespace of the sandbox sandboxID (or the host's, with
// hostNetwork). restarts is the container's restart count, which is also its
// attempt number in the runtime name.
func AppSpec(node string, pod *v1.Pod, c *v1.Container, sandboxID string, restarts int) runtimeadapter.ContainerSpec {
	m := meta(node, pod, c.Name, runtimeadapter.TypeApp, ContainerHash(c), restarts)
	s := runtimeadapter.ContainerSpec{
		Name:       runtimeadapter.ContainerName(c.Name, pod.Name, pod.Namespace, string(pod.UID), restarts),
		Image:      c.Image,
		Entrypoint: c.Command,
		Cmd:        c.Args,
		WorkingDir: c.WorkingDir,
		Labels:     m.Labels(),
	}
	for _, e := range c.Env {
		s.Env = append(s.Env, e.Name+"="+e.Value)
	}
	if pod.Spec.HostNetwork {
		s.NetworkMode = "host"
	} else {
		s.NetworkMode = "container:" + sandboxID
	}
	return s
}
