package fake

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// List returns copies of the containers labelled as actorlet's for
// opts.Node (runtimeadapter.IsManaged), narrowed to opts.PodUID when set,
// and only running ones unless opts.All, newest first as Docker lists
// them (runtimeadapter.Runtime promises no order). ObservedAt is the
// time the call began. An empty opts.Node is an error.
func (r *Runtime) List(ctx context.Context, opts runtimeadapter.ListOptions) (_ runtimeadapter.ListResult, err error) {
	at := time.Now()
	arg := "node=" + opts.Node + " pod=" + opts.PodUID + " all=" + strconv.FormatBool(opts.All)
	call, err := r.begin(ctx, Call{Method: MethodList, Arg: arg})
	defer func() { r.finish(call, err) }()
	if err != nil {
		return runtimeadapter.ListResult{}, err
	}
	if opts.Node == "" {
		return runtimeadapter.ListResult{}, errors.New("fake List: ListOptions.Node is empty")
	}
	res := runtimeadapter.ListResult{ObservedAt: at}
	r.mu.Lock()
	res.Version = r.version
	for _, c := range slices.Backward(r.order) {
		if !runtimeadapter.IsManaged(c.c.Labels, opts.Node) ||
			(opts.PodUID != "" && c.c.Labels[runtimeadapter.LabelPodUID] != opts.PodUID) ||
			(!opts.All && !c.running()) {
			continue
		}
		res.Containers = append(res.Containers, c.snapshot())
	}
	r.mu.Unlock()
	if err := r.faultAfter(MethodList); err != nil {
		return runtimeadapter.ListResult{}, err
	}
	return res, nil
}

// Inspect returns a copy of any container, managed or not, by ID, name or
// unique ID prefix; a missing one yields an error wrapping
// runtimeadapter.ErrNotFound.
func (r *Runtime) Inspect(ctx context.Context, id string) (_ runtimeadapter.Container, err error) {
	call, err := r.begin(ctx, Call{Method: MethodInspect, Arg: id}, r.nameOf(id))
	defer func() { r.finish(call, err) }()
	if err != nil {
		return runtimeadapter.Container{}, err
	}
	r.mu.Lock()
	c := r.lookupLocked(id)
	var out runtimeadapter.Container
	if c != nil {
		out = c.snapshot()
	}
	r.mu.Unlock()
	if c == nil {
		return runtimeadapter.Container{}, errNotFound(MethodInspect, id)
	}
	if err := r.faultAfter(MethodInspect); err != nil {
		return runtimeadapter.Container{}, err
	}
	return out, nil
}

// Create creates a container in state unknown (RawState "created") and
// returns its ID. An empty spec.Name gets a generated name. The fake keeps
// a copy of spec (see Spec); it mounts, limits and publishes nothing.
// Errors: a name in use yields a wrapped *runtimeadapter.NameConflictError
// with the existing container's ID; an image not present one wrapping
// runtimeadapter.ErrNotFound; port bindings with a "container:<id>"
// network mode an error, as Docker refuses them.
func (r *Runtime) Create(ctx context.Context, spec runtimeadapter.ContainerSpec) (_ string, err error) {
	call, err := r.begin(ctx, Call{Method: MethodCreate, Arg: spec.Name})
	defer func() { r.finish(call, err) }()
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	id, err := r.createLocked(spec)
	r.mu.Unlock()
	if err != nil {
		return "", err
	}
	if err := r.faultAfter(MethodCreate); err != nil {
		return "", err
	}
	return id, nil
}

func (r *Runtime) createLocked(spec runtimeadapter.ContainerSpec) (string, error) {
	if existing, ok := r.byName[spec.Name]; ok {
		return "", fmt.Errorf("fake Create: %w", &runtimeadapter.NameConflictError{Name: spec.Name, ID: existing})
	}
	if len(spec.PortBindings) > 0 && strings.HasPrefix(spec.NetworkMode, "container:") {
		// As Docker: ports are published on the sandbox, never on a
		// container that joins its network namespace.
		return "", fmt.Errorf("fake Create %s: conflicting options: port publishing and the container type network mode", spec.Name)
	}
	if !r.images[normalizeImage(spec.Image)] {
		return "", fmt.Errorf("fake Create %s: image %q: %w", spec.Name, spec.Image, runtimeadapter.ErrNotFound)
	}
	id := r.newIDLocked()
	spec = cloneSpec(spec)
	if spec.Name == "" {
		spec.Name = generatedName(id)
	}
	r.addLocked(&container{
		spec: spec,
		c: runtimeadapter.Container{
			ID:        id,
			Name:      spec.Name,
			Image:     spec.Image,
			Labels:    maps.Clone(spec.Labels),
			State:     runtimeadapter.StateUnknown,
			RawState:  rawCreated,
			CreatedAt: time.Now(),
		},
	})
	return id, nil
}

