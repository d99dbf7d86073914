package probe

import (
	"fmt"
	"strconv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ResolvePort turns a probe's port into a number, as the kubelet: a
// number is taken as is; a name is looked up among c's ports (c may be
// nil), and failing that parsed as a number. Errors: an unknown name, a
// port outside 1–65535.
func ResolvePort(port intstr.IntOrString, c *v1.Container) (int, error) {
	n := -1
	switch port.Type {
	case intstr.Int:
		n = port.IntValue()
	case intstr.String:
		found := false
		if c != nil {
			for _, p := range c.Ports {
				if p.Name != "" && p.Name == port.StrVal {
					n, found = int(p.ContainerPort), true
					break
				}
			}
		}
		if !found {
			v, err := strconv.Atoi(port.StrVal)
			if err != nil {
				return 0, fmt.Errorf("port %q: no container port has that name", port.StrVal)
			}
			n = v
		}
	default:
		return 0, fmt.Errorf("port %v: neither a number nor a name", port)
	}
	if n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %s: invalid port number %d", port.String(), n)
	}
	return n, nil
}
