package nodestate

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// requesting is p with its app container requesting cpu and memory
// ("" leaves one out).
func requesting(p *v1.Pod, cpu, mem string) *v1.Pod {
	p.Spec.Containers[0].Resources.Requests = resources(cpu, mem)
	return p
}

func resources(cpu, mem string) v1.ResourceList {
	l := v1.ResourceList{}
	if cpu != "" {
		l[v1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		l[v1.ResourceMemory] = resource.MustParse(mem)
	}
	return l
}

// withInit adds an init container requesting cpu; sidecar makes it a
// sidecar (restartPolicy Always).
func withInit(p *v1.Pod, name, cpu string, sidecar bool) *v1.Pod {
	c := v1.Container{Name: name, Image: "work:1", Resources: v1.ResourceRequirements{Requests: resources(cpu, "")}}
	if sidecar {
		always := v1.ContainerRestartPolicyAlways
		c.RestartPolicy = &always
	}
	p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	return p
}

// TestResourceAdmission: a pod whose requests do not fit in the node's
// allocatable cpu and memory beside those of the active pods is rejected
// as the kubelet rejects a non-critical pod (OutOfcpu, OutOfmemory, its
// message), oldest pods first; the effective request counts sidecars and
// init containers as Kubernetes 1.33.
func TestResourceAdmission(t *testing.T) {
	alloc := resources("2", "1Gi")
	tests := []struct {
		name  string
		alloc v1.ResourceList
		steps []step
		// records at the end
		records []string
	}{
		{
			name: "a pod that fits is admitted",
			steps: []step{
				{listing(1), nil},
				{synced("file", requesting(pod("a", "uid-a", 0), "2", "1Gi")), []string{"add default/a(uid-a)"}},
			},
			records: []string{"uid-a default/a Running"},
		},
		{
			name: "cpu: 100 on a 2-CPU node is rejected, OutOfcpu",
			steps: []step{
				{listing(1), nil},
				{synced("file", requesting(pod("a", "uid-a", 0), "100", "")), []string{
					"reject default/a (OutOfcpu): Node didn't have enough resource: cpu, requested: 100000, used: 0, capacity: 2000",
					"publish default/a(uid-a) Failed/OutOfcpu"}},
			},
			records: []string{"uid-a default/a Rejected status=Failed/OutOfcpu"},
		},
		{
			name: "memory is checked after cpu, in bytes: OutOfmemory",
			steps: []step{
				{listing(1), nil},
				{synced("file", requesting(pod("a", "uid-a", 0), "1", "2Gi")), []string{
					"reject default/a (OutOfmemory): Node didn't have enough resource: memory, requested: 2147483648, used: 0, capacity: 1073741824",
					"publish default/a(uid-a) Failed/OutOfmemory"}},
			},
			records: []string{"uid-a default/a Rejected status=Failed/OutOfmemory"},
		},
		{
			name: "the active pods' requests count as used; the older pod is admitted first",
			steps: []step{
				{synced("file", requesting(pod("b", "uid-b", 1), "1", ""), requesting(pod("a", "uid-a", 0), "1500m", "")), nil},
				{listing(2), []string{"add default/a(uid-a)",
					"reject default/b (OutOfcpu): Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000",
					"publish default/b(uid-b) Failed/OutOfcpu"}},
			},
			records: []string{"uid-a default/a Running", "uid-b default/b Rejected status=Failed/OutOfcpu"},
		},
		{
			name: "a pod whose status is terminal no longer counts",
			steps: []step{
				{listing(1), nil},
				{synced("file", requesting(pod("a", "uid-a", 0), "1500m", "")), []string{"add default/a(uid-a)"}},
				{status("uid-a", v1.PodSucceeded), []string{"publish default/a(uid-a) Succeeded"}},
				{synced("file", requesting(pod("a", "uid-a", 0), "1500m", ""), requesting(pod("b", "uid-b", 1), "1", "")), []string{"add default/b(uid-b)"}},
			},
			records: []string{"uid-a default/a Running status=Succeeded", "uid-b default/b Running"},
		},
		{
			name: "a pod being removed still counts (its containers may run); a rejected pod stays rejected, an edit is admitted anew",
			steps: []step{
				{listing(1), nil},
				{synced("file", requesting(pod("a", "uid-a", 0), "1500m", "")), []string{"add default/a(uid-a)"}},
				{synced("file", requesting(pod("b", "uid-b", 1), "1", "")), []string{"remove default/a(uid-a)",
					"reject default/b (OutOfcpu): Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000",
					"publish default/b(uid-b) Failed/OutOfcpu"}},
				{terminated("uid-a"), []string{"publish default/a(uid-a)  removed"}},
				{synced("file", requesting(pod("b", "uid-b", 1), "1", "")), nil},
				{synced("file", requesting(pod("b", "uid-b2", 1), "1", "")), []string{"add default/b(uid-b2)"}},
			},
			records: []string{"uid-a default/a Gone gone@4", "uid-b2 default/b Running"},
		},
		{
			name: "a sidecar counts beside the apps and before the init containers after it (2.3 CPU: rejected)",
			steps: []step{
				{listing(1), nil},
				{synced("file", withInit(withInit(requesting(pod("a", "uid-a", 0), "1", ""), "proxy", "500m", true), "setup", "1800m", false)), []string{
					"reject default/a (OutOfcpu): Node didn't have enough resource: cpu, requested: 2300, used: 0, capacity: 2000",
					"publish default/a(uid-a) Failed/OutOfcpu"}},
			},
			records: []string{"uid-a default/a Rejected status=Failed/OutOfcpu"},
		},
		{
			name: "an init container runs alone: the largest of it and the apps counts (1.8 CPU: admitted)",
			steps: []step{
				{listing(1), nil},
				{synced("file", withInit(requesting(pod("a", "uid-a", 0), "1", ""), "setup", "1800m", false)), []string{"add default/a(uid-a)"}},
			},
			records: []string{"uid-a default/a Running"},
		},
		{
			name:  "no allocatable known: no check",
			alloc: v1.ResourceList{},
			steps: []step{
				{listing(1), nil},
				{synced("file", requesting(pod("a", "uid-a", 0), "100", "100Gi")), []string{"add default/a(uid-a)"}},
			},
			records: []string{"uid-a default/a Running"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(node, []string{"file"})
			if tt.alloc != nil {
				s.SetAllocatable(tt.alloc)
			} else {
				s.SetAllocatable(alloc)
			}
			runSteps(t, s, tt.steps, tt.records)
		})
	}
}
