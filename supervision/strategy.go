package supervision

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// Pod actor restart intensity, OTP style: at most DefaultMaxRestarts
// restarts within DefaultRestartWindow; past that the pod actor is stopped
// (its parent sees it terminate) and nothing else is touched.
const (
	DefaultMaxRestarts   = 5
	DefaultRestartWindow = time.Minute
)

// PodStrategy is the supervisor strategy the router's props carry for its
// pod actor children: one-for-one (a crash touches only the crashed pod
// actor), restart on panic, stop past maxRestarts within window. It never
// escalates, so no panic below the router reaches the guardian (which
// would end the process).
func PodStrategy(maxRestarts int, window time.Duration) actor.SupervisorStrategy {
	return actor.NewOneForOneStrategy(maxRestarts, window, func(any) actor.Directive {
		return actor.RestartDirective
	})
}
