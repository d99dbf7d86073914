// Package runtimetest is the conformance suite of runtimeadapter.Runtime:
// the properties actorlet relies on, as subtests any adapter can be held
// to. actorlet runs it against its in-memory fake (runtimeadapter/fake)
// and against Docker (runtimeadapter/docker), so the fake the actor tests
// run on cannot drift from the real adapter; a CRI adapter is held to the
// same suite.
//
// An adapter's test calls Run with a Harness. The Harness says how to get
// a runtime for one subtest, under a node name no one else uses, and how
// to make a container behave in a given way (run until stopped, exit with
// a code, ignore SIGTERM, fail to start) and a command run by Exec (exit
// with a code, hang). The suite then creates, starts, stops and removes
// containers through runtimeadapter.Runtime alone and checks what List,
// Inspect, Events, Exec and Logs report. Optional interfaces
// (runtimeadapter.EventSource, Execer, LogSource, ImageService) are
// checked when the runtime implements them; their subtests are skipped,
// visibly, when it does not.
//
// Every subtest runs in parallel with the others, on its own node name,
// and removes every container it created, also when it fails. Timings are
// short (grace periods of 1 s, exits after 100 ms), so a run against a
// real runtime takes seconds.
//
// Properties of one container are steps (sequential subtests) of one
// subtest that shares it, so a real runtime creates fewer containers.
//
// The suite does not test what the interface leaves open: the order of
// List's containers (Docker lists newest first, and so does the fake, but
// callers sort, see internal/podsync), whether Start restarts an exited
// container (Docker does, the fake refuses: actorlet always creates a new
// one), how an adapter pulls, or what it does with a spec's resources and
// mounts (adapter tests do).
package runtimetest
