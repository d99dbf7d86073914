package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"golang.org/x/sync/errgroup"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/actorlet/actorlet/internal/fleet"
	"github.com/actorlet/actorlet/internal/manifest"
	etcdsource "github.com/actorlet/actorlet/sources/etcd"
)

// fleetPageSize is how many keys one read of `get pods --all-nodes` asks
// for; the reads page through the fleet at one revision.
const fleetPageSize = 1000

// heartbeatReaders bounds the lease lookups of `get pods --all-nodes`
// running at once.
const heartbeatReaders = 16

// fleetNode is one node as etcd shows it.
type fleetNode struct {
	name      string
	heartbeat bool          // the heartbeat key lives
	age       time.Duration // since the node last renewed it
	reported  bool          // the node has written statuses or events: it ran once
	pods      map[string]*fleetPod
}

// fleetPod is one pod name of a node: its desired pod, its status, or both.
type fleetPod struct {
	namespace, name string
	desired         bool
	spec            *v1.Pod // the decoded pod key; nil if missing or undecodable
	status          *v1.Pod // the status document; nil if none
}

func (n *fleetNode) pod(ns, name string) *fleetPod {
	k := ns + "/" + name
	p := n.pods[k]
	if p == nil {
		p = &fleetPod{namespace: ns, name: name}
		n.pods[k] = p
	}
	return p
}

// getFleetPods prints the pods of the fleet's nodes (f.node, or every
// node with --all-nodes) from etcd: per node its heartbeat, per pod its
// status as the node last wrote it.
func getFleetPods(ctx context.Context, out, errOut io.Writer, f *getPodsFlags, names []string) error {
	if f.output != "" {
		return fmt.Errorf("--output %q: --all-nodes and --node print the table only", f.output)
	}
	if f.node != "" {
		if err := etcdsource.ValidNodeName(f.node); err != nil {
			return fmt.Errorf("--node: %w", err)
		}
	}
	fc, err := openFleet(&f.etcd)
	if err != nil {
		return err
	}
	defer fc.Close()
	nodes, err := readFleet(ctx, fc, f.node)
	if err != nil {
		return f.etcd.etcdError("read the fleet", err)
	}
	if f.node != "" && nodes[f.node] == nil {
		nodes[f.node] = &fleetNode{name: f.node, pods: map[string]*fleetPod{}}
	}
	if len(nodes) == 0 {
		_, err := fmt.Fprintf(errOut, "No nodes found under %s\n", fc.keys.Nodes())
		return err
	}
	if err := readHeartbeats(ctx, fc, nodes); err != nil {
		return f.etcd.etcdError("read the heartbeats", err)
	}
	return printFleet(out, nodes, f, names, cliNow())
}

// readFleet reads every key under the nodes prefix (or one node's), page
// by page at the first page's revision.
func readFleet(ctx context.Context, fc *fleetConn, only string) (map[string]*fleetNode, error) {
	prefix := fc.keys.Nodes()
	if only != "" {
		prefix = fc.keys.Node(only)
	}
	nodes := map[string]*fleetNode{}
	node := func(name string) *fleetNode {
		n := nodes[name]
		if n == nil {
			n = &fleetNode{name: name, pods: map[string]*fleetPod{}}
			nodes[name] = n
		}
		return n
	}
	start, end := prefix, clientv3.GetPrefixRangeEnd(prefix)
	var rev int64
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(fleetPageSize)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		rctx, cancel := request(ctx)
		resp, err := fc.c.Get(rctx, start, opts...)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", prefix, err)
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		for _, kv := range resp.Kvs {
			k, ok := fc.keys.Parse(string(kv.Key))
			if !ok {
				continue
			}
			n := node(k.Node)
			switch k.Kind {
			case etcdsource.KindHeartbeat:
				n.heartbeat = true // confirmed by its lease below
			case etcdsource.KindEvents:
				n.reported = true
			case etcdsource.KindPods:
				p := n.pod(k.Namespace, k.Name)
				p.desired = true
				if pod, err := manifest.Decode(string(kv.Key), kv.Value); err == nil {
					p.spec = pod
				}
			case etcdsource.KindStatus:
				n.reported = true
				var st v1.Pod
				if json.Unmarshal(kv.Value, &st) == nil {
					n.pod(k.Namespace, k.Name).status = &st
				}
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return nodes, nil
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// readHeartbeats looks up the lease of every node with a heartbeat key,
// a few at a time.
func readHeartbeats(ctx context.Context, fc *fleetConn, nodes map[string]*fleetNode) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(heartbeatReaders)
	for _, n := range nodes {
		if !n.heartbeat {
			continue
		}
		g.Go(func() error {
			rctx, cancel := request(gctx)
			defer cancel()
			_, age, ok, err := fleet.HeartbeatAge(rctx, fc.c, fc.keys.Heartbeat(n.name))
			if err != nil {
				return err
			}
			n.heartbeat, n.age = ok, age
			if ok {
				n.reported = true
			}
			return nil
		})
	}
	return g.Wait()
}

// printFleet prints NODE HEARTBEAT NAMESPACE NAME READY STATUS RESTARTS
// AGE, a row per pod name and one for a node without pods. HEARTBEAT is
// the time since the node renewed its lease, "stale" when the lease is
// gone but the node has written statuses or events (they are then marked
// stale too), and "no heartbeat" when the node never reported.
func printFleet(out io.Writer, nodes map[string]*fleetNode, f *getPodsFlags, names []string, now time.Time) error {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	nodeNames := make([]string, 0, len(nodes))
	for n := range nodes {
		nodeNames = append(nodeNames, n)
	}
	sort.Strings(nodeNames)
	tw := newTable(out)
	fmt.Fprintln(tw, "NODE\tHEARTBEAT\tNAMESPACE\tNAME\tREADY\tSTATUS\tRESTARTS\tAGE")
	for _, nn := range nodeNames {
		n := nodes[nn]
		hb := "no heartbeat"
		switch {
		case n.heartbeat:
			hb = duration.HumanDuration(n.age) + " ago"
		case n.reported:
			hb = "stale"
		}
		keys := make([]string, 0, len(n.pods))
		for k, p := range n.pods {
			if (len(want) == 0 || want[p.name]) && (!f.namespaceSet || p.namespace == f.namespace) {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		if len(keys) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t-\t-\n", n.name, hb)
			continue
		}
		for _, k := range keys {
			p := n.pods[k]
			ready, status, restarts, age := "-", "<no status>", "-", "-"
			if p.status != nil {
				shown := p.status.DeepCopy()
				if p.spec != nil {
					shown.Spec = p.spec.Spec
				} else {
					for _, cs := range shown.Status.ContainerStatuses {
						shown.Spec.Containers = append(shown.Spec.Containers, v1.Container{Name: cs.Name})
					}
				}
				s := summarizePod(shown)
				ready, status, restarts, age = fmt.Sprintf("%d/%d", s.ready, s.total), s.status, s.restartsColumn(now), podAge(shown, now)
			}
			var marks []string
			if !p.desired {
				marks = append(marks, "not desired")
			}
			if !n.heartbeat && p.status != nil {
				marks = append(marks, "stale")
			}
			if len(marks) > 0 {
				status += " (" + strings.Join(marks, ", ") + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.name, hb, p.namespace, p.name, ready, status, restarts, age)
		}
	}
	return tw.Flush()
}
