package podsync

import (
	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// InitSpec is the runtime spec of one init container: an app spec typed
// "init" and labelled with the sandbox it runs in (LabelSandboxID), so a
// new sandbox runs every init container again. restarts is its attempt.
func InitSpec(node string, pod *v1.Pod, c *v1.Container, sandboxID string, restarts int) runtimeadapter.ContainerSpec {
	s := AppSpec(node, pod, c, sandboxID, restarts)
	s.Labels[runtimeadapter.LabelContainerType] = string(runtimeadapter.TypeInit)
	s.Labels[LabelSandboxID] = sandboxID
	return s
}
