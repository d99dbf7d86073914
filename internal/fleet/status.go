package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/sources/etcd"
)

// AnnotationNode is set on status documents: the node that wrote it.
const AnnotationNode = "io.actorlet/node"

// writtenStatus is what this process last wrote for a pod name.
type writtenStatus struct {
	uid  types.UID
	data []byte
}

// StatusDocument is what is written under status/<namespace>/<name> for
// pod on node: a v1.Pod with only its name, namespace, UID, the
// AnnotationNode annotation, and its status.
func StatusDocument(node string, pod *v1.Pod) *v1.Pod {
	return &v1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID,
			Annotations: map[string]string{AnnotationNode: node},
		},
		Status: pod.Status,
	}
}

func nsName(namespace, name string) string { return namespace + "/" + name }

// PodStatusChanged queues a status change (from the node's subscription)
// for writing. It never blocks: the latest change of each pod wins. A
// removal of a pod whose name a newer pod (another UID) already reported
// is dropped, so a replaced pod's end never deletes its successor's status.
func (p *Publisher) PodStatusChanged(m *messages.PodStatusChanged) {
	if m == nil || m.Pod == nil {
		return
	}
	key := nsName(m.Pod.Namespace, m.Pod.Name)
	p.mu.Lock()
	if prev := p.pending[key]; prev != nil && m.Removed && !prev.Removed && prev.Pod.UID != m.Pod.UID {
		p.mu.Unlock()
		return
	}
	p.pending[key] = m
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// takePending returns the queued changes and empties the queue.
func (p *Publisher) takePending() map[string]*messages.PodStatusChanged {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.pending
	p.pending = map[string]*messages.PodStatusChanged{}
	return out
}

// requeue puts back changes that could not be written, unless a newer
// change of the same pod came meanwhile.
func (p *Publisher) requeue(rest map[string]*messages.PodStatusChanged) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, m := range rest {
		if _, newer := p.pending[k]; !newer {
			p.pending[k] = m
		}
	}
}

// statusLoop writes queued status changes until ctx ends, first deleting
// the stale statuses a former run left.
func (p *Publisher) statusLoop(ctx context.Context) {
	bo := p.newBackoff()
	var retry <-chan time.Time
	for {
		if !p.swept {
			if err := p.sweepStale(ctx); err != nil {
				if ctx.Err() != nil {
					return
				}
				p.log.Warn("could not clean stale pod statuses; retrying", zap.Error(err))
			} else {
				p.swept = true
			}
		}
		rest := p.writeStatuses(ctx, p.takePending())
		p.requeue(rest) // for the next round, or Stop's last one
		if ctx.Err() != nil {
			return
		}
		if len(rest) > 0 || !p.swept {
			retry = time.After(bo.NextBackOff())
		} else {
			bo.Reset()
			retry = nil
		}
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-retry:
		}
	}
}

// writeStatuses writes batch in name order and returns what it could not
// write (the failed change and everything after it).
func (p *Publisher) writeStatuses(ctx context.Context, batch map[string]*messages.PodStatusChanged) map[string]*messages.PodStatusChanged {
	if len(batch) == 0 {
		return nil
	}
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	keys := make([]string, 0, len(batch))
	for k := range batch {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		if err := p.writeStatus(ctx, k, batch[k]); err != nil {
			if ctx.Err() == nil {
				p.log.Warn("could not write a pod status; will retry", zap.Error(err))
			}
			rest := map[string]*messages.PodStatusChanged{}
			for _, k := range keys[i:] {
				rest[k] = batch[k]
			}
			return rest
		}
	}
	return nil
}

// writeStatus writes (or, for a removal, deletes) one pod's status key.
// Unchanged statuses are not written again.
func (p *Publisher) writeStatus(ctx context.Context, name string, m *messages.PodStatusChanged) error {
	pod := m.Pod
	key := p.o.Keys.Status(p.o.Node, pod.Namespace, pod.Name)
	last, known := p.written[name]
	rctx, cancel := p.request(ctx)
	defer cancel()
	if m.Removed {
		if known && last.uid != pod.UID {
			return nil // a newer pod of that name holds the key
		}
		if _, err := p.o.Client.Delete(rctx, key); err != nil {
			return fmt.Errorf("delete %s (pod %s removed): %w", key, name, err)
		}
		delete(p.written, name)
		return nil
	}
	data, err := json.Marshal(StatusDocument(p.o.Node, pod))
	if err != nil {
		return fmt.Errorf("status of pod %s: %w", name, err)
	}
	if known && last.uid == pod.UID && bytes.Equal(last.data, data) {
		return nil
	}
	if _, err := p.o.Client.Put(rctx, key, string(data)); err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	p.written[name] = writtenStatus{uid: pod.UID, data: data}
	return nil
}

// sweepStale deletes this node's status keys whose pod key is gone (left
// by a former run of the node) and that this run has not written.
func (p *Publisher) sweepStale(ctx context.Context) error {
	rctx, cancel := p.request(ctx)
	defer cancel()
	statusPrefix, podsPrefix := p.o.Keys.Statuses(p.o.Node), p.o.Keys.Pods(p.o.Node)
	statuses, err := p.o.Client.Get(rctx, statusPrefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return fmt.Errorf("list %s: %w", statusPrefix, err)
	}
	if len(statuses.Kvs) == 0 {
		return nil
	}
	pods, err := p.o.Client.Get(rctx, podsPrefix, clientv3.WithPrefix(), clientv3.WithKeysOnly(),
		clientv3.WithRev(statuses.Header.Revision))
	if err != nil {
		return fmt.Errorf("list %s: %w", podsPrefix, err)
	}
	desired := map[string]bool{}
	for _, kv := range pods.Kvs {
		if k, ok := p.o.Keys.Parse(string(kv.Key)); ok {
			desired[nsName(k.Namespace, k.Name)] = true
		}
	}
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	for _, kv := range statuses.Kvs {
		k, ok := p.o.Keys.Parse(string(kv.Key))
		if !ok || k.Kind != etcd.KindStatus {
			continue
		}
		name := nsName(k.Namespace, k.Name)
		if desired[name] {
			continue
		}
		if _, mine := p.written[name]; mine {
			continue
		}
		// Only if nobody wrote it since the listing.
		resp, err := p.o.Client.Txn(rctx).
			If(clientv3.Compare(clientv3.ModRevision(string(kv.Key)), "=", kv.ModRevision)).
			Then(clientv3.OpDelete(string(kv.Key))).Commit()
		if err != nil {
			return fmt.Errorf("delete stale %s: %w", kv.Key, err)
		}
		if resp.Succeeded {
			p.log.Info("deleted the stale status of a pod no longer desired", zap.String("key", string(kv.Key)))
		}
	}
	return nil
}
