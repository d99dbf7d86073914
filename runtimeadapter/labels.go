package runtimeadapter

import (
	"fmt"
	"strconv"
	"time"
)

// Labels on every container actorlet creates. They are a public interface:
// operators filter `docker ps --filter label=io.actorlet.node=NAME`, and a
// container without them is never touched.
const (
	LabelPrefix        = "io.actorlet."
	LabelNode          = "io.actorlet.node"
	LabelPodUID        = "io.actorlet.pod.uid"
	LabelPodName       = "io.actorlet.pod.name"
	LabelPodNamespace  = "io.actorlet.pod.namespace"
	LabelContainerName = "io.actorlet.container.name"
	LabelContainerType = "io.actorlet.container.type"
	LabelContainerHash = "io.actorlet.container.hash"
	LabelRestartCount  = "io.actorlet.container.restart-count"
	LabelGracePeriod   = "io.actorlet.pod.termination-grace-period"
	// LabelPodStartTime is when the pod started on this node (RFC 3339,
	// UTC): its status.startTime, recovered from it after an agent restart.
	LabelPodStartTime = "io.actorlet.pod.start-time"
)

// ContainerType is the value of LabelContainerType.
type ContainerType string

const (
	TypeSandbox ContainerType = "sandbox"
	TypeInit    ContainerType = "init"
	TypeApp     ContainerType = "app"
)

// SandboxName is the container name label of a pod's sandbox. Kubernetes
// container names are DNS-1123 labels (lower case), so it never collides.
const SandboxName = "POD"

// Meta is what the labels of a managed container say.
type Meta struct {
	Node          string
	PodUID        string
	PodName       string
	PodNamespace  string
	ContainerName string
	Type          ContainerType
	Hash          string
	RestartCount  int
	// GracePeriod is the pod's terminationGracePeriodSeconds at creation.
	GracePeriod time.Duration
}

// Labels renders m as container labels.
func (m Meta) Labels() map[string]string {
	return map[string]string{
		LabelNode:          m.Node,
		LabelPodUID:        m.PodUID,
		LabelPodName:       m.PodName,
		LabelPodNamespace:  m.PodNamespace,
		LabelContainerName: m.ContainerName,
		LabelContainerType: string(m.Type),
		LabelContainerHash: m.Hash,
		LabelRestartCount:  strconv.Itoa(m.RestartCount),
		LabelGracePeriod:   strconv.FormatInt(int64(m.GracePeriod/time.Second), 10),
	}
}

// ParseMeta reads the labels of a container. It fails when any identifying
// label (node, pod UID, container name, type) is missing: such a container is
// not actorlet's. Numeric labels that do not parse default to 0 and 30 s.
func ParseMeta(labels map[string]string) (Meta, error) {
	m := Meta{
		Node:          labels[LabelNode],
		PodUID:        labels[LabelPodUID],
		PodName:       labels[LabelPodName],
		PodNamespace:  labels[LabelPodNamespace],
		ContainerName: labels[LabelContainerName],
		Type:          ContainerType(labels[LabelContainerType]),
		Hash:          labels[LabelContainerHash],
		GracePeriod:   30 * time.Second,
	}
	for _, k := range []string{LabelNode, LabelPodUID, LabelContainerName, LabelContainerType} {
		if labels[k] == "" {
			return m, fmt.Errorf("label %s missing: not an actorlet container", k)
		}
	}
	if v, err := strconv.Atoi(labels[LabelRestartCount]); err == nil && v >= 0 {
		m.RestartCount = v
	}
	if v, err := strconv.ParseInt(labels[LabelGracePeriod], 10, 64); err == nil && v >= 0 {
		m.GracePeriod = time.Duration(v) * time.Second
	}
	return m, nil
}

// IsManaged reports whether labels mark a container of node.
func IsManaged(labels map[string]string, node string) bool {
	m, err := ParseMeta(labels)
	return err == nil && m.Node == node
}

// ContainerName is the deterministic runtime name of one attempt of a
// container: actorlet_<container>_<pod>_<namespace>_<uid prefix>_<attempt>.
// A create retried after a crash hits a name conflict and adopts the
// existing container instead of making a second one.
func ContainerName(container, pod, namespace, uid string, attempt int) string {
	prefix := uid
	if len(prefix) > 8 {
		prefix = prefix[:8]
	}
	return fmt.Sprintf("actorlet_%s_%s_%s_%s_%d", container, pod, namespace, prefix, attempt)
}
