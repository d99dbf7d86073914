// Package pleg is the pure core of actorlet's pod lifecycle event generator:
// it diffs successive container listings and turns the differences into
// per-pod transition batches. It makes no runtime calls and holds no actor;
// the relist actor lists the runtime and feeds each successful listing to a
// Relister.
//
// Transition holds the transition table; Relister applies it to whole
// listings, batching the events per pod UID. StreamWatch judges the
// runtime's event stream from what the relists find: healthy, down, silent
// (a change it never reported) or confirming (resubscribed after it was
// silent).
package pleg
