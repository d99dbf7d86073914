package nodestate

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// requests is a pod's effective cpu (millicores) and memory (bytes)
// requests, the two resources the kubelet's admission checks.
type requests struct{ cpu, memory int64 }

func (r requests) zero() bool { return r.cpu == 0 && r.memory == 0 }

// requestsOf is p's effective request as Kubernetes 1.33 counts it
// (component-helpers' PodRequests: the apps and sidecars, against the
// largest init container with the sidecars started before it, plus the
// pod's overhead).
func requestsOf(p *v1.Pod) requests {
	if p == nil {
		return requests{}
	}
	r := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	cpu, mem := r[v1.ResourceCPU], r[v1.ResourceMemory]
	return requests{cpu: cpu.MilliValue(), memory: mem.Value()}
}

// shortage is a resource a pod's requests do not fit in, as the kubelet's
// InsufficientResourceError: cpu in millicores, memory in bytes.
type shortage struct {
	name                      v1.ResourceName
	requested, used, capacity int64
}

// Reason is the kubelet's rejection reason for a non-critical pod:
// OutOfcpu, OutOfmemory.
func (s shortage) Reason() string { return "OutOf" + string(s.name) }

func (s shortage) String() string {
	return fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d", s.name, s.requested, s.used, s.capacity)
}

// resourceShortage reports the first resource (cpu, then memory) that
// want does not fit in allocatable beside used. A resource allocatable
// does not name is not checked.
func resourceShortage(want, used requests, allocatable v1.ResourceList) (shortage, bool) {
	check := func(name v1.ResourceName, want, used int64, capacity func(resource.Quantity) int64) (shortage, bool) {
		c, ok := allocatable[name]
		if !ok || want == 0 || want+used <= capacity(c) {
			return shortage{}, false
		}
		return shortage{name: name, requested: want, used: used, capacity: capacity(c)}, true
	}
	if s, short := check(v1.ResourceCPU, want.cpu, used.cpu, func(q resource.Quantity) int64 { return q.MilliValue() }); short {
		return s, true
	}
	return check(v1.ResourceMemory, want.memory, used.memory, func(q resource.Quantity) int64 { return q.Value() })
}

// admitResources reports whether r's pod p fits in the node's allocatable
// resources beside the active pods, and keeps its requests in r.
func (s *State) admitResources(r *Record, p *v1.Pod) (shortage, bool) {
	r.requests = requestsOf(p)
	if len(s.allocatable) == 0 || r.requests.zero() {
		return shortage{}, true
	}
	short, bad := resourceShortage(r.requests, s.used(), s.allocatable)
	return short, !bad
}

// used is the sum of the requests of the active pods, as the kubelet's:
// those sent to the router whose status is not terminal yet, and those
// being removed (their containers may still run).
func (s *State) used() requests {
	var sum requests
	add := func(r *Record) {
		sum.cpu += r.requests.cpu
		sum.memory += r.requests.memory
	}
	for _, r := range s.byPhase[Running] {
		if r.Status != nil && (r.Status.Phase == v1.PodSucceeded || r.Status.Phase == v1.PodFailed) {
			continue
		}
		add(r)
	}
	for _, ph := range []Phase{Terminating, Abandoned} {
		for _, r := range s.byPhase[ph] {
			add(r)
		}
	}
	return sum
}
