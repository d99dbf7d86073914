package metrics_test

import (
	"errors"
	"testing"
	"time"

	"github.com/actorlet/actorlet/internal/metrics"
)

func TestNilMetricsIsANoOp(t *testing.T) {
	var m *metrics.Metrics
	m.ObserveRelist(time.Now(), time.Second, nil)
	m.ObserveRelist(time.Now(), time.Second, errors.New("boom"))
	m.SetRunning(1, 2)
	m.IncRestart("ns", "pod", "c")
	m.ForgetPod("ns", "pod")
	m.ObserveProbe(metrics.ProbeLiveness, metrics.ProbeFailed)
	m.ObservePodStart(time.Second)
	m.ObserveRuntimeOp(metrics.OpStart, time.Second, errors.New("boom"))
	m.SetPodActors(3)
	m.IncPodActorRestart()
	m.ObserveSync(time.Second)
	m.SetEventStreamState("silent")
	m.IncEventStreamSilences()

	mw := m.MailboxMiddleware(metrics.KindPod)
	if mw == nil {
		t.Fatal("MailboxMiddleware on nil Metrics returned nil")
	}
	mw.MailboxStarted()
	mw.MessagePosted("x")
	mw.MessageReceived("x")
	mw.MailboxEmpty()
	if got := m.MailboxMessages(metrics.KindPod); got != 0 {
		t.Errorf("MailboxMessages on nil Metrics = %v, want 0", got)
	}
}
