package metrics

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Actor kinds, the kind label of actorlet_mailbox_messages_total. Other
// fixed words may be used; never a pod UID or any per-instance value.
const (
	KindNode   = "node"
	KindRouter = "router"
	KindPod    = "pod"
	KindRelist = "relist"
	KindProbe  = "probe"
	KindSource = "source"
)

// SetPodActors sets actorlet_pod_actors to n, the number of live pod actors.
// Negative values are set as 0.
func (m *Metrics) SetPodActors(n int) {
	if m == nil {
		return
	}
	m.podActors.Set(float64(max(n, 0)))
}

// IncPodActorRestart increments actorlet_pod_actor_restarts_total: the
// supervisor restarted a pod actor after a panic.
func (m *Metrics) IncPodActorRestart() {
	if m == nil {
		return
	}
	m.podActorRestarts.Inc()
}

// ObserveSync observes d in actorlet_pod_sync_duration_seconds: one pod
// sync, from starting the plan's first action to having read the pod's
// containers back.
func (m *Metrics) ObserveSync(d time.Duration) {
	if m == nil {
		return
	}
	m.podSyncDuration.Observe(d.Seconds())
}

// MailboxMiddleware returns a protoactor mailbox middleware that increments
// actorlet_mailbox_messages_total{kind} for every user message an actor of
// kind has processed (system messages such as Started or Terminated are not
// counted). Use it when spawning the actor:
//
//	props := actor.PropsFromProducer(newPodActor,
//		actor.WithMailbox(actor.Unbounded(m.MailboxMiddleware(metrics.KindPod))))
//
// On a nil *Metrics it returns a middleware that does nothing.
func (m *Metrics) MailboxMiddleware(kind string) actor.MailboxMiddleware {
	if m == nil {
		return mailboxCounter{}
	}
	return mailboxCounter{processed: m.mailboxMessages.WithLabelValues(kind)}
}

// mailboxCounter counts processed user messages; a nil processed counts
// nothing.
type mailboxCounter struct {
	processed prometheus.Counter
}

var _ actor.MailboxMiddleware = mailboxCounter{}

func (mailboxCounter) MailboxStarted()   {}
func (mailboxCounter) MessagePosted(any) {}
func (mailboxCounter) MailboxEmpty()     {}

// MessageReceived is called by the mailbox after the actor processed msg.
func (c mailboxCounter) MessageReceived(msg any) {
	if c.processed == nil {
		return
	}
	switch msg.(type) {
	case actor.SystemMessage, actor.MailboxMessage:
		return
	}
	c.processed.Inc()
}

// MailboxMessages returns actorlet_mailbox_messages_total{kind}: how many
// user messages actors of kind have processed. It reads the one counter,
// not the whole registry, so a benchmark can poll it often without the
// polling showing in what it measures. On a nil *Metrics it returns 0.
func (m *Metrics) MailboxMessages(kind string) float64 {
	if m == nil {
		return 0
	}
	var d dto.Metric
	if err := m.mailboxMessages.WithLabelValues(kind).Write(&d); err != nil {
		return 0
	}
	return d.GetCounter().GetValue()
}
