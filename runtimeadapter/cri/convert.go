package cri

import (
	"maps"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// reasonStartError is containerd's reason of a container whose start failed
// (it is then "exited", never started, exit code 128).
const reasonStartError = "StartError"

// fromStatus converts a CRI container status to actorlet's view.
//
// A container whose start failed (never started, exited with a reason of
// StartError or exit code 128) is "created" with Error set, as Docker
// reports one and podsync reads it (a StartError, never started again);
// its finish time is dropped, as Docker gives none.
func fromStatus(s *runtimeapi.ContainerStatus) runtimeadapter.Container {
	c := runtimeadapter.Container{
		ID:        s.GetId(),
		Name:      s.GetMetadata().GetName(),
		Image:     imageOf(s.GetAnnotations(), s.GetImage().GetImage()),
		Labels:    maps.Clone(s.GetLabels()),
		CreatedAt: fromNanos(s.GetCreatedAt()),
	}
	if c.Labels == nil {
		c.Labels = map[string]string{}
	}
	switch s.GetState() {
	case runtimeapi.ContainerState_CONTAINER_CREATED:
		c.State, c.RawState = runtimeadapter.StateUnknown, "created"
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		c.State, c.RawState = runtimeadapter.StateRunning, "running"
		c.StartedAt = fromNanos(s.GetStartedAt())
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		c.ExitCode = int(s.GetExitCode())
		if s.GetStartedAt() == 0 && (s.GetReason() == reasonStartError || s.GetExitCode() == 128) {
			c.State, c.RawState = runtimeadapter.StateUnknown, "created"
			c.Error = s.GetMessage()
			if c.Error == "" {
				c.Error = s.GetReason()
			}
			if c.Error == "" {
				c.Error = "start failed"
			}
			return c
		}
		c.State, c.RawState = runtimeadapter.StateExited, "exited"
		c.StartedAt = fromNanos(s.GetStartedAt())
		c.FinishedAt = fromNanos(s.GetFinishedAt())
		c.Reason = s.GetReason()
		if c.Reason == "" {
			c.Reason = "Completed"
			if c.ExitCode != 0 {
				c.Reason = "Error"
			}
		}
	default:
		c.State, c.RawState = runtimeadapter.StateUnknown, "unknown"
	}
	return c
}

// fromListed converts a listed container that is only created (a listing
// says nothing more of it) to actorlet's view; it equals fromStatus of the
// same container.
func fromListed(l *runtimeapi.Container) runtimeadapter.Container {
	c := runtimeadapter.Container{
		ID:        l.GetId(),
		Name:      l.GetMetadata().GetName(),
		Image:     imageOf(l.GetAnnotations(), l.GetImage().GetImage()),
		Labels:    maps.Clone(l.GetLabels()),
		CreatedAt: fromNanos(l.GetCreatedAt()),
		State:     runtimeadapter.StateUnknown,
		RawState:  "created",
	}
	if c.Labels == nil {
		c.Labels = map[string]string{}
	}
	return c
}

// fromSandbox converts a pod sandbox to actorlet's view of a sandbox
// container: running while ready (since its creation: RunPodSandbox starts
// it), exited (0, Completed) once not, finished when first seen so (done;
// CRI keeps no finish time). ip is its pod IP, "" on the host's network.
func fromSandbox(id string, md *runtimeapi.PodSandboxMetadata, state runtimeapi.PodSandboxState, created int64,
	labels, annotations map[string]string, ip string, done time.Time) runtimeadapter.Container {
	c := runtimeadapter.Container{
		ID:        id,
		Name:      md.GetName(),
		Image:     annotations[AnnotationImage],
		Labels:    maps.Clone(labels),
		CreatedAt: fromNanos(created),
	}
	if c.Labels == nil {
		c.Labels = map[string]string{}
	}
	c.StartedAt = c.CreatedAt
	if state == runtimeapi.PodSandboxState_SANDBOX_READY {
		c.State, c.RawState, c.IP = runtimeadapter.StateRunning, "running", ip
		return c
	}
	c.State, c.RawState, c.Reason, c.FinishedAt = runtimeadapter.StateExited, "exited", "Completed", done
	return c
}

// imageOf is the image reference actorlet asked for (the annotation), else
// the runtime's.
func imageOf(annotations map[string]string, runtimes string) string {
	if img := annotations[AnnotationImage]; img != "" {
		return img
	}
	return runtimes
}

// fromNanos converts CRI's Unix nanoseconds; 0 is the zero time.
func fromNanos(ns int64) time.Time {
	if ns <= 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}
