package taskevents

import (
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

func TestLedgerCorrect(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC)
	exit := Exit{ContainerID: "c1", ProcessID: "c1", ExitStatus: 2, ExitedAt: t0}
	running := runtimeadapter.Container{ID: "c1", State: runtimeadapter.StateRunning, RawState: "running", StartedAt: t0.Add(-time.Second)}
	cases := []struct {
		name    string
		record  []Exit
		c       runtimeadapter.Container
		now     time.Time
		changed bool
		want    runtimeadapter.Container
		left    int // entries after
	}{
		{"still listed running: exited as containerd says", []Exit{exit}, running, t0.Add(50 * time.Millisecond), true,
			runtimeadapter.Container{ID: "c1", State: runtimeadapter.StateExited, RawState: "exited", StartedAt: running.StartedAt,
				ExitCode: 2, Reason: "Error", FinishedAt: t0}, 1},
		{"exit 0 is Completed", []Exit{{ContainerID: "c1", ExitedAt: t0}}, running, t0, true,
			runtimeadapter.Container{ID: "c1", State: runtimeadapter.StateExited, RawState: "exited", StartedAt: running.StartedAt,
				Reason: "Completed", FinishedAt: t0}, 1},
		{"OOM", []Exit{{ContainerID: "c1", ExitStatus: 137, ExitedAt: t0, OOMKilled: true}}, running, t0, true,
			runtimeadapter.Container{ID: "c1", State: runtimeadapter.StateExited, RawState: "exited", StartedAt: running.StartedAt,
				ExitCode: 137, Reason: "OOMKilled", FinishedAt: t0}, 1},
		{"exec exit not recorded", []Exit{{ContainerID: "c1", ProcessID: "e", ExitedAt: t0}}, running, t0, false, running, 0},
		{"another container", []Exit{{ContainerID: "c2", ExitedAt: t0}}, running, t0, false, running, 1},
		{"daemon caught up: entry dropped", []Exit{exit},
			runtimeadapter.Container{ID: "c1", State: runtimeadapter.StateExited, ExitCode: 2, FinishedAt: t0}, t0, false,
			runtimeadapter.Container{ID: "c1", State: runtimeadapter.StateExited, ExitCode: 2, FinishedAt: t0}, 0},
		{"started again since the exit", []Exit{exit},
			runtimeadapter.Container{ID: "c1", State: runtimeadapter.StateRunning, StartedAt: t0.Add(time.Second)}, t0.Add(2 * time.Second), false,
			runtimeadapter.Container{ID: "c1", State: runtimeadapter.StateRunning, StartedAt: t0.Add(time.Second)}, 0},
		{"expired", []Exit{exit}, running, t0.Add(DefaultLedgerTTL + time.Second), false, running, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := NewLedger(0)
			for _, e := range tc.record {
				l.Record(e, t0)
			}
			c := tc.c
			if got := l.Correct(&c, tc.now); got != tc.changed {
				t.Fatalf("Correct = %v, want %v", got, tc.changed)
			}
			if c.ID != tc.want.ID || c.State != tc.want.State || c.RawState != tc.want.RawState || c.ExitCode != tc.want.ExitCode ||
				c.Reason != tc.want.Reason || !c.FinishedAt.Equal(tc.want.FinishedAt) || !c.StartedAt.Equal(tc.want.StartedAt) {
				t.Fatalf("container = %+v, want %+v", c, tc.want)
			}
			if l.Len() != tc.left {
				t.Fatalf("entries left = %d, want %d", l.Len(), tc.left)
			}
		})
	}
}

func TestLedgerBounded(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC)
	l := NewLedger(time.Minute)
	l.max = 10
	for i := range 10 {
		l.Record(Exit{ContainerID: string(rune('a' + i)), ExitedAt: t0.Add(-50 * time.Second)}, t0)
	}
	l.Record(Exit{ContainerID: "new", ExitedAt: t0}, t0)
	if l.Len() != 1 {
		t.Fatalf("after overflow %d entries, want 1 (the old half swept)", l.Len())
	}
}
