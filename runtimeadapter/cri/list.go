package cri

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// List lists the node's managed sandboxes and containers (see
// runtimeadapter.Runtime): one ListPodSandbox and one ListContainers,
// filtered by the node's (and pod's) labels on the runtime's side, and a
// ContainerStatus for each container the adapter has not seen in its
// state yet (a start time and an exit never change, so they are cached).
func (r *Runtime) List(ctx context.Context, opts runtimeadapter.ListOptions) (runtimeadapter.ListResult, error) {
	if opts.Node == "" {
		return runtimeadapter.ListResult{}, errors.New("cri: list: no node given")
	}
	if err := ctxErr(ctx, "list containers of node %s", opts.Node); err != nil {
		return runtimeadapter.ListResult{}, err
	}
	if r.RuntimeType() == "" { // the type pod statuses name container IDs with
		if _, err := r.version(ctx); err != nil {
			return runtimeadapter.ListResult{}, fmt.Errorf("list containers of node %s: %w", opts.Node, err)
		}
	}
	observed := time.Now()
	sel := map[string]string{runtimeadapter.LabelNode: opts.Node}
	if opts.PodUID != "" {
		sel[runtimeadapter.LabelPodUID] = opts.PodUID
	}
	sf := &runtimeapi.PodSandboxFilter{LabelSelector: sel}
	cf := &runtimeapi.ContainerFilter{LabelSelector: sel}
	if !opts.All {
		sf.State = &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}
		cf.State = &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}
	}
	sbs, err := r.rs.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: sf})
	if err != nil {
		return runtimeadapter.ListResult{}, wrap(ctx, err, "list sandboxes of node %s", opts.Node)
	}
	cs, err := r.rs.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: cf})
	if err != nil {
		return runtimeadapter.ListResult{}, wrap(ctx, err, "list containers of node %s", opts.Node)
	}
	var out []runtimeadapter.Container
	for _, sb := range sbs.GetItems() {
		if !runtimeadapter.IsManaged(sb.GetLabels(), opts.Node) {
			continue
		}
		ip := ""
		if sb.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY && sb.GetAnnotations()[AnnotationNetwork] == networkPod {
			st, err := r.rs.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.GetId()})
			if err != nil {
				if status.Code(err) == codes.NotFound {
					continue // removed meanwhile
				}
				return runtimeadapter.ListResult{}, wrap(ctx, err, "list: status of sandbox %s", sb.GetId())
			}
			ip = st.GetStatus().GetNetwork().GetIp()
		}
		out = append(out, fromSandbox(sb.GetId(), sb.GetMetadata(), sb.GetState(), sb.GetCreatedAt(),
			sb.GetLabels(), sb.GetAnnotations(), ip, r.doneAt(sb.GetId(), sb.GetState(), observed)))
	}
	seen := make(map[string]bool, len(cs.GetContainers()))
	for _, l := range cs.GetContainers() {
		if !runtimeadapter.IsManaged(l.GetLabels(), opts.Node) {
			continue
		}
		seen[l.GetId()] = true
		if l.GetState() == runtimeapi.ContainerState_CONTAINER_CREATED {
			out = append(out, fromListed(l))
			continue
		}
		if c, ok := r.cachedStatus(l.GetId(), l.GetState()); ok {
			out = append(out, c)
			continue
		}
		c, err := r.containerStatus(ctx, l.GetId(), opts.Node)
		if errors.Is(err, runtimeadapter.ErrNotFound) {
			continue // removed meanwhile
		}
		if err != nil {
			return runtimeadapter.ListResult{}, err
		}
		out = append(out, c)
	}
	if opts.All && opts.PodUID == "" {
		r.forget(opts.Node, seen)
	}
	r.followExits(opts, out, observed)
	return runtimeadapter.ListResult{Containers: out, ObservedAt: observed}, nil
}

// containerStatus asks the runtime for container id and caches the
// answer when it cannot change any more (running: its start; exited).
func (r *Runtime) containerStatus(ctx context.Context, id, node string) (runtimeadapter.Container, error) {
	st, err := r.rs.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		return runtimeadapter.Container{}, wrap(ctx, err, "container %s", id)
	}
	s := st.GetStatus()
	c := fromStatus(s)
	if s.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING || s.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED {
		if node == "" {
			node = c.Labels[runtimeadapter.LabelNode]
		}
		r.mu.Lock()
		r.statuses[id] = cached{state: s.GetState(), c: copyContainer(c), node: node}
		r.mu.Unlock()
	}
	return c, nil
}

// cachedStatus returns the cached view of id when the runtime still lists
// it in the same state.
func (r *Runtime) cachedStatus(id string, state runtimeapi.ContainerState) (runtimeadapter.Container, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.statuses[id]
	if !ok || e.state != state {
		return runtimeadapter.Container{}, false
	}
	return copyContainer(e.c), true
}

// forget drops the cache entries of node's containers a full listing no
// longer has.
func (r *Runtime) forget(node string, seen map[string]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, e := range r.statuses {
		if e.node == node && !seen[id] {
			delete(r.statuses, id)
		}
	}
}

