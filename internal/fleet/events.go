package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/messages"
)

// EventRecord is the document under <prefix>/nodes/<node>/events/<seq>.
// <seq> is 19 decimal digits, increasing (the write time in Unix
// nanoseconds, or one more than the previous), so keys sort oldest first.
type EventRecord struct {
	Node      string    `json:"node"`
	Time      time.Time `json:"time"`
	Type      string    `json:"type"`
	Reason    string    `json:"reason"`
	Namespace string    `json:"namespace,omitempty"`
	Pod       string    `json:"pod,omitempty"`
	UID       types.UID `json:"uid,omitempty"`
	Container string    `json:"container,omitempty"`
	Message   string    `json:"message,omitempty"`
}

// eventWriter is the event loop's state (used by its goroutine only, so
// a restart after a panic goes on from it).
type eventWriter struct {
	last       *messages.Event  // the newest event taken from the node
	queue      []messages.Event // taken, not yet written; at most MaxEvents
	seq        int64            // last sequence used
	lease      clientv3.LeaseID // for new events; NoLease: grant one
	leaseSince time.Time        // when lease was granted
	retry      <-chan time.Time // armed after a failure
	bo         interface {
		NextBackOff() time.Duration
		Reset()
	}
}

// eventsLoop polls the node's events every EventPollPeriod and writes the
// new ones, until ctx ends.
func (p *Publisher) eventsLoop(ctx context.Context, source EventSource) {
	if p.events == nil {
		p.events = &eventWriter{bo: p.newBackoff()}
	}
	w := p.events
	tick := time.NewTicker(p.o.EventPollPeriod)
	defer tick.Stop()
	for {
		p.pollEvents(ctx, source, w)
		if len(w.queue) > 0 {
			if err := p.writeEvents(ctx, w); err != nil {
				if ctx.Err() != nil {
					return
				}
				p.log.Warn("could not write events; will retry", zap.Error(err), zap.Int("queued", len(w.queue)))
				w.retry = time.After(w.bo.NextBackOff())
			} else {
				w.bo.Reset()
				w.retry = nil
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-w.retry:
		}
	}
}

// pollEvents takes the events the node recorded since the last poll.
func (p *Publisher) pollEvents(ctx context.Context, source EventSource, w *eventWriter) {
	evs, err := source(ctx)
	if err != nil {
		if ctx.Err() == nil {
			p.log.Warn("could not read the node's events", zap.Error(err))
		}
		return
	}
	if len(evs) == 0 {
		return
	}
	fresh := evs
	if w.last != nil {
		for i := len(evs) - 1; i >= 0; i-- {
			if sameEvent(evs[i], *w.last) {
				fresh = evs[i+1:]
				break
			}
		}
		// Not found: the node's bounded list rolled past it; all are new.
	}
	last := evs[len(evs)-1]
	w.last = &last
	w.queue = append(w.queue, fresh...)
	if n := len(w.queue) - p.o.MaxEvents; n > 0 {
		w.queue = append([]messages.Event(nil), w.queue[n:]...) // only the newest would be kept anyway
	}
}

func sameEvent(a, b messages.Event) bool {
	return a.Time.Equal(b.Time) && a.Type == b.Type && a.Reason == b.Reason && a.Namespace == b.Namespace &&
		a.Pod == b.Pod && a.UID == b.UID && a.Container == b.Container && a.Message == b.Message
}

// writeEvents writes the queue, oldest first, under the current event
// lease, then deletes the oldest of the node's events past MaxEvents.
func (p *Publisher) writeEvents(ctx context.Context, w *eventWriter) error {
	prefix := p.o.Keys.Events(p.o.Node)
	for len(w.queue) > 0 {
		if err := p.ensureEventLease(ctx, w); err != nil {
			return err
		}
		e := w.queue[0]
		data, _ := json.Marshal(EventRecord{ // always marshals
			Node: p.o.Node, Time: e.Time.UTC(), Type: string(e.Type), Reason: e.Reason, Namespace: e.Namespace,
			Pod: e.Pod, UID: e.UID, Container: e.Container, Message: e.Message,
		})
		seq := max(w.seq+1, time.Now().UnixNano())
		key := fmt.Sprintf("%s%019d", prefix, seq)
		rctx, cancel := p.request(ctx)
		_, err := p.o.Client.Put(rctx, key, string(data), clientv3.WithLease(w.lease))
		cancel()
		if err != nil {
			w.lease = clientv3.NoLease // it may be gone: grant another next time
			return fmt.Errorf("write event %s: %w", key, err)
		}
		w.seq = seq
		w.queue = w.queue[1:]
	}
	return p.trimEvents(ctx)
}

// ensureEventLease grants a lease of EventTTL when there is none or the
// current one is older than a tenth of it.
func (p *Publisher) ensureEventLease(ctx context.Context, w *eventWriter) error {
	if w.lease != clientv3.NoLease && time.Since(w.leaseSince) < p.o.EventTTL/eventLeaseShare {
		return nil
	}
	rctx, cancel := p.request(ctx)
	defer cancel()
	lease, err := p.o.Client.Grant(rctx, leaseSeconds(p.o.EventTTL))
	if err != nil {
		return fmt.Errorf("events: grant a lease of %ds: %w", leaseSeconds(p.o.EventTTL), err)
	}
	w.lease, w.leaseSince = lease.ID, time.Now()
	return nil
}

// trimEvents deletes the node's oldest events beyond MaxEvents.
func (p *Publisher) trimEvents(ctx context.Context) error {
	prefix := p.o.Keys.Events(p.o.Node)
	rctx, cancel := p.request(ctx)
	defer cancel()
	resp, err := p.o.Client.Get(rctx, prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly(),
		clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return fmt.Errorf("list %s: %w", prefix, err)
	}
	n := len(resp.Kvs) - p.o.MaxEvents
	if n <= 0 {
		return nil
	}
	// The n oldest: [first, kvs[n]).
	if _, err := p.o.Client.Delete(rctx, string(resp.Kvs[0].Key), clientv3.WithRange(string(resp.Kvs[n].Key))); err != nil {
		return fmt.Errorf("delete the %d oldest events under %s: %w", n, prefix, err)
	}
	return nil
}
