// Package nodelock stops two actorlet agents from managing the same node:
// each holds an exclusive flock on <root-dir>/nodes/<node>.lock for its
// whole life. The kernel releases it when the process dies, however it dies.
package nodelock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrHeld: another live process holds the node's lock.
var ErrHeld = errors.New("held by another actorlet process")

// Lock is a held node lock.
type Lock struct {
	f *os.File
}

// Path is the lock file of node under rootDir.
func Path(rootDir, node string) string {
	return filepath.Join(rootDir, "nodes", node+".lock")
}

// Acquire takes the lock of node under rootDir without waiting. It fails
// with ErrHeld (wrapped, naming the file) when another process has it.
func Acquire(rootDir, node string) (*Lock, error) {
	p := Path(rootDir, node)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("node lock %s: %w", p, err)
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("node lock %s: %w", p, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := ""
			if b, rerr := os.ReadFile(p); rerr == nil && len(strings.TrimSpace(string(b))) > 0 {
				holder = " (pid " + strings.TrimSpace(string(b)) + ")"
			}
			return nil, fmt.Errorf("node %s: node lock %s %w%s", node, p, ErrHeld, holder)
		}
		return nil, fmt.Errorf("node lock %s: %w", p, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &Lock{f: f}, nil
}

// Release gives the lock up.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the descriptor drops the flock
	l.f = nil
	return err
}
