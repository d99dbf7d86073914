// Package testimages builds the images actorlet's tests (and the Makefile)
// run: the pause image, the test workload and the gRPC health server, all static Go binaries of
// this repository in FROM scratch images, so no registry is needed.
package testimages

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/actorlet/actorlet/internal/pauseimage"
	"github.com/actorlet/actorlet/runtimeadapter/docker"
)

// Module is the module path ModuleRoot looks for.
const Module = "github.com/actorlet/actorlet"

// Image tags.
const (
	// TestWorkloadTag is the image of ./images/testworkload (entrypoint
	// /testworkload; see that command's doc for its flags and TW_* env).
	TestWorkloadTag = "actorlet/testworkload:0.1.0"
	// GRPCHealthTag is the image of ./images/grpchealth (entrypoint
	// /grpchealth, a grpc.health.v1 server; see that command's doc).
	GRPCHealthTag = "actorlet/grpchealth:0.1.0"
	// PauseTag is the pause image tests use: the agent's default.
	PauseTag = pauseimage.DefaultTag
)

// Packages built into the images.
const (
	TestWorkloadPkg = "./images/testworkload"
	PausePkg        = "./images/pause"
	GRPCHealthPkg   = "./images/grpchealth"
)

// ModuleRoot returns the directory of actorlet's go.mod, found by walking up
// from the working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find module root: %w", err)
	}
	for {
		if isModuleRoot(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("find module root: no go.mod of %s above the working directory", Module)
		}
		dir = parent
	}
}

// isModuleRoot reports whether gomod declares Module.
func isModuleRoot(gomod string) bool {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`) == Module
		}
	}
	return false
}

// Compile builds the main package pkg (a path relative to the module root,
// such as "./images/testworkload") as a static Linux binary
// (CGO_ENABLED=0, -ldflags='-s -w') into dir, and returns its path:
// dir/<base name of pkg>. The go tool's output is in the error.
func Compile(ctx context.Context, pkg, dir string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, path.Base(pkg))
	cmd := exec.CommandContext(ctx, "go", "build", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("compile %s: %w\n%s", pkg, err, b)
	}
	return out, nil
}

// Build compiles pkg (see Compile) and builds image tag: FROM scratch with
// the binary as /<base name of pkg>, its entrypoint.
func Build(ctx context.Context, rt *docker.Runtime, tag, pkg string) error {
	bin, err := compileToMemory(ctx, pkg)
	if err != nil {
		return fmt.Errorf("build image %s: %w", tag, err)
	}
	name := path.Base(pkg)
	dockerfile := "FROM scratch\nCOPY " + name + " /" + name + "\n" +
		`ENTRYPOINT ["/` + name + `"]` + "\n"
	return rt.BuildImage(ctx, tag, map[string][]byte{
		docker.Dockerfile: []byte(dockerfile),
		name:              bin,
	})
}

// BuildPause compiles ./images/pause and builds the pause image tag from it
// (whether or not a binary is embedded in package pauseimage).
func BuildPause(ctx context.Context, rt *docker.Runtime, tag string) error {
	bin, err := compileToMemory(ctx, PausePkg)
	if err != nil {
		return fmt.Errorf("build pause image %s: %w", tag, err)
	}
	return pauseimage.Build(ctx, rt, tag, bin)
}

// compileToMemory compiles pkg in a temporary directory and returns the
// binary's bytes.
func compileToMemory(ctx context.Context, pkg string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "actorlet-image-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin, err := Compile(ctx, pkg, dir)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(bin)
}