// doneAt is when sandbox id was first seen not ready (now, the first
// time); the zero time while it is ready.
func (r *Runtime) doneAt(id string, state runtimeapi.PodSandboxState, now time.Time) time.Time {
	if state == runtimeapi.PodSandboxState_SANDBOX_READY {
		return time.Time{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.sandboxDone[id]
	if !ok {
		t = now
		r.sandboxDone[id] = t
	}
	return t
}

func copyContainer(c runtimeadapter.Container) runtimeadapter.Container {
	l := make(map[string]string, len(c.Labels))
	for k, v := range c.Labels {
		l[k] = v
	}
	c.Labels = l
	return c
}

// object is what a reference (an ID or a name) names: a container (with
// its status) or a sandbox (with its).
type object struct {
	container *runtimeapi.ContainerStatus
	sandbox   *runtimeapi.PodSandboxStatus
}

func (o object) id() string {
	if o.sandbox != nil {
		return o.sandbox.GetId()
	}
	return o.container.GetId()
}

// resolve finds what ref names: a container or a sandbox by ID, else by
// its name. Errors: ErrNotFound naming ref.
func (r *Runtime) resolve(ctx context.Context, ref string) (object, error) {
	if err := ctxErr(ctx, "container %s", ref); err != nil {
		return object{}, err
	}
	if ref == "" {
		return object{}, notFound(`""`)
	}
	st, err := r.rs.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: ref})
	if err == nil {
		return object{container: st.GetStatus()}, nil
	}
	if !isNotFound(err) {
		return object{}, wrap(ctx, err, "container %s", ref)
	}
	sst, err := r.rs.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: ref})
	if err == nil {
		return object{sandbox: sst.GetStatus()}, nil
	}
	if !isNotFound(err) {
		return object{}, wrap(ctx, err, "container %s", ref)
	}
	id, isSandbox, err := r.findByName(ctx, ref, "")
	if err != nil {
		return object{}, err
	}
	if id == "" {
		return object{}, notFound(ref)
	}
	if isSandbox {
		sst, err := r.rs.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id})
		if err != nil {
			return object{}, wrap(ctx, err, "container %s (sandbox %s)", ref, id)
		}
		return object{sandbox: sst.GetStatus()}, nil
	}
	st, err = r.rs.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		return object{}, wrap(ctx, err, "container %s (%s)", ref, id)
	}
	return object{container: st.GetStatus()}, nil
}

// isNotFound reports whether the runtime said NotFound. containerd also
// answers so for an ID prefix that matches nothing; a malformed ID may be
// InvalidArgument, read as not found too.
func isNotFound(err error) bool {
	c := status.Code(err)
	return c == codes.NotFound || c == codes.InvalidArgument
}

// findByName returns the ID of the container or sandbox called name ("" if
// none): names are unique across both, as Docker's. scope is the pod UID
// label of what is being created, when it has one: the runtime then lists
// only that pod's containers and sandboxes (actorlet's deterministic names
// carry the pod, so a name of one pod is never another's), not every one
// on the runtime. "" looks at every one (a reference given by name; a
// spec without a pod).
func (r *Runtime) findByName(ctx context.Context, name, scope string) (string, bool, error) {
	var sel map[string]string
	if scope != "" {
		sel = map[string]string{runtimeadapter.LabelPodUID: scope}
	}
	cs, err := r.rs.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{LabelSelector: sel}})
	if err != nil {
		return "", false, wrap(ctx, err, "container %s: list containers", name)
	}
	for _, c := range cs.GetContainers() {
		if c.GetMetadata().GetName() == name {
			return c.GetId(), false, nil
		}
	}
	sbs, err := r.rs.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{LabelSelector: sel}})
	if err != nil {
		return "", false, wrap(ctx, err, "container %s: list sandboxes", name)
	}
	for _, sb := range sbs.GetItems() {
		if sb.GetMetadata().GetName() == name && sb.GetLabels()[LabelImplicit] == "" {
			return sb.GetId(), true, nil
		}
	}
	return "", false, nil
}

// Inspect returns the container or sandbox ref (ID or name).
func (r *Runtime) Inspect(ctx context.Context, ref string) (runtimeadapter.Container, error) {
	o, err := r.resolve(ctx, ref)
	if err != nil {
		return runtimeadapter.Container{}, err
	}
	if o.sandbox != nil {
		return r.sandboxView(o.sandbox), nil
	}
	c := fromStatus(o.container)
	s := o.container.GetState()
	if s == runtimeapi.ContainerState_CONTAINER_RUNNING || s == runtimeapi.ContainerState_CONTAINER_EXITED {
		r.mu.Lock()
		r.statuses[c.ID] = cached{state: s, c: copyContainer(c), node: c.Labels[runtimeadapter.LabelNode]}
		r.mu.Unlock()
	}
	cs := []runtimeadapter.Container{c}
	r.exits.Learn(time.Now(), c)
	r.exits.Correct(cs)
	return cs[0], nil
}

func (r *Runtime) sandboxView(s *runtimeapi.PodSandboxStatus) runtimeadapter.Container {
	ip := ""
	if s.GetAnnotations()[AnnotationNetwork] == networkPod {
		ip = s.GetNetwork().GetIp()
	}
	return fromSandbox(s.GetId(), s.GetMetadata(), s.GetState(), s.GetCreatedAt(), s.GetLabels(), s.GetAnnotations(),
		ip, r.doneAt(s.GetId(), s.GetState(), time.Now()))
}
