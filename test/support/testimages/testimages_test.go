package testimages_test

import (
	"context"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/test/support/testimages"
)

func TestModuleRoot(t *testing.T) {
	root, err := testimages.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "images", "testworkload", "main.go")); err != nil {
		t.Errorf("module root %s has no images/testworkload: %v", root, err)
	}
}

func TestCompileBuildsStaticBinary(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin, err := testimages.Compile(ctx, testimages.TestWorkloadPkg, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(bin) != "testworkload" {
		t.Errorf("binary %s, want .../testworkload", bin)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("binary has an ELF interpreter: not static")
		}
	}
	if runtime.GOOS != "linux" {
		return // the binary is for the Docker host, not this one
	}
	// The exec-probe mode works on this (Linux) host too.
	if err := exec.Command(bin, "check", "--file", bin).Run(); err != nil {
		t.Errorf("check of an existing file: %v", err)
	}
	err = exec.Command(bin, "check", "--file", bin+".missing").Run()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 1 {
		t.Errorf("check of a missing file: %v, want exit status 1", err)
	}
}

func TestCompileReportsGoErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := testimages.Compile(ctx, "./images/no-such-package", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "no-such-package") {
		t.Errorf("compile of a missing package: %v", err)
	}
}

func TestEnsureTestImagesAndEnvConfiguredWorkload(t *testing.T) {
	rt := testimages.EnsureTestImages(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, tag := range []string{testimages.PauseTag, testimages.TestWorkloadTag} {
		if ok, err := rt.ImageExists(ctx, tag); !ok || err != nil {
			t.Errorf("image %s: exists %v, %v", tag, ok, err)
		}
	}

	// The workload reads TW_* variables: exit 5 after 50 ms.
	node := testimages.NodeName("t-testimages")
	testimages.CleanupNode(t, rt, node)
	meta := runtimeadapter.Meta{Node: node, PodUID: node, PodName: "p", PodNamespace: "default",
		ContainerName: "env", Type: runtimeadapter.TypeApp}
	id, err := rt.Create(ctx, runtimeadapter.ContainerSpec{
		Name:   runtimeadapter.ContainerName("env", "p", "default", strings.TrimPrefix(node, "t-testimages-"), 0),
		Image:  testimages.TestWorkloadTag,
		Env:    []string{"TW_EXIT_CODE=5", "TW_EXIT_AFTER=50ms"},
		Labels: meta.Labels(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := rt.Inspect(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if c.State == runtimeadapter.StateExited {
			if c.ExitCode != 5 {
				t.Errorf("exit code %d, want 5 from TW_EXIT_CODE", c.ExitCode)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("workload did not exit: %+v", c)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestBuildTagsImage(t *testing.T) {
	rt := testimages.RequireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tag := "actorlet/testimages-test:" + testimages.NodeName("t")
	t.Cleanup(func() {
		if err := rt.RemoveImage(context.Background(), tag); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	if err := testimages.Build(ctx, rt, tag, testimages.TestWorkloadPkg); err != nil {
		t.Fatal(err)
	}
	if ok, err := rt.ImageExists(ctx, tag); !ok || err != nil {
		t.Errorf("image %s: exists %v, %v", tag, ok, err)
	}
}

func TestCleanupNodeRemovesNodeContainers(t *testing.T) {
	rt := testimages.EnsureTestImages(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	node := testimages.NodeName("t-cleanup")
	t.Run("creates", func(t *testing.T) {
		testimages.CleanupNode(t, rt, node)
		meta := runtimeadapter.Meta{Node: node, PodUID: node, PodName: "p", PodNamespace: "default",
			ContainerName: "c", Type: runtimeadapter.TypeApp}
		id, err := rt.Create(ctx, runtimeadapter.ContainerSpec{
			Name:   runtimeadapter.ContainerName("c", "p", "default", strings.TrimPrefix(node, "t-cleanup-"), 0),
			Image:  testimages.TestWorkloadTag,
			Labels: meta.Labels(),
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := rt.Start(ctx, id); err != nil {
			t.Fatal(err)
		}
	})
	res, err := rt.List(ctx, runtimeadapter.ListOptions{Node: node, All: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Containers) != 0 {
		t.Errorf("after cleanup: %+v", res.Containers)
	}
}
