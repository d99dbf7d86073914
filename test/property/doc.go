// Package property holds actorlet's property-based and leak tests (issue
// 6, "Proof"): they drive a whole node — the actor tree behind the
// embedding API in package node — on the in-memory fake runtime through
// random sequences of desired-pod changes, container exits, injected
// runtime errors, delays and hangs, unmanaged and orphaned containers and
// agent restarts, inside a testing/synctest bubble so that minutes of
// actorlet's timers (relist, CrashLoopBackOff, retries, grace periods) pass
// in milliseconds, and check the invariants of DESIGN.md after every step
// and convergence once the faults stop.
//
// The package has only tests. See property_test.go for how to run more
// cases, and leak_test.go for the goroutine-leak checks.
package property
