package testregistry

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/actorlet/actorlet/test/support/testimages"
)

// compileTimeout bounds the one compilation of the test workload.
const compileTimeout = 5 * time.Minute

var (
	workloadOnce sync.Once
	workloadBin  []byte
	workloadErr  error
)

// workloadBinary returns the static test workload binary
// (testimages.TestWorkloadPkg), compiled once per test process.
func workloadBinary() ([]byte, error) {
	workloadOnce.Do(func() {
		dir, err := os.MkdirTemp("", "actorlet-testregistry-")
		if err != nil {
			workloadErr = err
			return
		}
		defer os.RemoveAll(dir)
		ctx, cancel := context.WithTimeout(context.Background(), compileTimeout)
		defer cancel()
		bin, err := testimages.Compile(ctx, testimages.TestWorkloadPkg, dir)
		if err != nil {
			workloadErr = err
			return
		}
		workloadBin, workloadErr = os.ReadFile(bin)
	})
	return workloadBin, workloadErr
}

// TestWorkloadImage returns a runnable image of actorlet's test workload,
// as testimages builds it with Docker but without Docker: one layer holding
// the static binary as /testworkload (mode 0755), entrypoint
// ["/testworkload"], for linux on this machine's architecture. The binary
// is compiled once per test process; a failure fails t.
func TestWorkloadImage(t testing.TB) v1.Image {
	t.Helper()
	bin, err := workloadBinary()
	if err != nil {
		t.Fatalf("test workload image: %v", err)
	}
	img, err := binaryImage("/"+path.Base(testimages.TestWorkloadPkg), bin)
	if err != nil {
		t.Fatalf("test workload image: %v", err)
	}
	return img
}

// PushTestWorkload pushes TestWorkloadImage as repo:tag and returns its
// reference; a failure fails t.
func (r *Registry) PushTestWorkload(t testing.TB, repo, tag string) string {
	t.Helper()
	ref := r.Ref(repo, tag)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.Push(ctx, ref, TestWorkloadImage(t)); err != nil {
		t.Fatal(err)
	}
	return ref
}

// binaryImage returns an image of one layer holding bin at file (an
// absolute path in the image, in the root directory), with file as its
// entrypoint.
func binaryImage(file string, bin []byte) (v1.Image, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{Name: file[1:], Mode: 0o755, Size: int64(len(bin)), Typeflag: tar.TypeReg}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	data := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, fmt.Errorf("append layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config.Entrypoint = []string{file}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return img, nil
}
