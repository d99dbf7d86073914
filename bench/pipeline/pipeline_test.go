package pipeline

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// A small run of the whole benchmark: every number it reports is sane.
func TestRunSmall(t *testing.T) {
	r, tables, err := Run(Options{Pods: 50, Rounds: 2, Tries: 1, Kills: 10})
	if err != nil {
		t.Fatal(err)
	}
	if r.Pods.Events != 100 || r.Pods.Elapsed <= 0 || r.Router.Events != 1000 || r.Kills.Events != 10 {
		t.Errorf("throughput: %+v %+v %+v", r.Pods, r.Router, r.Kills)
	}
	if r.Memory.Tree <= 0 || r.Memory.Spec <= 0 || r.Memory.Status <= 0 {
		t.Errorf("memory: %+v", r.Memory)
	}
	if len(r.Floors) != 2 {
		t.Fatalf("%d floors, want 2", len(r.Floors))
	}
	for _, f := range r.Floors {
		if f.Bytes <= 0 || f.Send.Events != 100 || f.Send.CPU <= 0 {
			t.Errorf("floor %s: %+v", f.Name, f)
		}
	}
	if testing.Verbose() {
		for _, tb := range tables {
			tb.Write(os.Stdout)
		}
	}
}

func TestQuietClock(t *testing.T) {
	var q Env
	q.quiet.Store(true)
	c := quietClock{quiet: &q.quiet}
	fired := make(chan bool, 2)
	c.AfterFunc(time.Millisecond, func() { fired <- true })
	select {
	case <-fired:
	case <-time.After(5 * time.Second):
		t.Fatal("short timer did not fire")
	}
}

// The end-to-end run counts one pod message per death: a killed container
// is not restarted during the benchmark (its back-off is armed at start).
func TestKilledContainersAreNotRestarted(t *testing.T) {
	e, err := Start("bench-norestart", 5, false, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Kill(5, time.Minute); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // a restart would be at once
	creates := 0
	for _, c := range e.RT.Calls() {
		if c.Method == fake.MethodCreate && strings.HasPrefix(c.Arg, "actorlet_app_") {
			creates++
		}
	}
	if creates != 5 {
		t.Errorf("%d app creates, want 5 (no restart after the kills)", creates)
	}
}
