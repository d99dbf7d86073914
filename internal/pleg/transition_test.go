package pleg

import (
	"slices"
	"testing"

	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
)

const (
	started = messages.ContainerStarted
	died    = messages.ContainerDied
	removed = messages.ContainerRemoved
	changed = messages.ContainerChanged
)

func TestTransitionTable(t *testing.T) {
	tests := []struct {
		from, to State
		want     []messages.PodEventType
	}{
		{NonExistent, NonExistent, nil},
		{NonExistent, Running, []messages.PodEventType{started}},
		{NonExistent, Exited, []messages.PodEventType{died}}, // the blind spot
		{NonExistent, Unknown, []messages.PodEventType{changed}},

		{Running, NonExistent, []messages.PodEventType{died, removed}},
		{Running, Running, nil},
		{Running, Exited, []messages.PodEventType{died}},
		{Running, Unknown, []messages.PodEventType{changed}},

		{Exited, NonExistent, []messages.PodEventType{removed}},
		{Exited, Running, []messages.PodEventType{started}},
		{Exited, Exited, nil},
		{Exited, Unknown, []messages.PodEventType{changed}},

		{Unknown, NonExistent, []messages.PodEventType{removed}},
		{Unknown, Running, []messages.PodEventType{started}},
		{Unknown, Exited, []messages.PodEventType{died}},
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
