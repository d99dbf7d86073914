package actors

import (
	"testing"

	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// Only a plan that starts standbys, and kills, removes and creates
// nothing before them, starts before the state file is written.
func TestStandbyRestartSkipsWriteAheadWait(t *testing.T) {
	standby := podsync.Start{Name: "app", Restarts: 1, Reason: podsync.ReasonRestart, AdoptID: "sb", Standby: true}
	adopt := podsync.Start{Name: "app", Restarts: 1, Reason: podsync.ReasonAdopt, AdoptID: "c"}
	create := podsync.Start{Name: "app", Restarts: 1, Reason: podsync.ReasonRestart}
	dead := runtimeadapter.Container{ID: "old"}
	for _, tc := range []struct {
		name string
		plan podsync.Plan
		want bool
	}{
		{"a standby's start", podsync.Plan{Start: []podsync.Start{standby}}, true},
		{"a standby's start, then GC and the next standby", podsync.Plan{Start: []podsync.Start{standby},
			Remove: []runtimeadapter.Container{dead}, Standby: []podsync.Start{{Name: "other", Restarts: 1}}}, true},
		{"nothing to start", podsync.Plan{Remove: []runtimeadapter.Container{dead}}, false},
		{"a create and start", podsync.Plan{Start: []podsync.Start{create}}, false},
		{"an adoption that is not a standby", podsync.Plan{Start: []podsync.Start{adopt}}, false},
		{"a standby and a create", podsync.Plan{Start: []podsync.Start{standby, create}}, false},
		{"a kill first", podsync.Plan{Start: []podsync.Start{standby}, Kill: []podsync.Kill{{Container: dead}}}, false},
		{"a stale standby removed first", podsync.Plan{Start: []podsync.Start{standby}, DropStandby: []runtimeadapter.Container{dead}}, false},
		{"a new sandbox", podsync.Plan{Start: []podsync.Start{standby}, CreateSandbox: true}, false},
		{"a sandbox adopted", podsync.Plan{Start: []podsync.Start{standby}, AdoptSandboxID: "sb0"}, false},
	} {
		if got := standbyRestart(tc.plan); got != tc.want {
			t.Errorf("%s: standbyRestart = %v, want %v", tc.name, got, tc.want)
		}
	}
}
