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

// podStartOf is when the pod the containers cs belong to started, as they
// say: the earliest start-time label; without one (containers made before
// the label existed), the earliest creation time. Zero when cs is empty.
func podStartOf(cs []runtimeadapter.Container) time.Time {
	var labelled, created time.Time
	for i := range cs {
		if t, err := time.Parse(time.RFC3339Nano, cs[i].Labels[runtimeadapter.LabelPodStartTime]); err == nil {
			labelled = earliest(labelled, t)
		}
		created = earliest(created, cs[i].CreatedAt)
	}
	if !labelled.IsZero() {
		return labelled
	}
	return created
}

// earliest is the earlier of two times, a zero one not counting.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// recoverStart takes the pod's start time (status.startTime, and the
// creationTimestamp the API shows) from its containers when they say the
// pod started before this actor thought: after an agent restart or a pod
// actor's restart by its supervisor, the pod started when its first
// sandbox was made, not now. A pod none of whose containers is left has
// nothing to recover from: it starts anew (its containers are all made
// again).
func (a *podActor) recoverStart(cs []runtimeadapter.Container) {
	t := podStartOf(cs)
	if t.IsZero() || (!a.startTime.IsZero() && !t.Before(a.startTime)) {
		return
	}
	a.startTime = t
	a.started = true // it started before this actor: no pod start to measure
}
