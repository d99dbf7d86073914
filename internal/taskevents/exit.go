package taskevents

import (
	"errors"
	"fmt"
	"time"

	apievents "github.com/containerd/containerd/api/events"
	"github.com/containerd/containerd/api/types"
	"github.com/containerd/typeurl/v2"
)

// Namespaces of the containerd instances actorlet follows.
const (
	// DockerNamespace holds Docker's containers in its containerd.
	DockerNamespace = "moby"
	// CRINamespace holds the CRI plugin's containers.
	CRINamespace = "k8s.io"
)

// The topics Subscribe follows.
const (
	TopicExit = "/tasks/exit"
	TopicOOM  = "/tasks/oom"
)

// Exit is one process exit containerd reported.
type Exit struct {
	Namespace   string
	ContainerID string
	// ProcessID is containerd's process ID: the container ID for the
	// container's init process (some versions leave it empty), an exec's
	// own ID for an exec process.
	ProcessID  string
	Pid        uint32
	ExitStatus uint32
	// ExitedAt is containerd's exited_at: Docker copies it as the
	// container's State.FinishedAt.
	ExitedAt time.Time
	// OOMKilled: containerd reported an OOM of this container (its
	// "/tasks/oom") since the stream opened and before this exit.
	OOMKilled bool
	// Published is the envelope's timestamp: when the shim published the
	// exit to containerd (zero when the envelope has none).
	Published time.Time
	// Received is when this process read the event off the stream (set
	// by Client.Subscribe; zero from Decode).
	Received time.Time
}

// Init reports whether the exit is the container's own (init) process:
// its death. An exec process's exit is not.
func (e Exit) Init() bool { return e.ProcessID == "" || e.ProcessID == e.ContainerID }

// Kind is what an envelope carried.
type Kind int

const (
	// Other: a topic Subscribe does not follow; ignore it.
	Other Kind = iota
	KindExit
	KindOOM
)

// Decode reads one envelope of the events service: a task exit (Exit
// filled), a task OOM (only ContainerID and Namespace filled) or Other.
// An envelope whose payload does not decode as its topic says is an error
// naming the topic and namespace.
func Decode(env *types.Envelope) (Kind, Exit, error) {
	if env == nil {
		return Other, Exit{}, errors.New("containerd event: empty envelope")
	}
	switch env.Topic {
	case TopicExit, TopicOOM:
	default:
		return Other, Exit{}, nil
	}
	if env.Event == nil {
		return Other, Exit{}, fmt.Errorf("containerd event %s in namespace %q: no payload", env.Topic, env.Namespace)
	}
	v, err := typeurl.UnmarshalAny(env.Event)
	if err != nil {
		return Other, Exit{}, fmt.Errorf("containerd event %s in namespace %q: decode %s: %w", env.Topic, env.Namespace, env.Event.GetTypeUrl(), err)
	}
	switch ev := v.(type) {
	case *apievents.TaskExit:
		if env.Topic != TopicExit {
			break
		}
		e := Exit{Namespace: env.Namespace, ContainerID: ev.ContainerID, ProcessID: ev.ID, Pid: ev.Pid, ExitStatus: ev.ExitStatus}
		if ev.ExitedAt != nil {
			e.ExitedAt = ev.ExitedAt.AsTime()
		}
		if env.Timestamp != nil {
			e.Published = env.Timestamp.AsTime()
		}
		if e.ContainerID == "" {
			return Other, Exit{}, fmt.Errorf("containerd event %s in namespace %q: no container_id", env.Topic, env.Namespace)
		}
		return KindExit, e, nil
	case *apievents.TaskOOM:
		if env.Topic != TopicOOM {
			break
		}
		if ev.ContainerID == "" {
			return Other, Exit{}, fmt.Errorf("containerd event %s in namespace %q: no container_id", env.Topic, env.Namespace)
		}
		return KindOOM, Exit{Namespace: env.Namespace, ContainerID: ev.ContainerID}, nil
	}
	return Other, Exit{}, fmt.Errorf("containerd event %s in namespace %q: payload is %T", env.Topic, env.Namespace, v)
}

// Filters are the events service filters of the topics followed in
// namespace ns (the filters are ORed; the commas of one AND).
func Filters(ns string) []string {
	return []string{
		fmt.Sprintf("topic==%q,namespace==%q", TopicExit, ns),
		fmt.Sprintf("topic==%q,namespace==%q", TopicOOM, ns),
	}
}
