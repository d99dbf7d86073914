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
//
// The events (ContainerStarted, ContainerDied, ContainerRemoved,
// ContainerChanged) decide which pods hear from a relist (a pod without
// one gets no batch) and are the relist's findings StreamWatch holds the
// event stream to (ChangesOf). A pod actor does not act on their types:
// it plans on the batch's Containers, the pod's whole listing, which
// holds every change the events name (its state machine's Listed event
// carries no events); it only logs them.
package pleg
