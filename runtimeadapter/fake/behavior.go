package fake

import (
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// Behavior scripts what a started container does.
//
// A container no rule matches runs until stopped, killed or removed. A
// matched Behavior exits on its own unless RunForever is set: the zero
// Behavior exits with code 0 right after starting (a job that completes at
// once), Behavior{ExitCode: 1, ExitAfter: 5 * time.Second} crashes five
// seconds after each start, Behavior{RunForever: true, IgnoreSIGTERM: true}
// is a server that only SIGKILL stops.
type Behavior struct {
	// ExitCode is the code the container exits with on its own.
	ExitCode int
	// ExitAfter is how long after Start the container exits on its own
	// (time.AfterFunc; 0 means as soon as possible, still after Start
	// returns). Ignored when RunForever is set.
	ExitAfter time.Duration
	// RunForever: the container never exits on its own.
	RunForever bool
	// OOMKilled makes the exit on its own an out-of-memory kill: exit code
	// 137, Reason "OOMKilled", and an oom event before the die event.
	// ExitCode is then ignored.
	OOMKilled bool
	// IgnoreSIGTERM: Stop does not end the container at once; it is killed
	// (exit code 137) when the grace period passes.
	IgnoreSIGTERM bool
	// TermDelay: on SIGTERM the container drains for TermDelay, then exits
	// 0 (a server that traps SIGTERM); killed (exit code 137) if the grace
	// period ends first. Ignored with IgnoreSIGTERM.
	TermDelay time.Duration
	// StartError, when set, makes Start fail with an error wrapping it
	// and leaves the container as Docker leaves one whose command cannot
	// run: still "created" (StateUnknown), with no start or finish time,
	// ExitCode StartExitCode and Error the StartError's message; no event
	// is emitted. Starting it again fails the same way.
	StartError error
	// StartExitCode is the exit code Docker records for a failed start:
	// 127 for a command not found, 126 for one not executable; 0 means
	// 128, Docker's code for any other start failure.
	StartExitCode int
}

// exits reports whether b makes a started container exit on its own.
func (b Behavior) exits() bool { return !b.RunForever }

// rule is one scripted behaviour.
type rule struct {
	match func(runtimeadapter.ContainerSpec) bool
	b     Behavior
}

// SetBehavior makes containers whose spec match returns true behave as b.
// Rules are consulted when a container starts, newest first, so a later
// rule overrides an earlier one for the containers both match. match
// receives a copy of the spec; it runs under the Runtime's lock, so it
// must neither block nor call the Runtime.
func (r *Runtime) SetBehavior(match func(spec runtimeadapter.ContainerSpec) bool, b Behavior) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rules = append(r.rules, rule{match: match, b: b})
}

// Script makes containers of image (a reference without tag means
// ":latest") behave as b. See SetBehavior for precedence.
func (r *Runtime) Script(image string, b Behavior) {
	ref := normalizeImage(image)
	r.SetBehavior(func(s runtimeadapter.ContainerSpec) bool {
		return normalizeImage(s.Image) == ref
	}, b)
}

// ScriptContainer makes containers whose pod-spec container name (the
// runtimeadapter.LabelContainerName label) is name behave as b, whatever
// their pod. See SetBehavior for precedence.
func (r *Runtime) ScriptContainer(name string, b Behavior) {
	r.SetBehavior(func(s runtimeadapter.ContainerSpec) bool {
		return s.Labels[runtimeadapter.LabelContainerName] == name
	}, b)
}

// ResetBehaviors removes every scripted behaviour: containers started from
// now on run forever. Running containers keep the behaviour they started
// with.
func (r *Runtime) ResetBehaviors() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rules = nil
}

// behaviorLocked resolves the behaviour of a container about to start.
func (r *Runtime) behaviorLocked(spec runtimeadapter.ContainerSpec) Behavior {
	for i := len(r.rules) - 1; i >= 0; i-- {
		if r.rules[i].match(cloneSpec(spec)) {
			return r.rules[i].b
		}
	}
	return Behavior{RunForever: true}
}
