package nodeinfo

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ParseReserved reads a reservation in the kubelet's --system-reserved
// and --kube-reserved form, "cpu=200m,memory=500Mi" (empty: none). Only
// cpu and memory are known; flag names the flag in errors.
func ParseReserved(flag, s string) (v1.ResourceList, error) {
	out := v1.ResourceList{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return nil, fmt.Errorf("%s %q: %q is not name=quantity", flag, s, kv)
		}
		name := v1.ResourceName(strings.TrimSpace(k))
		if name != v1.ResourceCPU && name != v1.ResourceMemory {
			return nil, fmt.Errorf("%s %q: resource %q: only cpu and memory can be reserved", flag, s, name)
		}
		q, err := resource.ParseQuantity(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("%s %q: %s: %w", flag, s, name, err)
		}
		if q.Sign() < 0 {
			return nil, fmt.Errorf("%s %q: %s: negative", flag, s, name)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%s %q: %s given twice", flag, s, name)
		}
		out[name] = q
	}
	return out, nil
}

// Reserve returns capacity less each reservation, as the kubelet's node
// allocatable (capacity − kube-reserved − system-reserved), never below 0.
func Reserve(capacity v1.ResourceList, reserved ...v1.ResourceList) v1.ResourceList {
	out := capacity.DeepCopy()
	for _, r := range reserved {
		for name, q := range r {
			have, ok := out[name]
			if !ok {
				continue
			}
			have.Sub(q)
			if have.Sign() < 0 {
				have = *resource.NewQuantity(0, have.Format)
			}
			out[name] = have
		}
	}
	return out
}
