// Package nodeinfo finds what the downward API says of the node: its
// addresses (status.hostIP) and its allocatable resources (a
// resourceFieldRef to a limit a container does not set).
package nodeinfo

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// HostIPs returns the node's addresses as a standalone kubelet picks them
// without --node-ip: the addresses of the interface of the default route
// (read from /proc/net/route), first the first non-loopback IPv4 one,
// then the first IPv6 one that is global unicast. Without a default route
// it falls back to the first non-loopback global unicast address of any
// interface that is up.
func HostIPs() ([]string, error) {
	f, err := os.Open("/proc/net/route")
	if err == nil {
		defer f.Close()
		if name, err := DefaultRouteInterface(f); err == nil {
			if ifc, err := net.InterfaceByName(name); err == nil {
				if addrs, err := ifc.Addrs(); err == nil {
					if ips := PickHostIPs(addrs); len(ips) > 0 {
						return ips, nil
					}
				}
			}
		}
	}
	ifcs, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("node addresses: %w", err)
	}
	for _, ifc := range ifcs {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		if ips := PickHostIPs(addrs); len(ips) > 0 {
			return ips, nil
		}
	}
	return nil, errors.New("node addresses: no default route and no interface with a global unicast address (set --node-ip)")
}

// DefaultRouteInterface reads a /proc/net/route table and returns the
// interface of its first default route (destination 00000000, mask
// 00000000).
func DefaultRouteInterface(r io.Reader) (string, error) {
	sc := bufio.NewScanner(r)
	first := true
	for sc.Scan() {
		if first { // header
			first = false
			continue
		}
		f := strings.Fields(sc.Text())
		if len(f) >= 8 && f[1] == "00000000" && f[7] == "00000000" {
			return f[0], nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", errors.New("no default route")
}

// PickHostIPs picks, from an interface's addresses, the first IPv4 one
// that is global unicast and then the first such IPv6 one (loopback,
// link-local and unspecified addresses are skipped).
func PickHostIPs(addrs []net.Addr) []string {
	var v4, v6 string
	for _, a := range addrs {
		var ip net.IP
		switch a := a.(type) {
		case *net.IPNet:
			ip = a.IP
		case *net.IPAddr:
			ip = a.IP
		}
		if ip == nil || !ip.IsGlobalUnicast() {
			continue
		}
		if ip.To4() != nil {
			if v4 == "" {
				v4 = ip.String()
			}
		} else if v6 == "" {
			v6 = ip.String()
		}
	}
	var out []string
	for _, ip := range []string{v4, v6} {
		if ip != "" {
			out = append(out, ip)
		}
	}
	return out
}

// ParseNodeIPs parses a --node-ip value: one address, or two of different
// families separated by a comma (dual stack), as the kubelet takes it.
func ParseNodeIPs(s string) ([]string, error) {
	parts := strings.Split(s, ",")
	if len(parts) > 2 {
		return nil, fmt.Errorf("--node-ip %q: at most two addresses, one per family", s)
	}
	var out []string
	fams := map[bool]bool{}
	for _, p := range parts {
		ip := net.ParseIP(strings.TrimSpace(p))
		if ip == nil || ip.IsUnspecified() {
			return nil, fmt.Errorf("--node-ip %q: %q is not an IP address", s, p)
		}
		v4 := ip.To4() != nil
		if fams[v4] {
			return nil, fmt.Errorf("--node-ip %q: two addresses of one family", s)
		}
		fams[v4] = true
		out = append(out, ip.String())
	}
	return out, nil
}

// Allocatable returns the node's allocatable resources as a kubelet
// without reservations reports them: its CPUs (those the process may
// use), its memory (MemTotal of /proc/meminfo) and the size of the
// filesystem holding rootDir (ephemeral storage). A resource it cannot
// read is left out.
func Allocatable(rootDir string) v1.ResourceList {
	out := v1.ResourceList{v1.ResourceCPU: *resource.NewQuantity(int64(runtime.NumCPU()), resource.DecimalSI)}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		if n, err := MemTotal(f); err == nil {
			out[v1.ResourceMemory] = *resource.NewQuantity(n, resource.BinarySI)
		}
		f.Close()
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(rootDir, &st); err == nil {
		out[v1.ResourceEphemeralStorage] = *resource.NewQuantity(int64(st.Blocks)*int64(st.Bsize), resource.BinarySI)
	}
	return out
}

// MemTotal reads MemTotal, in bytes, from a /proc/meminfo.
func MemTotal(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("meminfo: MemTotal %q: %w", f[1], err)
			}
			return kb * 1024, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("meminfo: no MemTotal")
}
