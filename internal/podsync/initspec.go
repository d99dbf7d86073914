package podsync

import (
	"github.com/actorlet/actorlet/runtimeadapter"
)

// AsInit turns an app container's runtime spec into an init container's:
// typed "init" and labelled with the sandbox it runs in (LabelSandboxID),
// so a new sandbox runs every init container again.
func AsInit(s runtimeadapter.ContainerSpec, sandboxID string) runtimeadapter.ContainerSpec {
	labels := make(map[string]string, len(s.Labels)+1)
	for k, v := range s.Labels {
		labels[k] = v
	}
	labels[runtimeadapter.LabelContainerType] = string(runtimeadapter.TypeInit)
	labels[LabelSandboxID] = sandboxID
	s.Labels = labels
	return s
}
