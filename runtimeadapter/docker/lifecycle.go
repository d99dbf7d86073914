package docker

import (
	"context"
	"fmt"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// Log rotation for every container actorlet creates: json-file, at most
// 5 files of 10 MB.
const (
	logDriver  = "json-file"
	logMaxSize = "10m"
	logMaxFile = "5"
)

// Create creates (does not start) a container from spec and returns its ID.
// The restart policy is always "no" (actorlet restarts containers itself)
// and logs go to json-file rotated at 10 MB × 5 files. A nil Entrypoint or
// Cmd keeps the image's. spec.Hostname is ignored when spec.NetworkMode is
// "container:<id>" (the joined sandbox's hostname applies, and Docker
// refuses both). Port bindings, mounts, resources and security settings
// map as containerConfig and hostConfig say. The image must be present
// (see EnsureImage); so must the Source of every bind mount.
//
// Errors: a *runtimeadapter.NameConflictError (errors.Is ErrNameConflict)
// carrying the existing container's ID when spec.Name is taken;
// ErrNotFound naming the image when it is not present locally;
// ErrUnavailable when the daemon cannot be reached; Docker's own error
// (e.g. a bind source that does not exist, port publishing with a
// "container:<id>" network mode) otherwise.
func (r *Runtime) Create(ctx context.Context, spec runtimeadapter.ContainerSpec) (string, error) {
	cfg := containerConfig(spec)
	host := hostConfig(spec)
	cli, err := r.api(ctx)
	if err != nil {
		return "", wrap(err, "create container %s (image %s)", spec.Name, spec.Image)
	}
	resp, err := cli.ContainerCreate(ctx, cfg, host, nil, nil, spec.Name)
	switch {
	case err == nil:
		r.learn(time.Now(), runtimeadapter.Container{ID: resp.ID, Labels: spec.Labels})
		return resp.ID, nil
	case cerrdefs.IsConflict(err):
		return "", r.nameConflict(ctx, spec.Name, err)
	case spec.NetworkMode != "":
		// A 404 may be about the image or the joined container; name both.
		return "", wrap(err, "create container %s (image %s, network %s)", spec.Name, spec.Image, spec.NetworkMode)
	default:
		return "", wrap(err, "create container %s (image %s)", spec.Name, spec.Image)
	}
}

// nameConflict builds the error for a create that hit an existing name,
// looking the existing container up so the caller can adopt it. If that
// lookup fails the ID is left empty.
func (r *Runtime) nameConflict(ctx context.Context, name string, cause error) error {
	conflict := &runtimeadapter.NameConflictError{Name: name}
	if in, err := r.inspect(ctx, name); err == nil {
		conflict.ID = in.ID
	}
	return fmt.Errorf("docker: %w (%w)", conflict, cause)
}

// Start starts a created container. Starting a running container is not an
// error. Errors: ErrNotFound when it does not exist, ErrUnavailable.
//
// Docker checks the container a "container:<id>" network mode joins at
// start, not at create: when that one is gone the start fails with
// ErrNotFound naming it (not the started container), and when it does not
// run with Docker's conflict error. Either way the started container is
// left created, with its Error set and exit code 128, as after any failed
// start.
func (r *Runtime) Start(ctx context.Context, id string) error {
	cli, err := r.api(ctx)
	if err == nil {
		err = cli.ContainerStart(ctx, id, container.StartOptions{})
	}
	if err != nil {
		return wrap(err, "start container %s", id)
	}
	return nil
}

// Stop sends the container's stop signal (SIGTERM unless the image says
// otherwise) and SIGKILL after grace, rounded up to whole seconds (Docker's
// unit); a grace ≤ 0 kills at once. It returns once the container has
// stopped, so ctx must allow for grace plus a few seconds. Stopping a
// stopped container is not an error. Errors: ErrNotFound when it does not
// exist, ErrUnavailable.
func (r *Runtime) Stop(ctx context.Context, id string, grace time.Duration) error {
	timeout := graceSeconds(grace)
	cli, err := r.api(ctx)
	if err == nil {
		err = cli.ContainerStop(ctx, id, container.StopOptions{Timeout: &timeout})
	}
	if err != nil {
		return wrap(err, "stop container %s (grace %ds)", id, timeout)
	}
	return nil
}

// graceSeconds rounds grace up to whole seconds; negative becomes 0.
func graceSeconds(grace time.Duration) int {
	if grace <= 0 {
		return 0
	}
	return int((grace + time.Second - 1) / time.Second)
}

// Remove removes a container and its anonymous volumes, killing it first if
// it still runs. Errors: ErrNotFound when it does not exist, ErrUnavailable.
func (r *Runtime) Remove(ctx context.Context, id string) error {
	cli, err := r.api(ctx)
	if err == nil {
		err = cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	}
	if err != nil {
		return wrap(err, "remove container %s", id)
	}
	return nil
}

// Inspect returns one container by ID or name, whatever its labels.
// Errors: ErrNotFound when it does not exist, ErrUnavailable.
func (r *Runtime) Inspect(ctx context.Context, id string) (runtimeadapter.Container, error) {
	in, err := r.inspect(ctx, id)
	if err != nil {
		return runtimeadapter.Container{}, wrap(err, "inspect container %s", id)
	}
	c := fromInspect(in)
	r.learn(time.Now(), c)
	cs := []runtimeadapter.Container{c}
	r.correct(cs)
	return cs[0], nil
}
