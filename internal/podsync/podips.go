package podsync

import (
	"slices"

	v1 "k8s.io/api/core/v1"
)

// PodIPsFor returns the addresses a pod has, as the kubelet reports them:
// the host's for a hostNetwork pod, else the sandbox's address (none when
// it has none yet).
func PodIPsFor(pod *v1.Pod, sandboxIP string, hostIPs []string) []string {
	if pod.Spec.HostNetwork {
		return slices.Clone(hostIPs)
	}
	if sandboxIP == "" {
		return nil
	}
	return []string{sandboxIP}
}

// WithHostIPs adds the node's addresses to a pod's status, as the kubelet
// reports them: hostIP and hostIPs, and for a hostNetwork pod podIP and
// podIPs too (it has the host's). Without hostIPs st is returned as is.
func WithHostIPs(st v1.PodStatus, pod *v1.Pod, hostIPs []string) v1.PodStatus {
	if len(hostIPs) == 0 {
		return st
	}
	st.HostIP = hostIPs[0]
	st.HostIPs = make([]v1.HostIP, len(hostIPs))
	for i, ip := range hostIPs {
		st.HostIPs[i] = v1.HostIP{IP: ip}
	}
	if pod.Spec.HostNetwork && st.PodIP == "" {
		st.PodIP = hostIPs[0]
		st.PodIPs = make([]v1.PodIP, len(hostIPs))
		for i, ip := range hostIPs {
			st.PodIPs[i] = v1.PodIP{IP: ip}
		}
	}
	return st
}
