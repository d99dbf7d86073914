package docker

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"go.uber.org/zap"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// cacheEntry is one inspected container, valid while Docker keeps reporting
// it in rawState. A container can only change its start/finish times, exit
// code, reason or IP by changing state, so a steady state needs no inspect.
// The exception is a created container: a start that fails leaves it
// created and sets its Error, so one without an Error is not cached.
type cacheEntry struct {
	rawState  string
	container runtimeadapter.Container
}

// listInspectParallel is how many containers one List inspects at once.
const listInspectParallel = 4

// List returns the managed containers of opts.Node (narrowed to opts.PodUID
// when set; exited ones too when opts.All). Only containers whose labels
// identify them as actorlet's (runtimeadapter.IsManaged for opts.Node) are
// returned: a container missing an identifying label is left alone.
//
// Cost: one ContainerList call, plus one ContainerInspect per container
// whose (ID, Docker state) was not seen by an earlier List, at most 4 at
// a time. ObservedAt is the time just before the list call.
//
// Each inspect has its own deadline: the inspect timeout (see
// WithInspectTimeout; default 3 s), and never more than half of what is
// left of ctx when the inspects begin. A container whose inspect fails or
// times out (e.g. hangs while the daemon holds its lock) does not fail the
// List: it is reported from the list alone, as one removed between list
// and inspect is (see fromSummary): its state from the list (running
// stays running, exited stays exited), no start or finish time, the exit
// code Docker's status line gives. That view is not cached, so the next
// List inspects it again.
//
// Errors: an empty opts.Node is an error; a failed list call wraps
// runtimeadapter.ErrUnavailable when the daemon cannot be reached or ctx's
// deadline passed. A failed List never returns a partial or empty result.
func (r *Runtime) List(ctx context.Context, opts runtimeadapter.ListOptions) (runtimeadapter.ListResult, error) {
	if opts.Node == "" {
		return runtimeadapter.ListResult{}, errors.New("docker: list containers: ListOptions.Node is empty")
	}
	cli, err := r.api(ctx)
	if err != nil {
		return runtimeadapter.ListResult{}, wrap(err, "list containers of node %s", opts.Node)
	}
	args := filters.NewArgs(filters.Arg("label", runtimeadapter.LabelNode+"="+opts.Node))
	if opts.PodUID != "" {
		args.Add("label", runtimeadapter.LabelPodUID+"="+opts.PodUID)
	}
	observedAt := time.Now()
	summaries, err := cli.ContainerList(ctx, container.ListOptions{All: opts.All, Filters: args})
	if err != nil {
		return runtimeadapter.ListResult{}, wrap(err, "list containers of node %s", opts.Node)
	}

	managed := make([]container.Summary, 0, len(summaries))
	seen := make(map[string]bool, len(summaries))
	for _, s := range summaries {
		if runtimeadapter.IsManaged(s.Labels, opts.Node) {
			managed = append(managed, s)
			seen[s.ID] = true
		}
	}
	out := r.cachedInspectAll(ctx, managed)
	r.prune(opts, seen, observedAt)
	r.learn(observedAt, out...)
	r.correct(out)
	return runtimeadapter.ListResult{Containers: out, ObservedAt: observedAt}, nil
}

// cachedInspectAll returns the full view of each listed container, in
// order (see cachedInspect), inspecting at most listInspectParallel at a
// time, each within the inspect deadline List documents.
func (r *Runtime) cachedInspectAll(ctx context.Context, ss []container.Summary) []runtimeadapter.Container {
	timeout := r.inspectTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl)/2)
	}
	out := make([]runtimeadapter.Container, len(ss))
	sem := make(chan struct{}, listInspectParallel)
	var wg sync.WaitGroup
	for i, s := range ss {
		if c, ok := r.cached(s); ok {
			out[i] = c
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			out[i] = r.cachedInspect(ctx, s, timeout)
		})
	}
	wg.Wait()
	return out
}

// cached returns the cached view of a listed container when Docker still
// reports it in the state it was inspected in.
func (r *Runtime) cached(s container.Summary) (runtimeadapter.Container, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.cache[s.ID]
	if ok && e.rawState == s.State {
		c := e.container
		c.Labels = copyLabels(c.Labels) // the caller's to change
		return c, true
	}
	return runtimeadapter.Container{}, false
}

