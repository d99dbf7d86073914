package pleg

import (
	"github.com/actorlet/actorlet/internal/protocol"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// State is a container's state as the PLEG tracks it: the runtime's three
// states plus NonExistent, the state of a container absent from a listing
// (not yet created, or removed).
type State uint8

const (
	// NonExistent: the container is not in the listing. It is the zero
	// value, so a container the Relister has never seen starts here.
	NonExistent State = iota
	// Running: runtimeadapter.StateRunning.
	Running
	// Exited: runtimeadapter.StateExited.
	Exited
	// Unknown: runtimeadapter.StateUnknown (created, paused, restarting,
	// removing) or any state the PLEG does not recognise.
	Unknown

	numStates = iota
)

// String returns the state's name as the kubelet's generic PLEG spells it.
func (s State) String() string {
	switch s {
	case NonExistent:
		return "non-existent"
	case Running:
		return "running"
	case Exited:
		return "exited"
	case Unknown:
		return "unknown"
	default:
		return "invalid"
	}
}

// StateOf maps a runtime state to a PLEG state. Running and exited map one
// to one; everything else, including an empty or unrecognised value, is
// Unknown. It never returns NonExistent: a listed container exists.
func StateOf(s runtimeadapter.State) State {
	switch s {
	case runtimeadapter.StateRunning:
		return Running
	case runtimeadapter.StateExited:
		return Exited
	default:
		return Unknown
	}
}

// eventPair holds the zero, one or two events of one transition without
// allocating; n says how many of ev are used.
type eventPair struct {
	n  uint8
	ev [2]protocol.PodEventType
}

func events(ev ...protocol.PodEventType) eventPair {
	var p eventPair
	p.n = uint8(copy(p.ev[:], ev))
	return p
}

// table[from][to] is the transition table: the kubelet's generic PLEG
// (generateEvents) as extended by the modern kubelet, with one deliberate
// difference noted at Transition.
var table = func() (t [numStates][numStates]eventPair) {
	for from := range State(numStates) {
		// Any state other than running → running: the container (re)started.
		// The only case where from == to never produces an event.
		if from != Running {
			t[from][Running] = events(protocol.ContainerStarted)
		}
		// Anything (including never seen, the blind spot where a container
		// was created and died within one period) → exited: it died.
		if from != Exited {
			t[from][Exited] = events(protocol.ContainerDied)
		}
		// Anything → unknown: something changed that the PLEG can't name.
		if from != Unknown {
			t[from][Unknown] = events(protocol.ContainerChanged)
		}
	}
	// Disappearances. A running container that vanished died first, and
	// the consumer must hear both. An exited one already had its death
	// reported. An unknown one (created, paused, ...) is only removed.
	t[Running][NonExistent] = events(protocol.ContainerDied, protocol.ContainerRemoved)
	t[Exited][NonExistent] = events(protocol.ContainerRemoved)
	t[Unknown][NonExistent] = events(protocol.ContainerRemoved)
	return t
}()

// Transition returns the events a container's move from one relist's state
// to the next produces, in the order they must be delivered; nil when there
// are none (same state, or non-existent on both sides).
//
//	from \ to      running          exited         unknown           non-existent
//	non-existent   Started          Died           Changed           -
//	running        -                Died           Changed           Died, Removed
//	exited         Started          -              Changed           Removed
//	unknown        Started          Died           -                 Removed
//
// This is the modern kubelet's table except unknown → non-existent, which
// the kubelet reports as Died, Removed; actorlet reports only Removed since
// an unknown container (typically created but never started) had no death
// to report. Transition allocates a new slice on each call; out-of-range
// states yield nil.
func Transition(from, to State) []protocol.PodEventType {
	if from >= numStates || to >= numStates {
		return nil
	}
	p := table[from][to]
	if p.n == 0 {
		return nil
	}
	return append([]protocol.PodEventType(nil), p.ev[:p.n]...)
}
