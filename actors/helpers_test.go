package actors

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
	"github.com/actorlet/actorlet/sources"
	"github.com/actorlet/actorlet/supervision"
)

const testNode = "node-a"

// chanSource is a Source fed by the test.
type chanSource struct {
	name string
	ch   chan sourceFeed
}

// sourceFeed is one update and its acknowledgement: done is closed once
// the update is in the node's mailbox, so that a question the test asks
// next is answered after it.
type sourceFeed struct {
	pods       []*v1.Pod
	configMaps []*v1.ConfigMap
	secrets    []*v1.Secret
	done       chan struct{}
}

func newChanSource(name string) *chanSource {
	return &chanSource{name: name, ch: make(chan sourceFeed)}
}

func (s *chanSource) Name() string { return s.name }

func (s *chanSource) Run(ctx context.Context, sink func(sources.Update)) error {
	for {
		select {
		case f := <-s.ch:
			sink(sources.Update{Source: s.name, Pods: f.pods, ConfigMaps: f.configMaps, Secrets: f.secrets})
			close(f.done)
		case <-ctx.Done():
			return nil
		}
	}
}

// send delivers pods as the source's next update and waits until the node
// has it queued.
func (s *chanSource) send(pods []*v1.Pod) { s.sendAll(pods, nil, nil) }

// sendAll is send with the source's ConfigMaps and Secrets.
func (s *chanSource) sendAll(pods []*v1.Pod, cms []*v1.ConfigMap, secrets []*v1.Secret) {
	f := sourceFeed{pods: pods, configMaps: cms, secrets: secrets, done: make(chan struct{})}
	s.ch <- f
	<-f.done
}

func testPod(name, uid string, policy v1.RestartPolicy, containers ...string) *v1.Pod {
	grace := int64(30)
	p := &v1.Pod{}
	p.Name, p.Namespace, p.UID = name, "default", types.UID(uid)
	p.Spec.RestartPolicy = policy
	p.Spec.TerminationGracePeriodSeconds = &grace
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: c, Image: "work:1"})
	}
	return p
}

// harness runs a node actor tree on the fake runtime.
type harness struct {
	t   *testing.T
	rt  *fake.Runtime
	sys *actor.ActorSystem
	pid *actor.PID
	src *chanSource
	cfg Config
}

func newHarness(t *testing.T, rt *fake.Runtime) *harness {
	h := &harness{t: t, rt: rt, sys: actor.NewActorSystem(), src: newChanSource("test")}
	h.cfg = Config{NodeName: testNode, Runtime: rt, PodInfraImage: "pause:1", Backoff: supervision.DefaultBackoffPolicy()}
	return h
}

func (h *harness) start() {
	h.pid = h.sys.Root.Spawn(NodeProps(h.cfg, h.src))
}

func (h *harness) stop() {
	if err := StopNode(h.sys.Root, h.pid, 10*time.Second); err != nil {
		h.t.Fatal(err)
	}
	// Let stragglers end (e.g. protoactor's dead-letter throttle waits one
	// interval on a timer); inside a synctest bubble this takes no time.
	time.Sleep(5 * time.Second)
}

func (h *harness) apply(pods ...*v1.Pod) { h.src.send(pods) }

// live returns the running or created containers of a pod and name.
func (h *harness) live(uid, name string) []runtimeadapter.Container {
	var out []runtimeadapter.Container
	for _, c := range h.rt.Containers() {
		if c.Labels[runtimeadapter.LabelPodUID] == uid && c.Labels[runtimeadapter.LabelContainerName] == name &&
			c.State != runtimeadapter.StateExited {
			out = append(out, c)
		}
	}
	return out
}

// creates returns the times of the Create calls whose name starts with prefix.
func (h *harness) creates(prefix string) []time.Time {
	var out []time.Time
	for _, c := range h.rt.Calls() {
		if c.Method == fake.MethodCreate && strings.HasPrefix(c.Arg, prefix) && c.Err == nil {
			out = append(out, c.Time)
		}
	}
	return out
}

// waitFor advances the bubble's clock in small steps until cond holds,
// failing after limit of virtual time.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func portPod(name string, ports ...v1.ContainerPort) *v1.Pod {
	p := testPod(name, "uid-"+name, v1.RestartPolicyAlways, "app")
	p.Spec.Containers[0].Ports = ports
	return p
}
