package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/actorlet/actorlet/internal/version"
)

// Heartbeat is the document under <prefix>/nodes/<node>/heartbeat.
type Heartbeat struct {
	Node    string `json:"node"`
	Version string `json:"version"`
	// Started is when this lease was granted: the node's start, or its
	// return after losing the lease.
	Started time.Time `json:"started"`
	// LeaseTTLSeconds is the lease's TTL as etcd granted it.
	LeaseTTLSeconds int64 `json:"leaseTTLSeconds"`
}

// leaseSeconds is d in whole seconds, rounded up (at least 1).
func leaseSeconds(d time.Duration) int64 {
	return max(1, int64(math.Ceil(d.Seconds())))
}

// heartbeatLoop keeps the heartbeat key alive until ctx ends, then
// revokes its lease. A lease lost (expired while etcd was unreachable for
// longer than its TTL) is replaced by a new one, with backoff.
func (p *Publisher) heartbeatLoop(ctx context.Context) {
	bo := p.newBackoff()
	for {
		lease, err := p.beat(ctx, bo)
		if lease != clientv3.NoLease {
			p.revokeIfDone(ctx, lease)
		}
		if ctx.Err() != nil {
			return
		}
		p.log.Warn("node heartbeat lost; granting a new lease", zap.Error(err))
		if !sleep(ctx, bo.NextBackOff()) {
			return
		}
	}
}

// beat grants a lease, writes the heartbeat under it and keeps it alive
// until the keep-alive ends (ctx ended, or the lease is gone). It returns
// the lease (NoLease if none was granted) and why it ended.
func (p *Publisher) beat(ctx context.Context, bo interface{ Reset() }) (clientv3.LeaseID, error) {
	key := p.o.Keys.Heartbeat(p.o.Node)
	rctx, cancel := p.request(ctx)
	defer cancel()
	lease, err := p.o.Client.Grant(rctx, leaseSeconds(p.o.LeaseDuration))
	if err != nil {
		return clientv3.NoLease, fmt.Errorf("heartbeat %s: grant a lease of %ds: %w", key, leaseSeconds(p.o.LeaseDuration), err)
	}
	doc, _ := json.Marshal(Heartbeat{ // a Heartbeat always marshals
		Node: p.o.Node, Version: version.Version, Started: time.Now().UTC(), LeaseTTLSeconds: lease.TTL,
	})
	if _, err := p.o.Client.Put(rctx, key, string(doc), clientv3.WithLease(lease.ID)); err != nil {
		return lease.ID, fmt.Errorf("heartbeat %s: write under lease %x: %w", key, int64(lease.ID), err)
	}
	kch, err := p.o.Client.KeepAlive(ctx, lease.ID)
	if err != nil {
		return lease.ID, fmt.Errorf("heartbeat %s: keep lease %x alive: %w", key, int64(lease.ID), err)
	}
	p.log.Info("node heartbeat written", zap.String("key", key), zap.Int64("leaseTTLSeconds", lease.TTL),
		zap.String("lease", fmt.Sprintf("%x", int64(lease.ID))))
	bo.Reset()
	for range kch {
		// The client renews every TTL/3 and closes the channel when ctx
		// ends or the lease is gone.
	}
	return lease.ID, fmt.Errorf("heartbeat %s: lease %x expired (etcd unreachable for longer than its %ds TTL?)",
		key, int64(lease.ID), lease.TTL)
}

// revokeIfDone revokes lease once ctx has ended (Stop), so readers see
// the node gone at once rather than after the TTL; a lease lost while
// running is revoked too, in case it still lives.
func (p *Publisher) revokeIfDone(ctx context.Context, lease clientv3.LeaseID) {
	rctx, cancel := context.WithTimeout(context.Background(), revokeTimeout)
	defer cancel()
	if _, err := p.o.Client.Revoke(rctx, lease); err != nil && ctx.Err() != nil {
		p.log.Warn("could not revoke the heartbeat lease; it expires by itself", zap.Error(err),
			zap.Duration("within", time.Duration(leaseSeconds(p.o.LeaseDuration))*time.Second))
	}
}

// HeartbeatAge reads node's heartbeat: its document, and the time since
// the node last renewed its lease (granted TTL minus remaining TTL, so
// no clock of the node is involved; whole seconds). ok is false when the
// key does not exist or its lease has expired.
func HeartbeatAge(ctx context.Context, c Client, key string) (hb Heartbeat, age time.Duration, ok bool, err error) {
	resp, err := c.Get(ctx, key)
	if err != nil {
		return hb, 0, false, fmt.Errorf("read %s: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return hb, 0, false, nil
	}
	kv := resp.Kvs[0]
	if err := json.Unmarshal(kv.Value, &hb); err != nil {
		return hb, 0, false, fmt.Errorf("heartbeat %s: %w", key, err)
	}
	if kv.Lease == 0 {
		return hb, 0, false, fmt.Errorf("heartbeat %s: has no lease", key)
	}
	ttl, err := c.TimeToLive(ctx, clientv3.LeaseID(kv.Lease))
	if err != nil {
		return hb, 0, false, fmt.Errorf("heartbeat %s: lease %x: %w", key, kv.Lease, err)
	}
	if ttl.TTL <= 0 {
		return hb, 0, false, nil // expired since the read
	}
	// A new leader restarts a lease's countdown from its full TTL (plus an
	// election timeout) unless etcd checkpoints leases: never below 0.
	return hb, time.Duration(max(0, ttl.GrantedTTL-ttl.TTL)) * time.Second, true, nil
}
