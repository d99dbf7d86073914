package taskevents

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// Follower is what a runtime adapter needs to implement
// runtimeadapter.ExitSource on one containerd namespace: the subscription
// (a Client), the owners of the containers the adapter has learnt (their
// node and pod, for routing an exit, which names only the container), and
// the Ledger that corrects the adapter's listings until the daemon above
// containerd (dockerd, the CRI plugin) has handled an exit. The Docker
// adapter follows namespace moby, the CRI adapter k8s.io.
//
// A nil *Follower follows nothing: Path is "", Exits fails with
// runtimeadapter.ErrUnavailable, and Learn, Forget and Correct do nothing.
// Safe for concurrent use.
type Follower struct {
	client *Client
	ns     string
	who    string // the adapter, as errors name it ("docker", "cri")
	log    *zap.Logger
	ledger *Ledger

	mu     sync.Mutex
	owners map[string]owner

	execExits atomic.Int64
}

// owner is whose a container is, as the adapter learnt it (create, list,
// inspect).
type owner struct {
	node, uid string
	at        time.Time // when learnt
}

// NewFollower returns a Follower of namespace ns of the containerd on the
// unix socket addr, for the adapter who ("docker", "cri": named in errors
// and logs). Nothing is dialled before the first Exits.
func NewFollower(addr, ns, who string, log *zap.Logger) (*Follower, error) {
	c, err := Dial(addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", who, err)
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &Follower{client: c, ns: ns, who: who, log: log, ledger: NewLedger(0), owners: map[string]owner{}}, nil
}

// Path names what is followed, for runtimeadapter.ExitSource.ExitPath:
// "containerd task events at <socket>, namespace <ns>"; "" for nil.
func (f *Follower) Path() string {
	if f == nil {
		return ""
	}
	return fmt.Sprintf("containerd task events at %s, namespace %s", f.client.Addr(), f.ns)
}

// ExecExits counts the exits of exec processes the Exits streams saw and
// did not report (they are not deaths).
func (f *Follower) ExecExits() int64 {
	if f == nil {
		return 0
	}
	return f.execExits.Load()
}

// Close closes the connection; open streams end.
func (f *Follower) Close() error {
	if f == nil {
		return nil
	}
	return f.client.Close()
}

// Exits implements runtimeadapter.ExitSource.Exits: the init-process
// exits of node's containers. Exits of containers not learnt as node's
// are not reported (the runtime's own events and the relist still find
// them); exec exits never are. Every init exit is recorded in the ledger.
func (f *Follower) Exits(ctx context.Context, node string) (<-chan runtimeadapter.Exit, <-chan error) {
	out := make(chan runtimeadapter.Exit)
	errs := make(chan error, 1)
	fail := func(err error) (<-chan runtimeadapter.Exit, <-chan error) {
		errs <- err
		close(errs)
		close(out)
		return out, errs
	}
	if f == nil {
		return fail(fmt.Errorf("container exits of node %s: no containerd configured: %w", node, runtimeadapter.ErrUnavailable))
	}
	// The filter runs on the goroutine that reads containerd's stream: one
	// hand-off, not two, between containerd and the caller, and none for
	// a caller's ExitHook (runtimeadapter.WithExitHook).
	hook := runtimeadapter.ExitHookOf(ctx)
	raw, rerrs, err := follow(ctx, f.client, f.ns, func(e Exit) (runtimeadapter.Exit, bool) {
		if !e.Init() {
			f.execExits.Add(1)
			return runtimeadapter.Exit{}, false
		}
		f.ledger.Record(e, e.Received)
		uid, ok := f.ownerOf(e.ContainerID, node)
		if !ok {
			f.log.Debug(f.who+": task exit of a container not known as this node's", zap.String("id", e.ContainerID))
			return runtimeadapter.Exit{}, false
		}
		x := runtimeadapter.Exit{ContainerID: e.ContainerID, PodUID: uid, ExitCode: int(e.ExitStatus), ExitedAt: e.ExitedAt,
			OOMKilled: e.OOMKilled, Published: e.Published, Received: e.Received}
		if hook != nil {
			x.Handled = hook(x)
		}
		return x, true
	})
	if err != nil {
		return fail(f.exitsErr(ctx, node, err))
	}
	go func() { // the stream's end, said in the adapter's words
		defer close(errs)
		err := <-rerrs
		errs <- f.exitsErr(ctx, node, err)
	}()
	return raw, errs
}

func (f *Follower) exitsErr(ctx context.Context, node string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("%s: container exits of node %s: %w: %w", f.who, node, runtimeadapter.ErrUnavailable, err)
}

// Learn records whose the containers cs are, from their labels, if
// actorlet's (one lock for the lot: a listing is learnt at once).
func (f *Follower) Learn(at time.Time, cs ...runtimeadapter.Container) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range cs {
		node, uid := cs[i].Labels[runtimeadapter.LabelNode], cs[i].Labels[runtimeadapter.LabelPodUID]
		if cs[i].ID != "" && node != "" && uid != "" {
			f.owners[cs[i].ID] = owner{node: node, uid: uid, at: at}
		}
	}
}

// Forget drops the owners a listing of opts, observed at observedAt, shows
// gone: learnt before it began, in its scope (opts.All, same node, same
// pod when narrowed) and not in seen.
func (f *Follower) Forget(opts runtimeadapter.ListOptions, seen map[string]bool, observedAt time.Time) {
	if f == nil || !opts.All {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, o := range f.owners {
		if o.node == opts.Node && (opts.PodUID == "" || o.uid == opts.PodUID) && !seen[id] && o.at.Before(observedAt) {
			delete(f.owners, id)
		}
	}
}

func (f *Follower) ownerOf(id, node string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o, ok := f.owners[id]
	return o.uid, ok && o.node == node
}

// Correct applies the ledger to containers as the daemon reported them:
// one whose task exited is reported exited even while the daemon still
// says running (see Ledger).
func (f *Follower) Correct(cs []runtimeadapter.Container) {
	if f == nil || f.ledger.Len() == 0 {
		return
	}
	now := time.Now()
	for i := range cs {
		if f.ledger.Correct(&cs[i], now) {
			f.log.Debug(f.who+": still reports running a container whose task exited; reporting it exited",
				zap.String("id", cs[i].ID), zap.Time("exitedAt", cs[i].FinishedAt))
		}
	}
}
