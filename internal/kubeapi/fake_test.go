package kubeapi

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/internal/api"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeBackend is an in-memory Backend whose pods and events tests change.
type fakeBackend struct {
	mu      sync.Mutex
	pods    []*v1.Pod
	events  []messages.Event
	health  api.Health
	logs    map[string]string // ns/pod/container → text
	logCall []string
	pushed  []*v1.Pod // from an apipods.Source's updates
	execs   []string  // the commands Exec ran
	// followLog, when set, is the stream a follow of any log gets.
	followLog io.ReadCloser
}

// setPushed takes a pushed-pods update as the node would: each pod runs on
// node-1, Pending.
func (f *fakeBackend) setPushed(pods []*v1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pushed = nil
	for _, p := range pods {
		p = p.DeepCopy()
		p.Spec.NodeName = "node-1"
		p.Status.Phase = v1.PodPending
		f.pushed = append(f.pushed, p)
	}
}

func (f *fakeBackend) setPods(pods ...*v1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pods = pods
}

func (f *fakeBackend) addEvent(e messages.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, e)
}

func (f *fakeBackend) Pods(context.Context) ([]*v1.Pod, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*v1.Pod
	for _, p := range append(append([]*v1.Pod(nil), f.pods...), f.pushed...) {
		out = append(out, p.DeepCopy())
	}
	return out, nil
}

func (f *fakeBackend) Events(context.Context) ([]messages.Event, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]messages.Event(nil), f.events...), nil
}

func (f *fakeBackend) Health(context.Context) api.Health {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.health
}

func (f *fakeBackend) Logs(ctx context.Context, ns, pod, ctr string, previous bool, opts runtimeadapter.LogOptions) (io.ReadCloser, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logCall = append(f.logCall, fmt.Sprintf("%s/%s/%s previous=%v follow=%v tail=%d ts=%v", ns, pod, ctr, previous, opts.Follow, opts.TailLines, opts.Timestamps))
	if f.followLog != nil && opts.Follow {
		return f.followLog, nil
	}
	text, ok := f.logs[ns+"/"+pod+"/"+ctr]
	if !ok {
		return nil, fmt.Errorf("container %s of pod %s/%s: %w", ctr, ns, pod, api.ErrNotFound)
	}
	return io.NopCloser(strings.NewReader(text)), nil
}

func (f *fakeBackend) Node(context.Context) (*v1.Node, error) {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", CreationTimestamp: metav1.NewTime(t0)},
		Status: v1.NodeStatus{
			Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.1"}},
			NodeInfo:  v1.NodeSystemInfo{KubeletVersion: "v0.1.0", ContainerRuntimeVersion: "docker://28.0.0", OSImage: "Debian", KernelVersion: "6.1"},
		},
	}, nil
}

// runningPod is a one-container pod running on node-1 since t0.
func runningPod(ns, name string, labels map[string]string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name), Labels: labels, CreationTimestamp: metav1.NewTime(t0)},
		Spec:       v1.PodSpec{NodeName: "node-1", RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{{Name: "app", Image: "busybox"}}},
		Status: v1.PodStatus{
			Phase: v1.PodRunning, PodIP: "172.17.0.5", StartTime: &metav1.Time{Time: t0},
			ContainerStatuses: []v1.ContainerStatus{{
				Name: "app", Ready: true,
				State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}},
			}},
		},
	}
}

// crashing returns p with its container restarted n times, last exit at t.
func crashing(p *v1.Pod, n int32, t time.Time) *v1.Pod {
	p = p.DeepCopy()
	cs := &p.Status.ContainerStatuses[0]
	cs.RestartCount = n
	cs.Ready = false
	cs.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	cs.LastTerminationState = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", FinishedAt: metav1.NewTime(t)}}
	return p
}

// Exec fakes a few commands: echo ARGS, exit N, cat (stdin to stdout) and
// tty (says whether it has one, then waits for a resize and prints it).
func (f *fakeBackend) Exec(ctx context.Context, ns, pod, ctr string, cmd []string, s runtimeadapter.ExecStreams) (int, error) {
	f.mu.Lock()
	f.execs = append(f.execs, strings.Join(cmd, " "))
	f.mu.Unlock()
	out := s.Stdout
	if out == nil {
		out = io.Discard
	}
	switch cmd[0] {
	case "echo":
		fmt.Fprintln(out, strings.Join(cmd[1:], " "))
	case "exit":
		var n int
		fmt.Sscan(cmd[1], &n)
		fmt.Fprintln(s.Stderr, "exiting", n)
		return n, nil
	case "cat":
		if s.Stdin != nil {
			_, _ = io.Copy(out, s.Stdin)
		}
	case "tty":
		fmt.Fprintf(out, "tty=%v\r\n", s.TTY)
	default:
		return -1, fmt.Errorf("container %s: %q: executable file not found", ctr, cmd[0])
	}
	return 0, nil
}
