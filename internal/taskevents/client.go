package taskevents

import (
	"context"
	"errors"
	"fmt"
	"time"

	eventsapi "github.com/containerd/containerd/api/services/events/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// ErrUnavailable: containerd could not be reached or the stream broke.
var ErrUnavailable = errors.New("containerd unavailable")

// Client follows one containerd's task events over its gRPC socket.
type Client struct {
	addr string
	conn *grpc.ClientConn
	api  eventsapi.EventsClient
}

// Dial returns a Client of the containerd listening on the unix socket
// addr. Nothing is connected before the first Subscribe.
func Dial(addr string) (*Client, error) {
	conn, err := grpc.NewClient("unix://"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("containerd at %s: %w", addr, err)
	}
	return &Client{addr: addr, conn: conn, api: eventsapi.NewEventsClient(conn)}, nil
}

// Addr is the socket the client dials.
func (c *Client) Addr() string { return c.addr }

// Close closes the connection; open subscriptions end.
func (c *Client) Close() error { return c.conn.Close() }

// Subscribe follows the task exits (and OOMs, folded into the next exit
// of their container as OOMKilled) of namespace ns from now on. It returns
// once the stream is open (connected and requested; containerd registers
// the subscription a moment later and sends no header before its first
// event), or with the error that kept it from opening
// (wrapping ErrUnavailable). The channel closes when ctx ends or the
// stream breaks; the error channel (buffered, one value) then says why:
// ctx.Err(), or an error wrapping ErrUnavailable. Events missed between
// two subscriptions are not replayed: callers list to catch up.
func (c *Client) Subscribe(ctx context.Context, ns string) (<-chan Exit, <-chan error, error) {
	return follow(ctx, c, ns, func(e Exit) (Exit, bool) { return e, true })
}

// follow is Subscribe with each exit passed through keep, on the
// goroutine that reads the stream, and sent on only when it says so: a
// caller's filter and conversion cost no goroutine and channel of their
// own between containerd and the caller (a hand-off that waits for a core
// on a loaded node).
func follow[T any](ctx context.Context, c *Client, ns string, keep func(Exit) (T, bool)) (<-chan T, <-chan error, error) {
	stream, err := c.api.Subscribe(ctx, &eventsapi.SubscribeRequest{Filters: Filters(ns)})
	if err != nil {
		return nil, nil, c.wrap(ctx, err, ns)
	}
	out := make(chan T)
	errs := make(chan error, 1)
	go func() {
		defer close(errs)
		defer close(out)
		oom := map[string]bool{}
		for {
			env, err := stream.Recv()
			if err != nil {
				errs <- c.wrap(ctx, err, ns)
				return
			}
			received := time.Now()
			kind, e, err := Decode(env)
			e.Received = received
			switch {
			case err != nil:
				continue // one odd event does not end the stream
			case kind == KindOOM:
				oom[e.ContainerID] = true
				continue
			case kind != KindExit:
				continue
			}
			if e.Init() && oom[e.ContainerID] {
				e.OOMKilled = true
				delete(oom, e.ContainerID)
			}
			v, ok := keep(e)
			if !ok {
				continue
			}
			select {
			case out <- v:
			case <-ctx.Done():
				errs <- ctx.Err()
				return
			}
		}
	}()
	return out, errs, nil
}

// wrap names the socket and namespace; ctx's own end is returned as is.
func (c *Client) wrap(ctx context.Context, err error, ns string) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("containerd task events at %s (namespace %s): %w: %w", c.addr, ns, ErrUnavailable, err)
}
