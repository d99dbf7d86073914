package taskevents

import (
	"context"
	"errors"
	"testing"
	"time"

	apievents "github.com/containerd/containerd/api/events"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/actorlet/actorlet/runtimeadapter"
)

func labelled(id, node, uid string) runtimeadapter.Container {
	return runtimeadapter.Container{ID: id, State: runtimeadapter.StateRunning,
		Labels: map[string]string{runtimeadapter.LabelNode: node, runtimeadapter.LabelPodUID: uid}}
}

// A Follower reports the init exits of the containers it learnt as the
// node's, with their pod; exec exits are counted, not reported; exits of
// other nodes' containers, of unknown ones and of forgotten ones are not
// reported; the ledger corrects a listing that still says running.
func TestFollowerExits(t *testing.T) {
	sock, fk := serveFake(t)
	f, err := NewFollower(sock, CRINamespace, "cri", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if want := "containerd task events at " + sock + ", namespace k8s.io"; f.Path() != want {
		t.Fatalf("Path = %q, want %q", f.Path(), want)
	}
	t0 := time.Now()
	f.Learn(t0, labelled("a", "n1", "pod-a"), labelled("b", "n2", "pod-b"), labelled("gone", "n1", "pod-g"),
		runtimeadapter.Container{ID: "unlabelled"})
	f.Forget(runtimeadapter.ListOptions{Node: "n1", All: true}, map[string]bool{"a": true}, t0.Add(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The caller's hook sees the exit first, on the reading goroutine.
	hooked := make(chan runtimeadapter.Exit, 4)
	exits, errs := f.Exits(runtimeadapter.WithExitHook(ctx, func(x runtimeadapter.Exit) bool {
		hooked <- x
		return true
	}), "n1")
	<-fk.filters
	at := t0.Add(time.Second)
	for _, e := range []*apievents.TaskExit{
		{ContainerID: "a", ID: "exec-1", ExitStatus: 0, ExitedAt: timestamppb.New(at)}, // an exec: not a death
		{ContainerID: "b", ID: "b", ExitStatus: 1, ExitedAt: timestamppb.New(at)},      // node n2's
		{ContainerID: "gone", ID: "gone", ExitStatus: 1, ExitedAt: timestamppb.New(at)},
		{ContainerID: "unlabelled", ID: "unlabelled", ExitStatus: 1, ExitedAt: timestamppb.New(at)},
		{ContainerID: "a", ID: "a", ExitStatus: 2, ExitedAt: timestamppb.New(at)},
	} {
		fk.feed <- envelope(t, TopicExit, CRINamespace, e)
	}
	select {
	case x := <-exits:
		want := runtimeadapter.Exit{ContainerID: "a", PodUID: "pod-a", ExitCode: 2, ExitedAt: at}
		if x.ContainerID != want.ContainerID || x.PodUID != want.PodUID || x.ExitCode != want.ExitCode || !x.ExitedAt.Equal(at) {
			t.Fatalf("exit = %+v, want %+v", x, want)
		}
		// The dates of its way here: the shim's publish, this process's read.
		if !x.Published.Equal(published) || x.Received.Before(t0) {
			t.Fatalf("exit published %v, received %v; want %v, and after %v", x.Published, x.Received, published, t0)
		}
		if !x.Handled || len(hooked) != 1 {
			t.Fatalf("exit handled %v, %d exits seen by the hook; want handled, the one exit", x.Handled, len(hooked))
		}
		if h := <-hooked; h.ContainerID != "a" || h.Handled {
			t.Fatalf("the hook saw %+v, want container a's exit before it was marked handled", h)
		}
	case err := <-errs:
		t.Fatalf("stream ended: %v", err)
	case <-ctx.Done():
		t.Fatal("no exit reported")
	}
	if n := f.ExecExits(); n != 1 {
		t.Fatalf("ExecExits = %d, want 1", n)
	}
	cs := []runtimeadapter.Container{labelled("a", "n1", "pod-a")}
	cs[0].StartedAt = t0
	f.Correct(cs)
	if cs[0].State != runtimeadapter.StateExited || cs[0].ExitCode != 2 || !cs[0].FinishedAt.Equal(at) {
		t.Fatalf("a still listed running after its exit: corrected to %+v", cs[0])
	}
	cancel()
	for range exits {
	}
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: %v", err)
	}
}

// A nil Follower follows nothing.
func TestNilFollower(t *testing.T) {
	var f *Follower
	if f.Path() != "" || f.ExecExits() != 0 || f.Close() != nil {
		t.Fatal("a nil Follower claims a path, exec exits or a close error")
	}
	f.Learn(time.Now(), labelled("a", "n", "p"))
	f.Forget(runtimeadapter.ListOptions{Node: "n", All: true}, nil, time.Now())
	f.Correct([]runtimeadapter.Container{labelled("a", "n", "p")})
	exits, errs := f.Exits(context.Background(), "n")
	if _, ok := <-exits; ok {
		t.Fatal("an exit from a nil Follower")
	}
	if err := <-errs; !errors.Is(err, runtimeadapter.ErrUnavailable) {
		t.Fatalf("Exits of a nil Follower: %v, want ErrUnavailable", err)
	}
}
