package nodestate

import (
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
)

// hostPortKey is one host port a pod asks for.
type hostPortKey struct {
	ip       string // "" or 0.0.0.0 means every address
	port     int32
	protocol v1.Protocol
}

func hostPorts(p *v1.Pod) []hostPortKey {
	var out []hostPortKey
	for _, list := range [][]v1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for _, c := range list {
			for _, port := range c.Ports {
				if port.HostPort == 0 {
					continue
				}
				proto := port.Protocol
				if proto == "" {
					proto = v1.ProtocolTCP
				}
				out = append(out, hostPortKey{ip: port.HostIP, port: port.HostPort, protocol: proto})
			}
		}
	}
	return out
}

func wildcard(ip string) bool { return ip == "" || ip == "0.0.0.0" || ip == "::" }

// portConflict reports the first host port of p that an admitted pod
// already holds: the same port and protocol on the same host IP, or on any
// IP when either side binds every address (as the kubelet's NodePorts
// admission check).
func portConflict(p *v1.Pod, admitted []*v1.Pod) (string, bool) {
	for _, want := range hostPorts(p) {
		for _, other := range admitted {
			for _, have := range hostPorts(other) {
				if want.port != have.port || want.protocol != have.protocol {
					continue
				}
				if wildcard(want.ip) || wildcard(have.ip) || want.ip == have.ip {
					return fmt.Sprintf("host port %d/%s is held by pod %s", want.port, want.protocol, nsName(other)), true
				}
			}
		}
	}
	return "", false
}

// rejectedStatus is the status of a pod refused at admission, as the
// kubelet's: Failed, the reason, "Pod was rejected: " and why, and no
// containers.
func rejectedStatus(reason, msg string) v1.PodStatus {
	return v1.PodStatus{Phase: v1.PodFailed, Reason: reason, Message: "Pod was rejected: " + msg}
}

// AdmissionOrder orders pods oldest first (then by namespace/name), so
// that of two pods that clash on a host port the same one always wins.
func AdmissionOrder(pods []*v1.Pod) []*v1.Pod {
	sort.Slice(pods, func(i, j int) bool {
		ti, tj := pods[i].CreationTimestamp, pods[j].CreationTimestamp
		if !ti.Equal(&tj) {
			return ti.Before(&tj)
		}
		if a, b := nsName(pods[i]), nsName(pods[j]); a != b {
			return a < b
		}
		return pods[i].UID < pods[j].UID
	})
	return pods
}
