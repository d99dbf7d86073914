package taskevents

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"slices"
	"testing"
	"time"

	apievents "github.com/containerd/containerd/api/events"
	eventsapi "github.com/containerd/containerd/api/services/events/v1"
	"github.com/containerd/containerd/api/types"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// fakeEvents is an in-process containerd events service: each Subscribe
// records its filters, sends what is queued on feed and ends when feed
// closes.
type fakeEvents struct {
	eventsapi.UnimplementedEventsServer
	filters chan []string
	feed    chan *types.Envelope
}

func (f *fakeEvents) Subscribe(req *eventsapi.SubscribeRequest, s eventsapi.Events_SubscribeServer) error {
	f.filters <- req.Filters
	for {
		select {
		case env, ok := <-f.feed:
			if !ok {
				return errors.New("feed closed")
			}
			if err := s.Send(env); err != nil {
				return err
			}
		case <-s.Context().Done():
			return s.Context().Err()
		}
	}
}

func serveFake(t *testing.T) (string, *fakeEvents) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "containerd.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	f := &fakeEvents{filters: make(chan []string, 4), feed: make(chan *types.Envelope, 16)}
	eventsapi.RegisterEventsServer(srv, f)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return sock, f
}

func TestSubscribe(t *testing.T) {
	sock, f := serveFake(t)
	c, err := Dial(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	exits, errs, err := c.Subscribe(ctx, DockerNamespace)
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	select {
	case got := <-f.filters:
		if !slices.Equal(got, Filters(DockerNamespace)) {
			t.Fatalf("filters = %q", got)
		}
	case <-ctx.Done():
		t.Fatal("no subscription reached the server")
	}
	at := time.Date(2026, 12, 1, 22, 0, 0, 5, time.UTC)
	before := time.Now()
	f.feed <- envelope(t, TopicExit, "moby", &apievents.TaskExit{ContainerID: "c1", ID: "e1", ExitStatus: 1, ExitedAt: timestamppb.New(at)})
	f.feed <- envelope(t, TopicOOM, "moby", &apievents.TaskOOM{ContainerID: "c1"})
	f.feed <- envelope(t, TopicExit, "moby", &apievents.TaskExit{ID: "broken"}) // skipped
	f.feed <- envelope(t, TopicExit, "moby", &apievents.TaskExit{ContainerID: "c1", ID: "c1", ExitStatus: 137, ExitedAt: timestamppb.New(at)})
	want := []Exit{
		{Namespace: "moby", ContainerID: "c1", ProcessID: "e1", ExitStatus: 1, ExitedAt: at, Published: published},
		{Namespace: "moby", ContainerID: "c1", ProcessID: "c1", ExitStatus: 137, ExitedAt: at, OOMKilled: true, Published: published},
	}
	for i, w := range want {
		select {
		case got := <-exits:
			// Received is when the stream delivered it: after the feed.
			if got.Received.Before(before) || got.Received.After(time.Now()) {
				t.Fatalf("exit %d received at %v, not between the feed (%v) and now", i, got.Received, before)
			}
			got.Received = time.Time{}
			if got != w {
				t.Fatalf("exit %d = %+v, want %+v", i, got, w)
			}
		case <-ctx.Done():
			t.Fatalf("exit %d never came", i)
		}
	}
	close(f.feed) // the server ends the stream
	for range exits {
	}
	if err := <-errs; !errors.Is(err, ErrUnavailable) {
		t.Fatalf("stream end: %v, want ErrUnavailable", err)
	}
}

func TestSubscribeCancelled(t *testing.T) {
	sock, _ := serveFake(t)
	c, err := Dial(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	exits, errs, err := c.Subscribe(ctx, DockerNamespace)
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	cancel()
	for range exits {
	}
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: %v, want context.Canceled", err)
	}
}

func TestSubscribeNoSocket(t *testing.T) {
	c, err := Dial(filepath.Join(t.TempDir(), "absent.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err = c.Subscribe(ctx, DockerNamespace)
	if !errors.Is(err, ErrUnavailable) || ctx.Err() != nil {
		t.Fatalf("Subscribe to an absent socket: %v, want ErrUnavailable at once", err)
	}
}
