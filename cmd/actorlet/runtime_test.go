package main

import (
	"errors"
	"strings"
	"testing"
)

// TestCRIExits: on a CRI runtime a death comes through containerd's task
// events when the runtime is containerd (or may be: it does not answer
// yet), or --containerd-address names a socket; else by relisting only.
func TestCRIExits(t *testing.T) {
	const ep = "unix:///run/containerd/containerd.sock"
	down := errors.New("connection refused")
	for _, tc := range []struct {
		name      string
		events    bool
		flag      string
		runtime   string
		nameErr   error
		wantAddr  string
		wantWords string
	}{
		{"containerd", true, "", "containerd", nil, ep, "containerd task events, the relist as the safety net"},
		{"CRI-O: relist only", true, "", "cri-o", nil, "", "the runtime is not containerd"},
		{"runtime not answering yet", true, "", "", down, ep, "if the runtime is containerd"},
		{"--containerd-address", true, "/other/containerd.sock", "cri-o", nil, "/other/containerd.sock", "(--containerd-address)"},
		{"--containerd-address none", true, "none", "containerd", nil, "", "(--containerd-address none)"},
		{"--runtime-events=false", false, "/other/containerd.sock", "containerd", nil, "", "(--runtime-events=false)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, why := criExits(tc.events, tc.flag, ep, tc.runtime, tc.nameErr)
			if addr != tc.wantAddr || !strings.Contains(why, tc.wantWords) {
				t.Fatalf("criExits = %q, %q; want %q and words %q", addr, why, tc.wantAddr, tc.wantWords)
			}
		})
	}
}
