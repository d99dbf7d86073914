package actors

import (
	"maps"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// withPodStart returns labels with the pod's start time added (labels
// itself is not changed): every container of a pod carries it, so that the
// pod's startTime survives an agent restart and the replacement of its
// sandbox.
func withPodStart(labels map[string]string, start time.Time) map[string]string {
	if start.IsZero() {
		return labels
	}
	out := make(map[string]string, len(labels)+1)
	maps.Copy(out, labels)
	out[runtimeadapter.LabelPodStartTime] = start.UTC().Format(time.RFC3339Nano)
	return out
}