// Start runs a created container under the behaviour its spec matches (see
// SetBehavior) and emits a start event. A container joining another's
// network ("container:<ref>") fails to start, as with Docker, when that
// one is missing (an error wrapping runtimeadapter.ErrNotFound) or does
// not run; it is left created with its Error set and exit code 128.
// A container on the default
// network (NetworkMode "" or a network's name) gets an IP of its own
// while it runs, as with Docker's bridge; one joining a container's or
// the host's network, or none, has none. Starting a running container
// succeeds without effect. Errors: missing → wrapping
// runtimeadapter.ErrNotFound; exited → an error (create a new container);
// Behavior.StartError → an error wrapping it, the container left created
// with its Error set (see Behavior.StartError).
func (r *Runtime) Start(ctx context.Context, id string) (err error) {
	call, err := r.begin(ctx, Call{Method: MethodStart, Arg: id}, r.nameOf(id))
	defer func() { r.finish(call, err) }()
	if err != nil {
		return err
	}
	r.mu.Lock()
	err = r.startLocked(id)
	r.mu.Unlock()
	if err != nil {
		return err
	}
	return r.faultAfter(MethodStart)
}

func (r *Runtime) startLocked(id string) error {
	c := r.lookupLocked(id)
	switch {
	case c == nil:
		return errNotFound(MethodStart, id)
	case c.running():
		return nil
	case c.c.RawState != rawCreated:
		return fmt.Errorf("fake Start %s: container is %s; it cannot be started again", id, c.c.RawState)
	}
	if err := r.joinLocked(c.spec.NetworkMode, "network namespace"); err != nil {
		return r.startFailedLocked(c, id, err, exitStartFailed)
	}
	if err := r.joinLocked(c.spec.PidMode, "PID namespace"); err != nil {
		return r.startFailedLocked(c, id, err, exitStartFailed)
	}
	b := r.behaviorLocked(c.spec)
	c.behavior = b
	now := time.Now()
	if b.StartError != nil {
		return r.startFailedLocked(c, id, b.StartError, b.StartExitCode)
	}
	c.c.State = runtimeadapter.StateRunning
	c.c.RawState = rawRunning
	c.c.StartedAt = now
	c.c.IP = r.ipLocked(c.spec.NetworkMode)
	c.exited = make(chan struct{})
	r.publishLocked(runtimeadapter.EventStart, c)
	if b.exits() {
		code, reason := b.ExitCode, ""
		if b.OOMKilled {
			code, reason = exitSIGKILL, reasonOOMKilled
		}
		c.exitTimer = time.AfterFunc(b.ExitAfter, func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if !r.closed {
				r.exitLocked(c, code, reason)
			}
		})
	}
	return nil
}

// startFailedLocked leaves c as Docker leaves a container whose start
// failed with err: still created, no event, its Error err's message and
// its exit code code (0: 128).
func (r *Runtime) startFailedLocked(c *container, id string, err error, code int) error {
	if code == 0 {
		code = exitStartFailed
	}
	c.c.ExitCode = code
	c.c.Error = err.Error()
	r.version++
	return fmt.Errorf("fake Start %s: %w", id, err)
}

// joinLocked checks, as Docker does at start (not at create), that the
// container a "container:<ref>" network (or PID) mode joins exists and
// runs; what is Docker's word for the namespace.
func (r *Runtime) joinLocked(mode, what string) error {
	ref, ok := strings.CutPrefix(mode, "container:")
	if !ok {
		return nil
	}
	switch j := r.lookupLocked(ref); {
	case j == nil:
		return fmt.Errorf("No such container: %s: %w", ref, runtimeadapter.ErrNotFound)
	case !j.running():
		return fmt.Errorf("cannot join %s of a non running container: %s", what, ref)
	}
	return nil
}

