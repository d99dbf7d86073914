package actors

import (
	"fmt"

	"github.com/actorlet/actorlet/internal/podsync"
)

// killMessage is the message of the Killing event for k (of container
// name), as the kubelet words it: why the actor decided it (a failed
// probe), a changed definition, else "Stopping container <name>".
func (w *worker) killMessage(k podsync.Kill, name string) string {
	if msg := w.killMessages[k.Container.ID]; msg != "" {
		return msg
	}
	if k.Reason == podsync.ReasonSpecChanged && k.Sidecar {
		return fmt.Sprintf("Init container %s definition changed", name)
	}
	if k.Reason == podsync.ReasonSpecChanged {
		return fmt.Sprintf("Container %s definition changed, will be restarted", name)
	}
	return "Stopping container " + name
}
