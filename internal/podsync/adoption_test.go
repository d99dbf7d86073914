package podsync

import (
	"testing"

	"github.com/actorlet/actorlet/runtimeadapter"
)

func TestAdoptionOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    runtimeadapter.Container
		want Adoption
	}{
		{"running", runtimeadapter.Container{State: runtimeadapter.StateRunning, RawState: "running"}, AdoptRunning},
		{"created, never started", runtimeadapter.Container{State: runtimeadapter.StateUnknown, RawState: "created"}, AdoptCreated},
		{"created, its start failed", runtimeadapter.Container{State: runtimeadapter.StateUnknown, RawState: "created", Error: "exec: no such file"}, NotAdoptable},
		{"exited", runtimeadapter.Container{State: runtimeadapter.StateExited, RawState: "exited"}, NotAdoptable},
		{"paused or unknown", runtimeadapter.Container{State: runtimeadapter.StateUnknown, RawState: "paused"}, NotAdoptable},
	} {
		if got := AdoptionOf(&tc.c); got != tc.want {
			t.Errorf("%s: AdoptionOf = %d, want %d", tc.name, got, tc.want)
		}
		if got := Adoptable(&tc.c); got != (tc.want == AdoptCreated) {
			t.Errorf("%s: Adoptable = %v", tc.name, got)
		}
	}
}
