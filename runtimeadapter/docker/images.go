package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"sort"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"
	"go.uber.org/zap"
)

// ImageExists reports whether image (a reference or ID) is present locally.
// Errors other than "not found" are returned, wrapping ErrUnavailable when
// the daemon cannot be reached.
func (r *Runtime) ImageExists(ctx context.Context, ref string) (bool, error) {
	cli, err := r.api(ctx)
	if err != nil {
		return false, wrap(err, "inspect image %s", ref)
	}
	_, err = cli.ImageInspect(ctx, ref)
	switch {
	case err == nil:
		return true, nil
	case cerrdefs.IsNotFound(err):
		return false, nil
	default:
		return false, wrap(err, "inspect image %s", ref)
	}
}

// EnsureImage makes image available locally: nothing to do if present, else
// it pulls it (anonymously), reading the whole progress stream, or builds
// it when it is a local image (WithLocalImage). Errors name the image; a
// pull that fails (no registry, unknown image) is an error.
func (r *Runtime) EnsureImage(ctx context.Context, ref string) error {
	ok, err := r.ImageExists(ctx, ref)
	if err != nil || ok {
		return err
	}
	if build, local := r.local[ref]; local {
		return r.buildLocal(ctx, ref, build)
	}
	r.log.Info("docker: pulling image", zap.String("image", ref))
	cli, err := r.api(ctx)
	if err != nil {
		return wrap(err, "pull image %s", ref)
	}
	rc, err := cli.ImagePull(ctx, ref, image.PullOptions{})
	if err != nil {
		return wrap(err, "pull image %s", ref)
	}
	defer rc.Close()
	if err := drainStream(rc); err != nil {
		return wrap(err, "pull image %s", ref)
	}
	return nil
}

// buildLocal builds the missing local image ref, one build at a time (the
// others wait within their ctx, then find it built).
func (r *Runtime) buildLocal(ctx context.Context, ref string, build LocalImage) error {
	select {
	case r.building <- struct{}{}:
		defer func() { <-r.building }()
	case <-ctx.Done():
		return wrap(ctx.Err(), "build local image %s", ref)
	}
	if ok, err := r.ImageExists(ctx, ref); err != nil || ok {
		return err // built while this call waited
	}
	files, err := build()
	if err != nil {
		return fmt.Errorf("docker: build local image %s: %w", ref, err)
	}
	r.log.Info("docker: building local image", zap.String("image", ref))
	return r.BuildImage(ctx, ref, files)
}

// Dockerfile is the name BuildImage expects its Dockerfile under.
const Dockerfile = "Dockerfile"

// BuildImage builds image tag with the legacy builder (no BuildKit, no
// registry access needed for FROM scratch) from an in-memory context:
// files maps context paths to contents and must hold a "Dockerfile". Files
// other than the Dockerfile are written with mode 0755 so binaries run.
// It reads the whole build output and fails if the build reports an error;
// the error names the tag.
func (r *Runtime) BuildImage(ctx context.Context, tag string, files map[string][]byte) error {
	if _, ok := files[Dockerfile]; !ok {
		return fmt.Errorf("docker: build image %s: context has no %s", tag, Dockerfile)
	}
	buildCtx, err := tarContext(files)
	if err != nil {
		return fmt.Errorf("docker: build image %s: %w", tag, err)
	}
	cli, err := r.api(ctx)
	if err != nil {
		return wrap(err, "build image %s", tag)
	}
	start := time.Now()
	resp, err := cli.ImageBuild(ctx, buildCtx, build.ImageBuildOptions{
		Tags:        []string{tag},
		Dockerfile:  Dockerfile,
		Remove:      true,
		ForceRemove: true,
		Version:     build.BuilderV1,
	})
	if err != nil {
		return wrap(err, "build image %s", tag)
	}
	defer resp.Body.Close()
	if err := drainStream(resp.Body); err != nil {
		return wrap(err, "build image %s", tag)
	}
	r.log.Debug("docker: built image", zap.String("image", tag), zap.Duration("took", time.Since(start)))
	return nil
}

// tarContext writes files into an uncompressed tar archive, in name order.
func tarContext(files map[string][]byte) (*bytes.Buffer, error) {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, name := range names {
		mode := int64(0o755)
		if name == Dockerfile {
			mode = 0o644
		}
		hdr := &tar.Header{Name: name, Mode: mode, Size: int64(len(files[name])), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("tar %s: %w", name, err)
		}
		if _, err := tw.Write(files[name]); err != nil {
			return nil, fmt.Errorf("tar %s: %w", name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("tar: %w", err)
	}
	return &buf, nil
}

// RemoveImage removes image ref (tag or ID), forcing and pruning untagged
// parents; used by tests to clean up what they built. Errors: ErrNotFound
// when it does not exist, ErrUnavailable.
func (r *Runtime) RemoveImage(ctx context.Context, ref string) error {
	cli, err := r.api(ctx)
	if err != nil {
		return wrap(err, "remove image %s", ref)
	}
	_, err = cli.ImageRemove(ctx, ref, image.RemoveOptions{Force: true, PruneChildren: true})
	if err != nil {
		return wrap(err, "remove image %s", ref)
	}
	return nil
}
