package docker

import (
	"context"
	"errors"
	"strings"
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
type cacheEntry struct {
	rawState  string
	container runtimeadapter.Container
}

// List returns the managed containers of opts.Node (narrowed to opts.PodUID
// when set; exited ones too when opts.All). Only containers whose labels
// identify them as actorlet's (runtimeadapter.IsManaged for opts.Node) are
// returned: a container missing an identifying label is left alone.
//
// Cost: one ContainerList call, plus one ContainerInspect per container
// whose (ID, Docker state) was not seen by an earlier List. ObservedAt is
// the time just before the list call.
//
// Errors: an empty opts.Node is an error; a failed list wraps
// runtimeadapter.ErrUnavailable when the daemon cannot be reached or ctx's
// deadline passed. A failed List never returns a partial or empty result.
func (r *Runtime) List(ctx context.Context, opts runtimeadapter.ListOptions) (runtimeadapter.ListResult, error) {
	if opts.Node == "" {
		return runtimeadapter.ListResult{}, errors.New("docker: list containers: ListOptions.Node is empty")
	}
	args := filters.NewArgs(filters.Arg("label", runtimeadapter.LabelNode+"="+opts.Node))
	if opts.PodUID != "" {
		args.Add("label", runtimeadapter.LabelPodUID+"="+opts.PodUID)
	}
	observedAt := time.Now()
	summaries, err := r.cli.ContainerList(ctx, container.ListOptions{All: opts.All, Filters: args})
	if err != nil {
		return runtimeadapter.ListResult{}, wrap(err, "list containers of node %s", opts.Node)
	}

	out := make([]runtimeadapter.Container, 0, len(summaries))
	seen := make(map[string]bool, len(summaries))
	for _, s := range summaries {
		if !runtimeadapter.IsManaged(s.Labels, opts.Node) {
			continue
		}
		seen[s.ID] = true
		c, err := r.cachedInspect(ctx, s)
		if err != nil {
			return runtimeadapter.ListResult{}, err
		}
		out = append(out, c)
	}
	r.prune(opts, seen)
	return runtimeadapter.ListResult{Containers: out, ObservedAt: observedAt}, nil
}

// cachedInspect returns the full view of a listed container, from the cache
// when the cached entry has the same Docker state, else by inspecting it.
// A container removed between list and inspect is reported from the list
// alone (it existed at ObservedAt; the next List will not show it).
func (r *Runtime) cachedInspect(ctx context.Context, s container.Summary) (runtimeadapter.Container, error) {
	r.mu.Lock()
	e, ok := r.cache[s.ID]
	r.mu.Unlock()
	if ok && e.rawState == s.State {
		return e.container, nil
	}

	in, err := r.inspect(ctx, s.ID)
	if cerrdefs.IsNotFound(err) {
		return fromSummary(s), nil
	}
	if err != nil {
		return runtimeadapter.Container{}, wrap(err, "inspect container %s", s.ID)
	}
	c := fromInspect(in)
	c.Labels = copyLabels(s.Labels)
	r.log.Debug("docker: inspected container", zap.String("id", s.ID), zap.String("state", c.RawState))
	r.mu.Lock()
	r.cache[s.ID] = cacheEntry{rawState: c.RawState, container: c}
	r.mu.Unlock()
	return c, nil
}

// prune drops cache entries in the scope of opts (same node, same pod when
// narrowed, running when exited ones were not asked for) whose container was
// not listed: they are gone. Entries outside the scope are kept for the
// listings that cover them.
func (r *Runtime) prune(opts runtimeadapter.ListOptions, seen map[string]bool) {
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

// fromSummary is the best view of a container without inspecting it: no
// start/finish times, exit code or IP.
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
	return c
}

// inspect is the one place that calls ContainerInspect, so tests can count
// calls.
func (r *Runtime) inspect(ctx context.Context, idOrName string) (container.InspectResponse, error) {
	r.inspects.Add(1)
	in, err := r.cli.ContainerInspect(ctx, idOrName)
	if err != nil {
		return in, err
	}
	if in.ContainerJSONBase == nil {
		return in, errors.New("empty inspect response")
	}
	return in, nil
}
