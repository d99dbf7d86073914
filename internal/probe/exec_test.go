package probe

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// fakeContainer returns a fake runtime with one running container named
// "app" in its pod, and the container's ID.
func fakeContainer(t *testing.T) (*fake.Runtime, string) {
	t.Helper()
	ctx := context.Background()
	rt := fake.New(fake.WithImages("img"))
	meta := runtimeadapter.Meta{Node: "n", PodUID: "u", PodName: "p", PodNamespace: "default", ContainerName: "app", Type: runtimeadapter.TypeApp}
	id, err := rt.Create(ctx, runtimeadapter.ContainerSpec{Name: "app-1", Image: "img", Labels: meta.Labels()})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	return rt, id
}

func TestExec(t *testing.T) {
	cmd := &v1.ExecAction{Command: []string{"cat", "/tmp/healthy"}}
	tests := []struct {
		name     string
		outcome  *fake.ExecOutcome // nil: unscripted (exit 0)
		action   *v1.ExecAction
		want     Result
		wantOut  string
		wantErr  error // for Unknown: what the error wraps (nil: any)
		wantTook time.Duration
	}{
		{name: "exit 0", action: cmd, outcome: &fake.ExecOutcome{Result: runtimeadapter.ExecResult{Output: []byte("ok")}}, want: Success, wantOut: "ok"},
		{name: "unscripted", action: cmd, want: Success},
		{name: "exit 1", action: cmd, outcome: &fake.ExecOutcome{Result: runtimeadapter.ExecResult{ExitCode: 1, Output: []byte("no file")}}, want: Failure, wantOut: "no file"},
		{name: "exit 2 silent", action: cmd, outcome: &fake.ExecOutcome{Result: runtimeadapter.ExecResult{ExitCode: 2}}, want: Failure, wantOut: `command ["cat" "/tmp/healthy"] exited with 2`},
		{name: "slow but in time", action: cmd, outcome: &fake.ExecOutcome{Duration: 1500 * time.Millisecond}, want: Success, wantTook: 1500 * time.Millisecond},
		{name: "hang", action: cmd, outcome: &fake.ExecOutcome{Hang: true}, want: Failure, wantOut: "timed out after 2s", wantTook: 2 * time.Second},
		{name: "too slow", action: cmd, outcome: &fake.ExecOutcome{Duration: time.Hour}, want: Failure, wantTook: 2 * time.Second},
		{name: "runtime error", action: cmd, outcome: &fake.ExecOutcome{Err: runtimeadapter.ErrUnavailable}, want: Unknown, wantErr: runtimeadapter.ErrUnavailable},
		{name: "empty command", action: &v1.ExecAction{}, want: Unknown},
		{name: "no action", action: nil, want: Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rt, id := fakeContainer(t)
				if tt.outcome != nil {
					o := *tt.outcome
					rt.ScriptExec("app", func([]string) fake.ExecOutcome { return o })
				}
				start := time.Now()
				r, out, err := Exec(context.Background(), rt, id, tt.action, 2*time.Second)
				if r != tt.want {
					t.Errorf("result %v, want %v (output %q, error %v)", r, tt.want, out, err)
				}
				if (err != nil) != (r == Unknown) {
					t.Errorf("error %v with result %v: want an error exactly for Unknown", err, r)
				}
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Errorf("error %v, want one wrapping %v", err, tt.wantErr)
				}
				if !strings.Contains(out, tt.wantOut) {
					t.Errorf("output %q, want it to contain %q", out, tt.wantOut)
				}
				if took := time.Since(start); took != tt.wantTook {
					t.Errorf("probe took %v, want %v", took, tt.wantTook)
				}
				if n := rt.ExecInFlight("app"); n != 0 {
					t.Errorf("%d execs left in flight", n)
				}
			})
		})
	}
}

func TestExecUnknown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		cmd := &v1.ExecAction{Command: []string{"true"}}

		if r, _, err := Exec(ctx, nil, "x", cmd, time.Second); r != Unknown || err == nil {
			t.Errorf("no Execer: %v, %v; want Unknown with an error", r, err)
		}

		rt, id := fakeContainer(t)
		if r, _, err := Exec(ctx, rt, "missing", cmd, time.Second); r != Unknown || !errors.Is(err, runtimeadapter.ErrNotFound) {
			t.Errorf("missing container: %v, %v; want Unknown, ErrNotFound", r, err)
		}

		rt.SetExecHang("app")
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(100*time.Millisecond, cancel)
		if r, _, err := Exec(cctx, rt, id, cmd, time.Second); r != Unknown || !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled: %v, %v; want Unknown, context.Canceled", r, err)
		}

		if err := rt.Stop(ctx, id, 0); err != nil {
			t.Fatal(err)
		}
		if r, _, err := Exec(ctx, rt, id, cmd, time.Second); r != Unknown || !errors.Is(err, runtimeadapter.ErrNotRunning) {
			t.Errorf("stopped container: %v, %v; want Unknown, ErrNotRunning", r, err)
		}
	})
}
