// Package fake is an in-memory runtimeadapter.Runtime and
// runtimeadapter.EventSource for tests, modelled on the CRI fake runtime
// service: containers behave like Docker's, their behaviour can be scripted
// per image, per container name or by any predicate, faults (errors, delays,
// hangs) can be injected per method, event streams can be broken
// (BreakEvents) or left open and silent (SilenceEvents), and every call is
// logged.
//
// A Runtime is safe for concurrent use. It starts no goroutine of its own
// except one per Events stream, which ends with the stream's context (or
// Close). Container timing uses the time package (time.Now,
// time.AfterFunc, timers), so inside a testing/synctest bubble it runs on
// the bubble's fake clock: create the Runtime, start containers and
// configure hangs inside the bubble, and a container scripted to exit after
// an hour exits as soon as every goroutine in the bubble is blocked.
//
// Usage:
//
//	rt := fake.New(fake.WithImages("busybox"))
//	rt.Script("busybox", fake.Behavior{ExitCode: 1, ExitAfter: 2 * time.Second})
//	rt.InjectError(fake.MethodStart, runtimeadapter.ErrUnavailable, 1) // first Start fails
//
//	id, _ := rt.Create(ctx, spec)  // spec.Image == "busybox"
//	_ = rt.Start(ctx, id)          // injected error
//	_ = rt.Start(ctx, id)          // runs; exits with code 1 two seconds later
//	rt.Kill(otherID, 137)          // like `docker kill`
//	n := rt.CallCount(fake.MethodStart) // 2
//
// The fake's behaviour, where Docker's has options, is:
//   - Create needs the image present (AddImage, WithImages, or EnsureImage
//     with AutoImages) and a free name; a taken name yields a wrapped
//     *runtimeadapter.NameConflictError carrying the existing container's ID.
//   - A created container is StateUnknown with RawState "created". Start runs
//     it; starting a running container is a no-op, starting an exited one is
//     an error (actorlet always creates a new container instead). A start
//     scripted to fail (Behavior.StartError) leaves it as Docker does:
//     created, with Error set, an exit code and no event.
//   - Stop of a running container exits it with 143 (SIGTERM), or, when its
//     Behavior has IgnoreSIGTERM, with 137 once the grace period has passed.
//     Stopping a container that does not run is a no-op.
//   - Remove removes any container, killing (137) a running one first.
//   - List returns only containers whose labels mark them as actorlet's for
//     ListOptions.Node, as copies, newest first as Docker does (the
//     interface promises no order: callers sort).
//   - Containers are looked up by full ID, by name, or by unique ID prefix.
package fake
