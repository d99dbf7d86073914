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
	"k8s.io/apimachinery/pkg/types"

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
	// Tracker, when set, shows pods that left the node Terminating until
	// they are stopped.
	Tracker *Tracker
	// Execer runs kubectl exec's commands; nil: exec is not served.
	Execer runtimeadapter.StreamExecer

	once    sync.Once
	machine v1.NodeSystemInfo

	// The runtime's version, asked at most once a minute (the API
	// refreshes every second).
	rvMu      sync.Mutex
	rvValue   string
	rvChecked time.Time
}

// runtimeVersion is the runtime's version, cached for a minute.
func (b *KubeBackend) runtimeVersion(ctx context.Context) string {
	if b.Info.RuntimeVersion == nil {
		return ""
	}
	b.rvMu.Lock()
	defer b.rvMu.Unlock()
	if b.rvValue != "" && time.Since(b.rvChecked) < time.Minute {
		return b.rvValue
	}
	if v, err := b.Info.RuntimeVersion(ctx); err == nil {
		b.rvValue, b.rvChecked = v, time.Now()
	}
	return b.rvValue
}

var _ kubeapi.Backend = (*KubeBackend)(nil)

// Node returns this node.
func (b *KubeBackend) Node(ctx context.Context) (*v1.Node, error) {
	b.once.Do(func() { b.machine = systemInfo() })
	info := b.machine
	info.KubeletVersion = "v" + strings.TrimPrefix(version.Version, "v")
	info.KubeProxyVersion = ""
	info.ContainerRuntimeVersion = b.runtimeVersion(ctx)
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

// Tracker follows the node's status changes: it nudges the Kubernetes API
// to refresh, and remembers pods that left the desired set until the node
// reports them fully stopped, so the API shows them Terminating (with a
// deletionTimestamp) meanwhile, as the API server shows a pod being
// deleted, and kubectl delete waits until their containers are gone.
type Tracker struct {
	ch chan struct{}

	mu   sync.Mutex
	last map[types.UID]*v1.Pod   // each pod's last state seen
	gone map[types.UID]time.Time // when a pod was first missing from the node's list
}

// lingerAfterGrace bounds how long a pod is shown Terminating past its
// grace period when the node never reports it stopped.
const lingerAfterGrace = 2 * time.Minute

// Track subscribes to the node's status changes; stop unsubscribes.
func Track(root *actor.RootContext, node *actor.PID) (t *Tracker, stop func()) {
	t = &Tracker{ch: make(chan struct{}, 1), last: map[types.UID]*v1.Pod{}, gone: map[types.UID]time.Time{}}
	pid := root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*messages.PodStatusChanged); ok {
			t.observe(m)
		}
	}))
	root.Send(node, &messages.Subscribe{PID: pid})
	return t, func() {
		root.Send(node, &messages.Unsubscribe{PID: pid})
		_ = root.StopFuture(pid).Wait()
	}
}

// observe takes one status change: a pod's new state, or its end.
func (t *Tracker) observe(m *messages.PodStatusChanged) {
	if m.Pod == nil {
		return
	}
	t.mu.Lock()
	if m.Removed {
		delete(t.last, m.Pod.UID)
		delete(t.gone, m.Pod.UID)
	} else {
		t.last[m.Pod.UID] = m.Pod
	}
	t.mu.Unlock()
	select {
	case t.ch <- struct{}{}:
	default:
	}
}

// Nudges holds a value whenever something changed since it was last read.
func (t *Tracker) Nudges() <-chan struct{} { return t.ch }

// withTerminating returns present (the node's pods) followed by the pods
// that left it and are still stopping, each with a deletionTimestamp.
func (t *Tracker) withTerminating(present []*v1.Pod, now time.Time) []*v1.Pod {
	t.mu.Lock()
	defer t.mu.Unlock()
	seen := make(map[types.UID]bool, len(present))
	for _, p := range present {
		seen[p.UID] = true
		t.last[p.UID] = p
		delete(t.gone, p.UID)
	}
	out := present
	for uid, p := range t.last {
		if seen[uid] {
			continue
		}
		since, ok := t.gone[uid]
		if !ok {
			since = now
			t.gone[uid] = now
		}
		grace := int64(30)
		if p.Spec.TerminationGracePeriodSeconds != nil {
			grace = *p.Spec.TerminationGracePeriodSeconds
		}
		if now.Sub(since) > time.Duration(grace)*time.Second+lingerAfterGrace {
			delete(t.last, uid)
			delete(t.gone, uid)
			continue
		}
		c := p.DeepCopy()
		ts := metav1.NewTime(since.Truncate(time.Second))
		c.DeletionTimestamp, c.DeletionGracePeriodSeconds = &ts, &grace
		out = append(out, c)
	}
	return out
}

// Pods returns the node's pods, and those still stopping after they left
// it (see Tracker).
func (b *KubeBackend) Pods(ctx context.Context) ([]*v1.Pod, error) {
	pods, err := b.Backend.Pods(ctx)
	if err != nil || b.Tracker == nil {
		return pods, err
	}
	return b.Tracker.withTerminating(pods, time.Now()), nil
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
