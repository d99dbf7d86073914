package docker

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestKillProcessTreeRefusesForeignProcess checks the guard that keeps a
// PID from another PID namespace from hitting an unrelated process here:
// only a process whose cgroup names the container is killed.
func TestKillProcessTreeRefusesForeignProcess(t *testing.T) {
	const containerID = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	err := killProcessTree(os.Getpid(), containerID)
	if err == nil || !strings.Contains(err.Error(), "not container") {
		t.Fatalf("killProcessTree(self) = %v, want a refusal", err)
	}
	err = killProcessTree(1<<30, containerID) // above any pid_max
	if err == nil || !strings.Contains(err.Error(), "not visible") {
		t.Fatalf("killProcessTree(absent PID) = %v, want not visible", err)
	}
	if err := killProcessTree(os.Getpid(), ""); err == nil {
		t.Fatal("killProcessTree with no container ID: no error")
	}
}

func TestLimitedBuffer(t *testing.T) {
	b := &limitedBuffer{max: 5}
	for _, s := range []string{"ab", "cde", "fgh"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if !bytes.Equal(b.bytes(), []byte("abcde")) {
		t.Fatalf("kept %q, want %q", b.bytes(), "abcde")
	}
}
