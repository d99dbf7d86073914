package metrics_test

import (
	"math"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/actorlet/actorlet/internal/metrics"
)

func TestPodActorFigures(t *testing.T) {
	m, reg := newMetrics(t)
	m.SetPodActors(4)
	m.IncPodActorRestart()
	m.IncPodActorRestart()
	m.ObserveSync(250 * time.Millisecond)
	if got := value(t, reg, "actorlet_pod_actors", nil); got != 4 {
		t.Errorf("pod actors = %v, want 4", got)
	}
	m.SetPodActors(-2)
	if got := value(t, reg, "actorlet_pod_actors", nil); got != 0 {
		t.Errorf("pod actors after a negative count = %v, want 0", got)
	}
	if got := value(t, reg, "actorlet_pod_actor_restarts_total", nil); got != 2 {
		t.Errorf("pod actor restarts = %v, want 2", got)
	}
	if n, sum := histogram(t, reg, "actorlet_pod_sync_duration_seconds", nil); n != 1 || math.Abs(sum-0.25) > 1e-9 {
		t.Errorf("pod sync: %d samples, sum %v; want 1, 0.25", n, sum)
	}
}

func TestMailboxMiddlewareCountsUserMessagesOnly(t *testing.T) {
	m, reg := newMetrics(t)
	mw := m.MailboxMiddleware(metrics.KindPod)
	mw.MailboxStarted()
	mw.MessagePosted("a")
	mw.MessageReceived("a")
	mw.MessageReceived(&actor.MessageEnvelope{Message: "b"})
	mw.MessageReceived(&actor.Started{})
	mw.MessageReceived(&actor.Terminated{})
	mw.MessageReceived(&actor.SuspendMailbox{})
	mw.MailboxEmpty()
	if got := value(t, reg, "actorlet_mailbox_messages_total", labels{"kind": "pod"}); got != 2 {
		t.Errorf("pod messages = %v, want 2", got)
	}
	// MailboxMessages reads the same counter without gathering.
	if got := m.MailboxMessages(metrics.KindPod); got != 2 {
		t.Errorf("MailboxMessages(pod) = %v, want 2", got)
	}
	if got := m.MailboxMessages(metrics.KindRouter); got != 0 {
		t.Errorf("MailboxMessages(router) = %v, want 0", got)
	}
}

// ping is the test actor's message; it replies with the same value.
type ping struct{ n int }

func TestMailboxMiddlewareOnRealActor(t *testing.T) {
	m, reg := newMetrics(t)
	system := actor.NewActorSystem()
	props := actor.PropsFromFunc(func(c actor.Context) {
		if p, ok := c.Message().(ping); ok {
			c.Respond(p)
		}
	}, actor.WithMailbox(actor.Unbounded(m.MailboxMiddleware(metrics.KindRouter))))
	pid := system.Root.Spawn(props)
	defer system.Root.Stop(pid)

	const n = 5
	for i := range n {
		if _, err := system.Root.RequestFuture(pid, ping{i}, 5*time.Second).Result(); err != nil {
			t.Fatal(err)
		}
	}
	// The mailbox counts a message after the actor has processed it, which
	// may be just after the reply: poll.
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := value(t, reg, "actorlet_mailbox_messages_total", labels{"kind": "router"})
		if got == n {
			break
		}
		if got > n || time.Now().After(deadline) {
			t.Fatalf("router messages = %v, want %d", got, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
