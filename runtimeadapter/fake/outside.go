package fake

import (
	"fmt"
	"maps"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// This file holds what happens to containers from outside actorlet: an
// operator's `docker kill` or `docker rm -f`, the kernel's OOM killer,
// containers left behind by an earlier agent or started by someone else.
// None of it is logged as a call or subject to faults.

// Kill makes a running container exit now with exitCode (137 is what
// `docker kill` yields), emitting a die event. Errors: missing → wrapping
// runtimeadapter.ErrNotFound; not running → an error.
func (r *Runtime) Kill(id string, exitCode int) error {
	return r.kill(id, exitCode, "")
}

// OOMKill makes a running container exit now as the OOM killer's victim:
// exit code 137, Reason "OOMKilled", oom and die events. Errors as Kill.
func (r *Runtime) OOMKill(id string) error {
	return r.kill(id, exitSIGKILL, reasonOOMKilled)
}

func (r *Runtime) kill(id string, code int, reason string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.lookupLocked(id)
	switch {
	case c == nil:
		return fmt.Errorf("fake: kill %s: %w", id, runtimeadapter.ErrNotFound)
	case !c.running():
		return fmt.Errorf("fake: kill %s: container is not running", id)
	}
	r.exitLocked(c, code, reason)
	return nil
}

// RemoveExternally removes a container behind actorlet's back, like
// `docker rm -f`: a running one is killed first (137, die event), then a
// destroy event follows. A missing container yields an error wrapping
// runtimeadapter.ErrNotFound.
func (r *Runtime) RemoveExternally(id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.lookupLocked(id)
	if c == nil {
		return fmt.Errorf("fake: remove %s: %w", id, runtimeadapter.ErrNotFound)
	}
	r.exitLocked(c, exitSIGKILL, "")
	r.deleteLocked(c)
	return nil
}

// AddContainer plants a container as if it already existed (an orphan of
// an earlier agent, or one without actorlet's labels) and returns its ID.
// Zero fields are filled in: ID (generated), Name (generated), State
// (running), RawState (from State: "running", "exited" or "created"),
// CreatedAt, and StartedAt or FinishedAt as the state implies (time.Now).
// Labels are copied. A planted container is not scripted: it runs until
// stopped, killed or removed, and honours SIGTERM. Its image need not be
// present. No event is emitted. AddContainer panics if the ID or name is
// already taken.
func (r *Runtime) AddContainer(c runtimeadapter.Container) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c.ID == "" {
		c.ID = r.newIDLocked()
	} else if _, taken := r.byID[c.ID]; taken {
		panic(fmt.Sprintf("fake: AddContainer: ID %s already in use", c.ID))
	}
	if c.Name == "" {
		c.Name = generatedName(c.ID)
	}
	if id, taken := r.byName[c.Name]; taken {
		panic(fmt.Sprintf("fake: AddContainer: name %s already in use by %s", c.Name, id))
	}
	if c.State == "" {
		c.State = runtimeadapter.StateRunning
	}
	if c.RawState == "" {
		switch c.State {
		case runtimeadapter.StateRunning:
			c.RawState = rawRunning
		case runtimeadapter.StateExited:
			c.RawState = "exited"
		default:
			c.RawState = rawCreated
		}
	}
	now := time.Now()
	if c.CreatedAt.IsZero() {
		c.CreatedAt = now
	}
	switch c.State {
	case runtimeadapter.StateRunning:
		if c.StartedAt.IsZero() {
			c.StartedAt = now
		}
	case runtimeadapter.StateExited:
		if c.FinishedAt.IsZero() {
			c.FinishedAt = now
		}
	}
	c.Labels = maps.Clone(c.Labels)
	rec := &container{
		c: c,
		spec: runtimeadapter.ContainerSpec{
			Name:   c.Name,
			Image:  c.Image,
			Labels: maps.Clone(c.Labels),
		},
		behavior: Behavior{RunForever: true},
	}
	if c.State == runtimeadapter.StateRunning {
		rec.exited = make(chan struct{})
	}
	r.addLocked(rec)
	return c.ID
}

// Containers returns copies of every container, managed or not, oldest
// first.
func (r *Runtime) Containers() []runtimeadapter.Container {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]runtimeadapter.Container, 0, len(r.order))
	for _, c := range r.order {
		out = append(out, c.snapshot())
	}
	return out
}

// Running returns copies of the running containers labelled with podUID
// and containerName, oldest first, whatever their node. Invariant 1 of
// actorlet says there is at most one.
func (r *Runtime) Running(podUID, containerName string) []runtimeadapter.Container {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []runtimeadapter.Container
	for _, c := range r.order {
		if c.running() &&
			c.c.Labels[runtimeadapter.LabelPodUID] == podUID &&
			c.c.Labels[runtimeadapter.LabelContainerName] == containerName {
			out = append(out, c.snapshot())
		}
	}
	return out
}

func generatedName(id string) string { return "fake_" + id[:12] }
