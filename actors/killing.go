package actors

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/internal/probe"
)

// killMessage is the message of the Killing event for k (of container
// name), as the kubelet words it: why the actor decided it (a failed
// probe), a changed definition, else "Stopping container <name>".
func (w *worker) killMessage(k podsync.Kill, name string) string {
	if msg := w.killMessages[k.Container.ID]; msg != "" {
		return msg
	}
	if k.Reason == podsync.ReasonSpecChanged {
		return fmt.Sprintf("Container %s definition changed, will be restarted", name)
	}
	return "Stopping container " + name
}

// probeKillMessage is the kubelet's Killing message for a container whose
// liveness or startup probe failed: restarted unless restartPolicy is
// Never.
func probeKillMessage(name string, kind probe.Kind, policy v1.RestartPolicy) string {
	msg := fmt.Sprintf("Container %s failed %s probe", name, kind)
	if policy != v1.RestartPolicyNever {
		msg += ", will be restarted"
	}
	return msg
}
