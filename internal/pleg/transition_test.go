package pleg

import (
	"slices"
	"testing"

	"github.com/actorlet/actorlet/internal/protocol"
	"github.com/actorlet/actorlet/runtimeadapter"
)

const (
	started = protocol.ContainerStarted
	died    = protocol.ContainerDied
	removed = protocol.ContainerRemoved
	changed = protocol.ContainerChanged
)

func TestTransitionTable(t *testing.T) {
	tests := []struct {
		from, to State
		want     []protocol.PodEventType
	}{
		{NonExistent, NonExistent, nil},
		{NonExistent, Running, []protocol.PodEventType{started}},
		{NonExistent, Exited, []protocol.PodEventType{died}}, // the blind spot
		{NonExistent, Unknown, []protocol.PodEventType{changed}},

		{Running, NonExistent, []protocol.PodEventType{died, removed}},
		{Running, Running, nil},
		{Running, Exited, []protocol.PodEventType{died}},
		{Running, Unknown, []protocol.PodEventType{changed}},

		{Exited, NonExistent, []protocol.PodEventType{removed}},
		{Exited, Running, []protocol.PodEventType{started}},
		{Exited, Exited, nil},
		{Exited, Unknown, []protocol.PodEventType{changed}},

		{Unknown, NonExistent, []protocol.PodEventType{removed}},
		{Unknown, Running, []protocol.PodEventType{started}},
		{Unknown, Exited, []protocol.PodEventType{died}},
		{Unknown, Unknown, nil},
	}
	if len(tests) != numStates*numStates {
		t.Fatalf("table test covers %d of %d transitions", len(tests), numStates*numStates)
	}
	for _, tt := range tests {
		t.Run(tt.from.String()+"->"+tt.to.String(), func(t *testing.T) {
			got := Transition(tt.from, tt.to)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Transition(%v, %v) = %v, want %v", tt.from, tt.to, got, tt.want)
			}
			if tt.want == nil && got != nil {
				t.Errorf("Transition(%v, %v) = %#v, want nil", tt.from, tt.to, got)
			}
		})
	}
}

func TestTransitionReturnsFreshSlice(t *testing.T) {
	a := Transition(Running, NonExistent)
	a[0] = "mutated"
	if b := Transition(Running, NonExistent); b[0] != died {
		t.Fatalf("mutating a result changed the table: %v", b)
	}
}

func TestTransitionOutOfRange(t *testing.T) {
	if got := Transition(State(200), Running); got != nil {
		t.Errorf("got %v, want nil", got)
	}
	if got := Transition(Running, State(200)); got != nil {
		t.Errorf("got %v, want nil", got)
	}
	if s := State(200).String(); s != "invalid" {
		t.Errorf("String() = %q", s)
	}
}

func TestStateOf(t *testing.T) {
	tests := map[runtimeadapter.State]State{
		runtimeadapter.StateRunning: Running,
		runtimeadapter.StateExited:  Exited,
		runtimeadapter.StateUnknown: Unknown,
		"":                          Unknown,
		"paused":                    Unknown,
	}
	for in, want := range tests {
		if got := StateOf(in); got != want {
			t.Errorf("StateOf(%q) = %v, want %v", in, got, want)
		}
	}
}
