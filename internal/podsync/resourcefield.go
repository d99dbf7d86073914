package podsync

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Resource names a resourceFieldRef may name.
const (
	ResourceLimitsCPU       = "limits.cpu"
	ResourceLimitsMemory    = "limits.memory"
	ResourceLimitsEphemeral = "limits.ephemeral-storage"
	ResourceRequestsCPU     = "requests.cpu"
	ResourceRequestsMemory  = "requests.memory"
	ResourceRequestsEphem   = "requests.ephemeral-storage"
)

// ResourceFieldNames are the resources a resourceFieldRef may name on
// actorlet (the kubelet also knows hugepages-*, which actorlet does not
// run).
var ResourceFieldNames = []string{
	ResourceLimitsCPU, ResourceLimitsMemory, ResourceLimitsEphemeral,
	ResourceRequestsCPU, ResourceRequestsMemory, ResourceRequestsEphem,
}

// ResourceFieldRef resolves a resourceFieldRef of container c (or of the
// container ref.ContainerName names, when set) of pod, as the kubelet
// does: a limit the container does not set is the pod-level one, else
// the node's allocatable amount (d.Allocatable; an error when unknown); a request it does not
// set is 0. The value is divided by ref.Divisor (1 when zero) and rounded
// up: CPU in millicores, memory and ephemeral storage in bytes.
func (d Downward) ResourceFieldRef(pod *v1.Pod, c *v1.Container, ref *v1.ResourceFieldSelector) (string, error) {
	if ref.ContainerName != "" {
		c = nil
		for _, cc := range allContainers(pod) {
			if cc.Name == ref.ContainerName {
				c = cc
			}
		}
		if c == nil {
			return "", fmt.Errorf("resource %q: container %q not found in the pod", ref.Resource, ref.ContainerName)
		}
	}
	if c == nil {
		return "", fmt.Errorf("resource %q: containerName is required", ref.Resource)
	}
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok || (kind != "limits" && kind != "requests") {
		return "", fmt.Errorf("resource %q is not supported by actorlet", ref.Resource)
	}
	rn := v1.ResourceName(name)
	if rn != v1.ResourceCPU && rn != v1.ResourceMemory && rn != v1.ResourceEphemeralStorage {
		return "", fmt.Errorf("resource %q is not supported by actorlet", ref.Resource)
	}
	var q resource.Quantity
	if kind == "limits" {
		v, set := effectiveLimits(pod, c)[rn]
		if !set {
			v, set = d.Allocatable[rn]
			if !set {
				return "", fmt.Errorf("resource %q: container %q sets no limit and the node's allocatable %s is not known", ref.Resource, c.Name, rn)
			}
		}
		q = v
	} else {
		q = c.Resources.Requests[rn]
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	var n float64
	if rn == v1.ResourceCPU {
		n = math.Ceil(float64(q.MilliValue()) / float64(divisor.MilliValue()))
	} else {
		n = math.Ceil(float64(q.Value()) / float64(divisor.Value()))
	}
	return strconv.FormatInt(int64(n), 10), nil
}
