// Package e2ecri runs the actorlet binary on a CRI runtime: a private
// containerd 1.6 (test/support/containerdtest, one per test run of the
// package) without CNI, so every pod uses the host's network. It holds the
// core cases of test/e2e: a pod starts, its logs are served, exec probes
// run through ExecSync (readiness, and a liveness kill), a crashing
// container restarts with CrashLoopBackOff, an orphan pod is removed, an
// agent killed with SIGKILL adopts what runs (zero recreations), and a
// removed pod leaves nothing behind.
package e2ecri
