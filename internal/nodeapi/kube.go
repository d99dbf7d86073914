package nodeapi

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/internal/kubeapi"
	"github.com/actorlet/actorlet/internal/nodeinfo"
	"github.com/actorlet/actorlet/internal/version"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// maxPods is the node's pod capacity, the kubelet's default --max-pods.
const maxPods = 110

// NodeInfo is what the node object says about this machine.
type NodeInfo struct {
	Name    string
	HostIPs []string
	RootDir string
	Started time.Time
	// RuntimeVersion returns "docker://<version>"; nil or failing: unknown.
	RuntimeVersion func(ctx context.Context) (string, error)
}

// KubeBackend serves the Kubernetes API (internal/kubeapi) from a node
// actor: the read-only Backend plus this node as a v1.Node.
type KubeBackend struct {
	*Backend
	Info NodeInfo
	// Execer runs kubectl exec's commands; nil: exec is not served.
	Execer runtimeadapter.StreamExecer

	once    sync.Once
	machine v1.NodeSystemInfo
}

var _ kubeapi.Backend = (*KubeBackend)(nil)

// Node returns this node.
func (b *KubeBackend) Node(ctx context.Context) (*v1.Node, error) {
	b.once.Do(func() { b.machine = systemInfo() })
	info := b.machine
	info.KubeletVersion = "v" + strings.TrimPrefix(version.Version, "v")
	info.KubeProxyVersion = ""
	if b.Info.RuntimeVersion != nil {
		if v, err := b.Info.RuntimeVersion(ctx); err == nil {
			info.ContainerRuntimeVersion = v
		}
	}
	alloc := nodeinfo.Allocatable(b.Info.RootDir)
	alloc[v1.ResourcePods] = *resource.NewQuantity(maxPods, resource.DecimalSI)
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:              b.Info.Name,
			UID:               "",
			CreationTimestamp: metav1.NewTime(b.Info.Started.Truncate(time.Second)),
			Labels: map[string]string{
				"kubernetes.io/hostname": b.Info.Name,
				"kubernetes.io/os":       runtime.GOOS,
				"kubernetes.io/arch":     runtime.GOARCH,
			},
		},
		Status: v1.NodeStatus{
			Capacity:    alloc.DeepCopy(),
			Allocatable: alloc,
			NodeInfo:    info,
			Phase:       "",
		},
	}
	for _, ip := range b.Info.HostIPs {
		n.Status.Addresses = append(n.Status.Addresses, v1.NodeAddress{Type: v1.NodeInternalIP, Address: ip})
	}
	n.Status.Addresses = append(n.Status.Addresses, v1.NodeAddress{Type: v1.NodeHostName, Address: b.Info.Name})
	return n, nil
}

// systemInfo reads the machine's OS, kernel and IDs.
func systemInfo() v1.NodeSystemInfo {
	read := func(path string) string {
		data, err := os.ReadFile(path)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(data))
	}
	info := v1.NodeSystemInfo{
		MachineID:       read("/etc/machine-id"),
		BootID:          read("/proc/sys/kernel/random/boot_id"),
		KernelVersion:   read("/proc/sys/kernel/osrelease"),
		OperatingSystem: runtime.GOOS,
		Architecture:    runtime.GOARCH,
	}
	for _, line := range strings.Split(read("/etc/os-release"), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			info.OSImage = strings.Trim(v, `"`)
		}
	}
	return info
}

// Nudges subscribes to the node's status changes and returns a channel
// that holds a value whenever something changed since it was last read
// (the Kubernetes API refreshes on it), and a function that unsubscribes.
func Nudges(root *actor.RootContext, node *actor.PID) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	pid := root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*messages.PodStatusChanged); ok {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}))
	root.Send(node, &messages.Subscribe{PID: pid})
	return ch, func() {
		root.Send(node, &messages.Unsubscribe{PID: pid})
		_ = root.StopFuture(pid).Wait()
	}
}

// Exec runs an interactive command in a container of a managed pod
// (kubectl exec) and returns its exit code.
func (b *KubeBackend) Exec(ctx context.Context, namespace, pod, container string, cmd []string, s runtimeadapter.ExecStreams) (int, error) {
	if b.Execer == nil {
		return -1, errors.New("the runtime cannot run interactive commands")
	}
	id, err := b.containerID(ctx, namespace, pod, container, false)
	if err != nil {
		return -1, err
	}
	return b.Execer.ExecStream(ctx, id, cmd, s)
}
