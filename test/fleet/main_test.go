// Package fleet is actorlet's end-to-end test of a fleet: three
// `actorlet run` processes with different node names, fed from one etcd
// (a real one, embedded in the test process by internal/etcdtest), on
// one Docker Engine.
//
// The test needs Docker: without it it skips, or fails when CI=true (see
// internal/testimages). Its node names are unique to the run, and every
// container labelled with them is removed at the end.
package fleet

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/actorlet/actorlet/internal/testimages"
)

// binDir holds the actorlet binary built for this test process.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "actorlet-fleet-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// buildTimeout bounds the one `go build` of the agent.
const buildTimeout = 5 * time.Minute

// actorletBinary builds ./cmd/actorlet (CGO_ENABLED=0) once per test
// process and returns the binary's path, as test/e2e does.
func actorletBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		root, err := testimages.ModuleRoot()
		if err != nil {
			buildErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		defer cancel()
		out := filepath.Join(binDir, "actorlet")
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
