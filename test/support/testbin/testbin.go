// Package testbin builds the actorlet binary for the tests that run it as
// a process (test/e2e, test/fleet). Only tests import it.
package testbin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/actorlet/actorlet/test/support/testimages"
)

// BuildTimeout bounds the one `go build` of the agent.
const BuildTimeout = 5 * time.Minute

var (
	dir       string
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Main runs the package's tests with a temporary directory for the
// binary, removes it, and exits with the result. Call it from TestMain
// with the package's *testing.M (or anything that runs the tests, such as
// containerdtest.Wrap(m)).
func Main(m interface{ Run() int }) {
	d, err := os.MkdirTemp("", "actorlet-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testbin:", err)
		os.Exit(1)
	}
	dir = d
	code := m.Run()
	_ = os.RemoveAll(d)
	os.Exit(code)
}

// Actorlet builds ./cmd/actorlet (CGO_ENABLED=0) once per test process
// and returns the binary's path. The package's TestMain must call Main.
func Actorlet(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if dir == "" {
			buildErr = fmt.Errorf("testbin.Main was not called from TestMain")
			return
		}
		root, err := testimages.ModuleRoot()
		if err != nil {
			buildErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), BuildTimeout)
		defer cancel()
		out := filepath.Join(dir, "actorlet")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/actorlet")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/actorlet: %w\n%s", err, b)
			return
		}
		binPath = out
	})
	if buildErr != nil {
		t.Fatalf("build actorlet: %v", buildErr)
	}
	return binPath
}
