package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// The supervision and deadline flags: the defaults (5 pod actor
// restarts within 1 min; 2 min per slow runtime call as the kubelet's
// --runtime-request-timeout; seconds for a list) and their checks.
func TestRunSupervisionAndDeadlineFlags(t *testing.T) {
	fl := newRunCmd().Flags()
	for name, want := range map[string]string{
		"max-pod-restarts": "5", "pod-restart-window": "1m0s",
		"runtime-request-timeout": "2m0s", "list-timeout": "10s",
		"node-lease-duration": "40s", "etcd-prefix": "/actorlet", "parallel-pod-starts": "4",
	} {
		f := fl.Lookup(name)
		if f == nil {
			t.Errorf("no --%s flag", name)
			continue
		}
		if f.DefValue != want {
			t.Errorf("--%s default %s, want %s", name, f.DefValue, want)
		}
	}
	root := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-pod-restarts", "0"}, "--max-pod-restarts 0, --pod-restart-window 1m0s: must be more than 0"},
		{[]string{"--pod-restart-window", "0s"}, "--max-pod-restarts 5, --pod-restart-window 0s: must be more than 0"},
		{[]string{"--runtime-request-timeout", "0s"}, "--runtime-request-timeout 0s, --list-timeout 10s: must be more than 0"},
		{[]string{"--list-timeout", "-1s"}, "--runtime-request-timeout 2m0s, --list-timeout -1s: must be more than 0"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		var out, errOut bytes.Buffer
		err := runCLI(ctx, &out, &errOut, append([]string{"run", "--node-name", "n1", "--root-dir", root, "--port", "-1", "--manifests", root}, tc.args...)...)
		cancel()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run %v = %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}

// The runtime flags: Docker by default; a CRI runtime by the kubelet's
// flag names; a bad runtime or endpoint is refused by name.
func TestRunRuntimeFlags(t *testing.T) {
	fl := newRunCmd().Flags()
	for name, want := range map[string]string{
		"container-runtime": "docker", "container-runtime-endpoint": "unix:///run/containerd/containerd.sock", "pod-logs-dir": "/var/log/pods",
	} {
		f := fl.Lookup(name)
		if f == nil {
			t.Errorf("no --%s flag", name)
			continue
		}
		if f.DefValue != want {
			t.Errorf("--%s default %s, want %s", name, f.DefValue, want)
		}
	}
	root := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--container-runtime", "rkt"}, `--container-runtime "rkt": want docker or cri`},
		{[]string{"--container-runtime", "cri", "--container-runtime-endpoint", "tcp://127.0.0.1:1"}, `--container-runtime-endpoint: cri: endpoint "tcp://127.0.0.1:1": want unix:///path/to/socket`},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		var out, errOut bytes.Buffer
		err := runCLI(ctx, &out, &errOut, append([]string{"run", "--node-name", "n1", "--root-dir", root, "--port", "-1", "--manifests", root}, tc.args...)...)
		cancel()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run %v = %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}

// --parallel-pod-starts: a count, or 0 (or less) for no bound.
func TestParallelPodStartsFlag(t *testing.T) {
	for flag, want := range map[int]int{4: 4, 1: 1, 0: -1, -3: -1} {
		if got := parallelPodStarts(flag); got != want {
			t.Errorf("--parallel-pod-starts %d: ParallelPodStarts %d, want %d", flag, got, want)
		}
	}
}
