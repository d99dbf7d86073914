// Package taskevents follows containerd's task events: the exit (and OOM)
// of a container's processes as containerd publishes them, before the
// daemon above it (dockerd, or a CRI plugin) has handled them.
//
// dockerd learns of a container's death from its containerd's
// "/tasks/exit" event and only then, tens to hundreds of milliseconds
// later, marks the container exited and sends its own "die" event.
// Following containerd's events directly sees the exit first. One Client
// owns one subscription per Subscribe call, in one containerd namespace:
// "moby" for Docker's containerd (DockerNamespace), "k8s.io" for the CRI's.
//
// What is pure here (Decode, Address, the Ledger's rules) is table-tested;
// the Client is a thin gRPC shell over the containerd API module's events
// service (no containerd client library).
//
// Exec processes raise "/tasks/exit" too, with their exec ID in ID;
// Exit.Init tells a container's own (init) process, the only one whose
// exit is the container's death.
package taskevents
