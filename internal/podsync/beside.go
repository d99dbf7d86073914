package podsync

import (
	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// JoinsSandbox reports whether pod's containers join a namespace of its
// sandbox container, and so can only start once the sandbox runs (a
// runtime refuses to join a namespace of a container that does not run:
// Docker's "cannot join network of a non running container"). Per
// namespace, as AppSpecFor and SandboxSpec make them:
//   - network: the sandbox's ("container:<id>"; Docker also copies the
//     sandbox's hostname, hosts and resolv.conf then), unless hostNetwork:
//     then the host's;
//   - PID: the sandbox's with shareProcessNamespace, else the container's
//     own;
//   - UTS: always the container's own (Docker has no mode to join
//     another container's; with hostNetwork it holds the host's name);
//   - IPC: always the container's own (actorlet sets no IPC mode, so
//     Docker's default "private": the pod's containers share none, and
//     hostIPC is refused);
//   - mount, cgroup: always the container's own.
//
// (Measured on Docker 20.10 with /proc/<pid>/ns: BENCHMARKS.md section 10.)
//
// A pod for which it is false needs nothing of its sandbox at run time:
// its first container may start while the sandbox starts (see
// Plan.StartBeside). TestJoinsSandboxAgreesWithSpecs holds it to
// AppSpecFor.
func JoinsSandbox(pod *v1.Pod) bool {
	return !pod.Spec.HostNetwork || sharesPID(pod)
}

// startsBeside is Plan.StartBeside of plan p for pod, on a runtime whose
// sandbox is a container (Input.SandboxIsContainer): a new sandbox (not
// an adopted one), the pod's first (attempt 0: no sandbox of the pod ever
// failed to start, or died), a start planned, and containers that join
// none of its namespaces.
func startsBeside(pod *v1.Pod, p *Plan) bool {
	return p.CreateSandbox && p.SandboxAttempt == 0 && len(p.Start) > 0 && !JoinsSandbox(pod)
}

// adoptsBeside reports, on a runtime whose sandbox is a container
// (Input.SandboxIsContainer), whether the newest sandbox sb, created and never
// started, is adopted with the pod's containers planned as in a running
// sandbox (the running ones kept): the pod's first sandbox, of the pod's
// spec, whose containers join none of its namespaces. Such a pod's first
// container may have been started beside the sandbox (StartBeside) when
// the agent stopped before the sandbox's start returned: it is still
// running and is not recreated (invariant 4).
func adoptsBeside(pod *v1.Pod, sb *runtimeadapter.Container) bool {
	return sb != nil && Adoptable(sb) && labelHash(sb) == SandboxHash(pod) && restarts(sb) == 0 && !JoinsSandbox(pod)
}