// Stop ends a running container: at once with exit code 143, or, if its
// behaviour has IgnoreSIGTERM, with 137 when grace has passed (at once for
// grace <= 0), or, if it has a TermDelay shorter than grace, with 0 after
// TermDelay (else 137 at grace); Stop then waits for that, and if ctx ends first returns an
// error wrapping runtimeadapter.ErrUnavailable while the kill still
// happens, as with a daemon that outlives its client. Stopping a container
// that does not run succeeds; a missing one yields an error wrapping
// runtimeadapter.ErrNotFound.
func (r *Runtime) Stop(ctx context.Context, id string, grace time.Duration) (err error) {
	call, err := r.begin(ctx, Call{Method: MethodStop, Arg: id, Grace: grace}, r.nameOf(id))
	defer func() { r.finish(call, err) }()
	if err != nil {
		return err
	}
	r.mu.Lock()
	c := r.lookupLocked(id)
	var wait chan struct{}
	switch {
	case c == nil:
		r.mu.Unlock()
		return errNotFound(MethodStop, id)
	case !c.running():
	case !c.behavior.IgnoreSIGTERM && c.behavior.TermDelay <= 0:
		r.exitLocked(c, exitSIGTERM, "")
	case grace <= 0:
		r.exitLocked(c, exitSIGKILL, "")
	default:
		if c.killTimer == nil {
			after, code := grace, exitSIGKILL
			if !c.behavior.IgnoreSIGTERM && c.behavior.TermDelay < grace {
				after, code = c.behavior.TermDelay, 0 // drained in time
			}
			c.killTimer = time.AfterFunc(after, func() {
				r.mu.Lock()
				defer r.mu.Unlock()
				if !r.closed {
					r.exitLocked(c, code, "")
				}
			})
		}
		wait = c.exited
	}
	r.mu.Unlock()
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
			return errContext(MethodStop, ctx.Err())
		}
	}
	return r.faultAfter(MethodStop)
}

// Remove removes a container, killing it first (exit code 137, die event)
// if it runs, and emits a destroy event. A missing container yields an
// error wrapping runtimeadapter.ErrNotFound.
func (r *Runtime) Remove(ctx context.Context, id string) (err error) {
	call, err := r.begin(ctx, Call{Method: MethodRemove, Arg: id}, r.nameOf(id))
	defer func() { r.finish(call, err) }()
	if err != nil {
		return err
	}
	r.mu.Lock()
	c := r.lookupLocked(id)
	if c != nil {
		r.exitLocked(c, exitSIGKILL, "")
		r.deleteLocked(c)
	}
	r.mu.Unlock()
	if c == nil {
		return errNotFound(MethodRemove, id)
	}
	return r.faultAfter(MethodRemove)
}

// nameOf returns the name of the container ref refers to, or "".
func (r *Runtime) nameOf(ref string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.lookupLocked(ref); c != nil {
		return c.c.Name
	}
	return ""
}

func errNotFound(method, id string) error {
	return fmt.Errorf("fake %s: container %s: %w", method, id, runtimeadapter.ErrNotFound)
}

// Spec returns a copy of the spec a container was created with, by ID,
// name or unique ID prefix (a container planted with AddContainer has only
// its name, image and labels). A missing container yields an error
// wrapping runtimeadapter.ErrNotFound. Spec is not logged as a call.
func (r *Runtime) Spec(ref string) (runtimeadapter.ContainerSpec, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.lookupLocked(ref)
	if c == nil {
		return runtimeadapter.ContainerSpec{}, fmt.Errorf("fake Spec: container %s: %w", ref, runtimeadapter.ErrNotFound)
	}
	return cloneSpec(c.spec), nil
}

// cloneSpec copies s deeply: the fake never shares a slice or map with its
// callers.
func cloneSpec(s runtimeadapter.ContainerSpec) runtimeadapter.ContainerSpec {
	s.Entrypoint = slices.Clone(s.Entrypoint)
	s.Cmd = slices.Clone(s.Cmd)
	s.Env = slices.Clone(s.Env)
	s.Labels = maps.Clone(s.Labels)
	s.PortBindings = slices.Clone(s.PortBindings)
	s.Mounts = slices.Clone(s.Mounts)
	s.CapAdd = slices.Clone(s.CapAdd)
	s.CapDrop = slices.Clone(s.CapDrop)
	s.GroupAdd = slices.Clone(s.GroupAdd)
	return s
}

// ipLocked returns the IP a container starting with networkMode gets:
// the next address of 10.88.0.0/16 for the default network (as Docker's
// bridge gives one), "" for "host", "none" and "container:<id>".
func (r *Runtime) ipLocked(networkMode string) string {
	if networkMode == "host" || networkMode == "none" || strings.HasPrefix(networkMode, "container:") {
		return ""
	}
	r.ips++
	n := 2 + r.ips%65000 // 10.88.0.2 and up; .0.0 and .0.1 (the gateway) never
	return fmt.Sprintf("10.88.%d.%d", n/256, n%256)
}