// cachedInspect inspects a listed container within timeout and caches the
// result. When the inspect fails (the container removed since the list,
// the daemon slow or holding the container's lock) the container is
// reported from the list alone, and that is not cached.
func (r *Runtime) cachedInspect(ctx context.Context, s container.Summary, timeout time.Duration) runtimeadapter.Container {
	ictx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	in, err := r.inspect(ictx, s.ID)
	if err != nil {
		c := fromSummary(s)
		r.mu.Lock()
		if e, ok := r.cache[s.ID]; ok {
			c.CreatedAt = e.container.CreatedAt // exact; the list has seconds
			if e.rawState == s.State {
				c.Error = e.container.Error // a failed start is never retried for want of it
			}
		}
		r.mu.Unlock()
		if !cerrdefs.IsNotFound(err) {
			r.log.Debug("docker: inspect failed; reporting the container from the list",
				zap.String("id", s.ID), zap.String("state", s.State), zap.Duration("timeout", timeout), zap.Error(err))
		}
		return c
	}
	c := fromInspect(in)
	c.Labels = copyLabels(s.Labels)
	r.log.Debug("docker: inspected container", zap.String("id", s.ID), zap.String("state", c.RawState))
	if c.RawState == container.StateCreated && c.Error == "" {
		return c // its start may yet fail without a change of state
	}
	cached := c
	cached.Labels = copyLabels(c.Labels) // the caller may change c's
	r.mu.Lock()
	r.cache[s.ID] = cacheEntry{rawState: c.RawState, container: cached}
	r.mu.Unlock()
	return c
}

// prune drops cache entries in the scope of opts (same node, same pod when
// narrowed, running when exited ones were not asked for) whose container was
// not listed: they are gone. Entries outside the scope are kept for the
// listings that cover them.
func (r *Runtime) prune(opts runtimeadapter.ListOptions, seen map[string]bool, observedAt time.Time) {
	r.exits.Forget(opts, seen, observedAt)
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, e := range r.cache {
		l := e.container.Labels
		inScope := l[runtimeadapter.LabelNode] == opts.Node &&
			(opts.PodUID == "" || l[runtimeadapter.LabelPodUID] == opts.PodUID) &&
			(opts.All || e.rawState == container.StateRunning)
		if inScope && !seen[id] {
			delete(r.cache, id)
		}
	}
}

// fromSummary is the best view of a container without inspecting it: the
// list's state (never running for an exited container or the reverse),
// name, image, labels, IP and creation time (in seconds); no start or
// finish time. An exited container's exit code is read from Docker's
// status line ("Exited (3) 2 seconds ago"), its Reason following from it
// (an OOM kill reads as Error); when the line does not give it (a dead
// container), the exit code is 137 and the Reason ContainerStatusUnknown,
// as the kubelet reports a container whose status it lost.
func fromSummary(s container.Summary) runtimeadapter.Container {
	c := runtimeadapter.Container{
		ID:        s.ID,
		Image:     s.Image,
		Labels:    copyLabels(s.Labels),
		State:     mapState(s.State),
		RawState:  s.State,
		CreatedAt: time.Unix(s.Created, 0),
	}
	if len(s.Names) > 0 {
		c.Name = strings.TrimPrefix(s.Names[0], "/")
	}
	if s.NetworkSettings != nil {
		c.IP = networksIP(s.NetworkSettings.Networks)
	}
	if c.State == runtimeadapter.StateExited {
		if code, ok := statusExitCode(s.Status); ok {
			c.ExitCode, c.Reason = code, exitReason(false, code)
		} else {
			c.ExitCode, c.Reason = unknownExitCode, reasonUnknown
		}
	}
	return c
}

// statusExitCode reads the exit code from the status line Docker lists an
// exited container with: "Exited (137) 5 seconds ago".
func statusExitCode(status string) (int, bool) {
	m := exitedStatus.FindStringSubmatch(status)
	if m == nil {
		return 0, false
	}
	code, err := strconv.Atoi(m[1])
	return code, err == nil
}

var exitedStatus = regexp.MustCompile(`^Exited \((-?[0-9]+)\)`)

// inspect is the one place that calls ContainerInspect, so tests can count
// calls.
func (r *Runtime) inspect(ctx context.Context, idOrName string) (container.InspectResponse, error) {
	cli, err := r.api(ctx)
	if err != nil {
		return container.InspectResponse{}, err
	}
	r.inspects.Add(1)
	in, err := cli.ContainerInspect(ctx, idOrName)
	if err != nil {
		return in, err
	}
	if in.ContainerJSONBase == nil {
		return in, errors.New("empty inspect response")
	}
	return in, nil
}
