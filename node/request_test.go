package node_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/actorlet/actorlet/node"
)

// The request helpers fail, naming the request, when the answer is not the
// one expected, when ctx ends first, and when nobody answers in time.
func TestRequestFailures(t *testing.T) {
	sys := quietSystem()
	wrong := sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if c.Sender() != nil {
			c.Respond("not a pod list")
		}
	}))
	silent := sys.Root.Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	defer sys.Root.Stop(wrong)
	defer sys.Root.Stop(silent)

	background := func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }
	canceled := func() (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx, cancel
	}
	short := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), 50*time.Millisecond)
	}
	// canceled while waiting, before its deadline (which bounds the
	// future, so nothing outlives the test for long)
	soon := func() (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		time.AfterFunc(50*time.Millisecond, cancel)
		return ctx, cancel
	}

	tests := []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		pid  *actor.PID
		want string
		is   error
	}{
		{"wrong answer", background, wrong, "unexpected answer string", nil},
		{"ctx done before", canceled, wrong, "GetPodStatuses", context.Canceled},
		{"deadline passes", short, silent, "GetPodStatuses", nil},
		{"ctx ends while waiting", soon, silent, "GetPodStatuses", context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := tt.ctx()
			defer cancel()
			pods, err := node.PodStatuses(ctx, sys.Root, tt.pid)
			if err == nil || pods != nil {
				t.Fatalf("PodStatuses = %v, %v; want an error", pods, err)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.pid.GetId()) {
				t.Errorf("error %q does not name %q and the node %s", err, tt.want, tt.pid.GetId())
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q does not wrap %v", err, tt.is)
			}
		})
	}
}
