package podsync

import (
	"sort"
	"strconv"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// Sidecar containers (KEP-753): init containers with restartPolicy Always.
// They start in order with the other init containers, but the next one
// starts as soon as the sidecar has started (its startup probe, if any,
// passed) instead of waiting for it to exit; they are restarted after
// CrashLoopBackOff whatever the pod's restartPolicy, probed, count toward
// the pod's readiness, never keep a finished pod open, and are stopped
// after the app containers, in reverse order.

// LabelSidecar, on a sidecar's instances, is its index in the spec's
// initContainers: a removed pod's containers are stopped without a spec,
// the sidecars last and in reverse order.
const LabelSidecar = "io.actorlet.sidecar.index"

// IsSidecar reports whether c (an init container) is a sidecar.
func IsSidecar(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// AsSidecar labels an init container's runtime spec as the sidecar at
// index in the spec's initContainers.
func AsSidecar(s runtimeadapter.ContainerSpec, index int) runtimeadapter.ContainerSpec {
	labels := make(map[string]string, len(s.Labels)+1)
	for k, v := range s.Labels {
		labels[k] = v
	}
	labels[LabelSidecar] = strconv.Itoa(index)
	s.Labels = labels
	return s
}

// sidecarIndex is c's sidecar index, or -1 when it is no sidecar.
func sidecarIndex(c *runtimeadapter.Container) int {
	v, ok := c.Labels[LabelSidecar]
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// sidecars returns the names of pod's sidecars.
func sidecars(pod *v1.Pod) map[string]bool {
	out := map[string]bool{}
	for i := range pod.Spec.InitContainers {
		if IsSidecar(&pod.Spec.InitContainers[i]) {
			out[pod.Spec.InitContainers[i].Name] = true
		}
	}
	return out
}

// orderKills puts the kills of sidecars after every other container's and
// before the sandboxes', in reverse spec order (highest index first), as
// the kubelet stops a pod: the apps, then the sidecars from the last to
// the first, then the sandbox. Each kill of a sidecar is marked Sidecar so
// the executor stops them one at a time.
func orderKills(ks []Kill) []Kill {
	var others, side, sandboxes []Kill
	for _, k := range ks {
		switch {
		case k.Container.Labels[runtimeadapter.LabelContainerType] == string(runtimeadapter.TypeSandbox):
			sandboxes = append(sandboxes, k)
		case sidecarIndex(&k.Container) >= 0:
			k.Sidecar = true
			side = append(side, k)
		default:
			others = append(others, k)
		}
	}
	sort.SliceStable(side, func(i, j int) bool { return sidecarIndex(&side[i].Container) > sidecarIndex(&side[j].Container) })
	return append(append(others, side...), sandboxes...)
}
