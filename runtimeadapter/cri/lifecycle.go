package cri

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// lockName serializes the creates of one name, so two creates of it never
// both pass the name check.
func (r *Runtime) lockName(name string) func() {
	r.createMu.Lock()
	mu, ok := r.creating[name]
	if !ok {
		mu = &refMutex{}
		r.creating[name] = mu
	}
	mu.refs++
	r.createMu.Unlock()
	mu.Lock()
	return func() {
		mu.Unlock()
		r.createMu.Lock()
		if mu.refs--; mu.refs == 0 {
			delete(r.creating, name)
		}
		r.createMu.Unlock()
	}
}

// Create creates a sandbox (RunPodSandbox, which also starts it) or a
// container in its sandbox; see the package doc.
func (r *Runtime) Create(ctx context.Context, spec runtimeadapter.ContainerSpec) (string, error) {
	if err := ctxErr(ctx, "create container %s", spec.Name); err != nil {
		return "", err
	}
	if spec.Name == "" {
		return "", errors.New("cri: create: the spec has no name")
	}
	unlock := r.lockName(spec.Name)
	defer unlock()
	isSandbox := runtimeadapter.ContainerType(spec.Labels[runtimeadapter.LabelContainerType]) == runtimeadapter.TypeSandbox
	uid := spec.Labels[runtimeadapter.LabelPodUID]
	ran, inRan := ranSandbox{}, false
	if !isSandbox {
		ran, inRan = r.ranFor(spec)
	}
	// The name check: left to the runtime where it reserves names (see
	// reservesNames), else a lookup among the pod's containers and
	// sandboxes.
	if !(r.reservesNames() && uid != "" && (isSandbox || inRan)) {
		id, _, err := r.findByName(ctx, spec.Name, uid)
		if err != nil {
			return "", err
		}
		if id != "" {
			return "", fmt.Errorf("create: %w", &runtimeadapter.NameConflictError{Name: spec.Name, ID: id})
		}
	}
	var id string
	var err error
	if isSandbox {
		id, err = r.runSandbox(ctx, spec, spec.NetworkMode == "host")
	} else {
		id, err = r.createContainer(ctx, spec, ran, inRan)
	}
	if err == nil { // whose it is, should it exit before it is listed
		r.exits.Learn(time.Now(), runtimeadapter.Container{ID: id, Labels: spec.Labels})
	}
	return id, err
}

// runSandbox runs spec as a pod sandbox.
func (r *Runtime) runSandbox(ctx context.Context, spec runtimeadapter.ContainerSpec, hostNetwork bool) (string, error) {
	pod := spec.Labels[runtimeadapter.LabelPodNamespace] + "/" + spec.Labels[runtimeadapter.LabelPodName]
	if !hostNetwork {
		ready, why, err := r.NetworkReady(ctx)
		if err != nil {
			return "", err
		}
		if !ready {
			what := "on the pod network"
			if len(spec.PortBindings) > 0 {
				what += fmt.Sprintf(", publishing hostPort %d", spec.PortBindings[0].HostPort)
			}
			return "", fmt.Errorf("sandbox %s of pod %s %s: %w (runtime: %s); set hostNetwork: true", spec.Name, pod, what, ErrNoPodNetwork, why)
		}
	}
	cfg := sandboxConfig(spec, r.opts.LogRoot, hostNetwork)
	resp, err := r.rs.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		if id := reservedBy(err); id != "" {
			return "", fmt.Errorf("create: %w", &runtimeadapter.NameConflictError{Name: spec.Name, ID: id})
		}
		return "", wrap(ctx, err, "pod %s: run sandbox %s", pod, spec.Name)
	}
	r.rememberSandbox(resp.GetPodSandboxId(), cfg)
	return resp.GetPodSandboxId(), nil
}

// reservedRE finds the ID in containerd's "name ... is reserved for <id>".
var reservedRE = regexp.MustCompile(`is reserved for "?([0-9a-f]{64})`)

// reservedBy returns the ID holding the name a create was refused for.
func reservedBy(err error) string {
	if m := reservedRE.FindStringSubmatch(err.Error()); m != nil {
		return m[1]
	}
	return ""
}

// createContainer creates an app (init, sidecar) container in its
// sandbox: ran (inRan), the sandbox this adapter ran for its
// host-network pod, whose image is then asked about only when
// CreateContainer fails (an absent image is ErrNotFound); else the one
// sandboxFor finds, or an implicit one, once its image is known present.
func (r *Runtime) createContainer(ctx context.Context, spec runtimeadapter.ContainerSpec, ran ranSandbox, inRan bool) (string, error) {
	if inRan {
		return r.createIn(ctx, spec, ran.id, ran.cfg, ran.cfg.GetAnnotations()[AnnotationNetwork])
	}
	img, err := r.is.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: spec.Image}})
	if err != nil {
		return "", wrap(ctx, err, "create container %s: image %s", spec.Name, spec.Image)
	}
	if img.GetImage() == nil {
		return "", fmt.Errorf("create container %s: image %s: %w", spec.Name, spec.Image, runtimeadapter.ErrNotFound)
	}
	sb, err := r.sandboxFor(ctx, spec)
	if err != nil {
		return "", err
	}
	if sb == nil {
		key := implicitKey(spec)
		unlock := r.lockName("implicit:" + labelValue(key))
		defer unlock()
		if sb, err = r.implicitSandbox(ctx, spec, key); err != nil {
			return "", err
		}
	}
	return r.createIn(ctx, spec, sb.GetId(), sandboxConfigOf(sb, r.opts.LogRoot), sb.GetAnnotations()[AnnotationNetwork])
}

// createIn creates spec's container in sandbox sandboxID, run with
// sandboxCfg on network (networkHost or networkPod).
func (r *Runtime) createIn(ctx context.Context, spec runtimeadapter.ContainerSpec, sandboxID string, sandboxCfg *runtimeapi.PodSandboxConfig, network string) (string, error) {
	seccomp := ""
	if spec.Seccomp != "" && spec.Seccomp != runtimeadapter.SeccompUnconfined {
		var err error
		if seccomp, err = writeSeccomp(r.opts.StateDir, spec.Seccomp); err != nil {
			return "", fmt.Errorf("create container %s: %w", spec.Name, err)
		}
	}
	cfg, err := containerConfig(spec, network, seccomp)
	if err != nil {
		return "", err
	}
	resp, err := r.rs.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId: sandboxID, Config: cfg, SandboxConfig: sandboxCfg,
	})
	if err != nil {
		if id := reservedBy(err); id != "" {
			return "", fmt.Errorf("create: %w", &runtimeadapter.NameConflictError{Name: spec.Name, ID: id})
		}
		if ctx.Err() == nil {
			img, ierr := r.is.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: spec.Image}})
			if ierr == nil && img.GetImage() == nil {
				return "", fmt.Errorf("create container %s: image %s: %w", spec.Name, spec.Image, runtimeadapter.ErrNotFound)
			}
		}
		// A sandbox that cannot take a container (it died) is looked up
		// again by the next create.
		r.forgetSandbox(sandboxID)
		return "", wrap(ctx, err, "create container %s (image %s) in sandbox %s", spec.Name, spec.Image, sandboxID)
	}
	r.mu.Lock()
	r.fresh[resp.GetContainerId()] = true
	r.mu.Unlock()
	return resp.GetContainerId(), nil
}

// sandboxFor is the sandbox spec's container runs in: the one it joins
// ("container:<ref>", which must be ready), its pod's newest ready one
// ("host"), else one of its own (see the package doc).
func (r *Runtime) sandboxFor(ctx context.Context, spec runtimeadapter.ContainerSpec) (*runtimeapi.PodSandboxStatus, error) {
	if ref, ok := strings.CutPrefix(spec.NetworkMode, "container:"); ok {
		o, err := r.resolve(ctx, ref)
		if err != nil {
			return nil, fmt.Errorf("create container %s: its sandbox: %w", spec.Name, err)
		}
		if o.sandbox == nil {
			return nil, fmt.Errorf("create container %s: %s is a container, not a sandbox", spec.Name, ref)
		}
		if o.sandbox.GetState() != runtimeapi.PodSandboxState_SANDBOX_READY {
			return nil, fmt.Errorf("create container %s: its sandbox %s is not ready (stopped)", spec.Name, ref)
		}
		return o.sandbox, nil
	}
	node, uid := spec.Labels[runtimeadapter.LabelNode], spec.Labels[runtimeadapter.LabelPodUID]
	if spec.NetworkMode == "host" && node != "" && uid != "" {
		sbs, err := r.rs.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{
			State:         &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY},
			LabelSelector: map[string]string{runtimeadapter.LabelNode: node, runtimeadapter.LabelPodUID: uid},
		}})
		if err != nil {
			return nil, wrap(ctx, err, "create container %s: list its pod's sandboxes", spec.Name)
		}
		items := sbs.GetItems()
		sort.Slice(items, func(i, j int) bool { return items[i].GetCreatedAt() > items[j].GetCreatedAt() })
		for _, sb := range items {
			if sb.GetLabels()[runtimeadapter.LabelContainerType] != string(runtimeadapter.TypeSandbox) {
				continue
			}
			st, err := r.rs.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.GetId()})
			if err == nil {
				return st.GetStatus(), nil
			}
		}
	}
	return nil, nil // the caller makes or finds the pod's implicit sandbox
}

// implicitKey is the LabelImplicit value of the sandbox the adapter makes
// for the containers of spec's pod that name none: the pod's UID, else the
// container's name.
func implicitKey(spec runtimeadapter.ContainerSpec) string {
	if uid := spec.Labels[runtimeadapter.LabelPodUID]; uid != "" {
		return spec.Labels[runtimeadapter.LabelNode] + "/" + uid
	}
	return spec.Name
}

// implicitSandbox returns the ready sandbox the adapter made for spec's
// pod, running one if there is none: on the host's network, labelled
// with the node, the pod and LabelImplicit, and no type (so never listed
// as a container). The caller holds lockName("implicit:"+key) until its
// container is created in it, so a remove of the pod's last other
// container cannot remove it meanwhile.
func (r *Runtime) implicitSandbox(ctx context.Context, spec runtimeadapter.ContainerSpec, key string) (*runtimeapi.PodSandboxStatus, error) {
	sbs, err := r.rs.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{LabelImplicit: labelValue(key)},
	}})
	if err != nil {
		return nil, wrap(ctx, err, "create container %s: list its sandbox", spec.Name)
	}
	for _, sb := range sbs.GetItems() {
		if sb.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			st, err := r.rs.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.GetId()})
			if err == nil {
				return st.GetStatus(), nil
			}
		}
		// A stopped one is of no use.
		if err := r.removeSandbox(ctx, sb.GetId()); err != nil && !errors.Is(err, runtimeadapter.ErrNotFound) {
			return nil, err
		}
	}
	labels := map[string]string{LabelImplicit: labelValue(key)}
	for _, k := range []string{runtimeadapter.LabelNode, runtimeadapter.LabelPodUID, runtimeadapter.LabelPodName, runtimeadapter.LabelPodNamespace} {
		if v := spec.Labels[k]; v != "" {
			labels[k] = v
		}
	}
	name := "actorlet-implicit_" + labelValue(key)
	id, err := r.runSandbox(ctx, runtimeadapter.ContainerSpec{Name: name, Image: spec.Image, Labels: labels}, true)
	if err != nil {
		return nil, fmt.Errorf("create container %s: %w", spec.Name, err)
	}
	st, err := r.rs.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id})
	if err != nil {
		return nil, wrap(ctx, err, "create container %s: its sandbox %s", spec.Name, id)
	}
	return st.GetStatus(), nil
}

// labelValue makes key usable as a label value and a name part.
func labelValue(key string) string { return strings.ReplaceAll(key, "/", "_") }

// removeImplicitIfEmpty removes sandbox sb when the adapter made it and no
// container is left in it.
func (r *Runtime) removeImplicitIfEmpty(ctx context.Context, sandboxID string) error {
	if sandboxID == "" {
		return nil
	}
	st, err := r.rs.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sandboxID})
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return wrap(ctx, err, "sandbox %s", sandboxID)
	}
	key := st.GetStatus().GetLabels()[LabelImplicit]
	if key == "" {
		return nil
	}
	unlock := r.lockName("implicit:" + key)
	defer unlock()
	cs, err := r.rs.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{PodSandboxId: sandboxID}})
	if err != nil {
		return wrap(ctx, err, "sandbox %s: list its containers", sandboxID)
	}
	if len(cs.GetContainers()) > 0 {
		return nil
	}
	if err := r.removeSandbox(ctx, sandboxID); err != nil && !errors.Is(err, runtimeadapter.ErrNotFound) {
		return err
	}
	return nil
}

// Start starts a created container. A ready sandbox is already started;
// a stopped one cannot be started again on CRI (a new one is created).
func (r *Runtime) Start(ctx context.Context, ref string) error {
	if err := ctxErr(ctx, "start container %s", ref); err != nil {
		return err
	}
	if r.firstSandboxStart(ref) {
		return nil // it runs since RunPodSandbox returned
	}
	if r.takeFresh(ref) {
		// Created by this adapter and not started since: started without
		// a look at its state first. A failure is looked into below.
		if _, err := r.rs.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: ref}); err == nil {
			return nil
		}
	}
	o, err := r.resolve(ctx, ref)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	if o.sandbox != nil {
		if o.sandbox.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			return nil
		}
		return fmt.Errorf("start sandbox %s: it has stopped, and a CRI sandbox cannot start again", ref)
	}
	switch o.container.GetState() {
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		return nil
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		if msg := o.container.GetMessage(); o.container.GetStartedAt() == 0 && msg != "" {
			return fmt.Errorf("start container %s: %s", ref, msg)
		}
		return fmt.Errorf("start container %s: it has exited, and CRI cannot start a container again", ref)
	}
	if _, err := r.rs.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: o.id()}); err != nil {
		return wrap(ctx, err, "start container %s", ref)
	}
	return nil
}

// Stop stops a container (StopContainer: its stop signal, SIGKILL after
// grace, in whole seconds rounded up) and returns once its status shows
// the exit; a sandbox is stopped with StopPodSandbox. The stop is carried
// out even when ctx ends first (as by a daemon that outlives its client):
// Stop then returns ErrUnavailable wrapping ctx's error.
func (r *Runtime) Stop(ctx context.Context, ref string, grace time.Duration) error {
	o, err := r.resolve(ctx, ref)
	if err != nil {
		return fmt.Errorf("stop: %w", err)
	}
	if o.sandbox != nil {
		return r.detached(ctx, grace, "stop sandbox "+ref, func(dctx context.Context) error {
			return r.stopSandbox(dctx, o.id())
		})
	}
	if o.container.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return nil
	}
	return r.detached(ctx, grace, "stop container "+ref, func(dctx context.Context) error {
		return r.stopContainer(dctx, o.id(), grace)
	})
}

// stopTail is how long a stop may take past its grace period.
const stopTail = 2 * time.Minute

// detached runs f on a context that outlives ctx by up to grace+stopTail
// and waits for it or for ctx.
func (r *Runtime) detached(ctx context.Context, grace time.Duration, what string, f func(context.Context) error) error {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace+stopTail)
	done := make(chan error, 1)
	go func() {
		defer cancel()
		done <- f(dctx)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("%s: %w: %w (the stop goes on)", what, runtimeadapter.ErrUnavailable, ctx.Err())
	}
}

// graceSeconds is grace in CRI's whole seconds, rounded up.
func graceSeconds(grace time.Duration) int64 {
	if grace <= 0 {
		return 0
	}
	return int64(math.Ceil(grace.Seconds()))
}

// stopContainer stops container id and waits until its status shows it
// stopped: containerd 1.6 may answer StopContainer before (measured
// 17–120 ms), and once failed it with "ttrpc: closed"; both are retried.
func (r *Runtime) stopContainer(ctx context.Context, id string, grace time.Duration) error {
	var err error
	for attempt := 0; ; attempt++ {
		_, err = r.rs.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: graceSeconds(grace)})
		if err == nil || isNotFound(err) || ctx.Err() != nil || attempt >= 2 {
			break
		}
		grace = 0 // its grace has been spent
	}
	if err != nil {
		if isNotFound(err) {
			return notFound(id)
		}
		return wrap(ctx, err, "stop container %s", id)
	}
	return r.waitStopped(ctx, id)
}

// waitStopped polls container id's status until it does not run.
func (r *Runtime) waitStopped(ctx context.Context, id string) error {
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		st, err := r.rs.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
		if err != nil {
			if isNotFound(err) {
				return nil
			}
			return wrap(ctx, err, "stop container %s: its status", id)
		}
		if st.GetStatus().GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
			return nil
		}
		select {
		case <-ctx.Done():
			return wrap(ctx, ctx.Err(), "stop container %s: waiting for its exit", id)
		case <-time.After(delay):
		}
	}
}

// stopSandbox stops a sandbox (and every container in it).
func (r *Runtime) stopSandbox(ctx context.Context, id string) error {
	r.forgetSandbox(id) // before: no create goes into it meanwhile
	if _, err := r.rs.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id}); err != nil {
		if isNotFound(err) {
			return notFound(id)
		}
		return wrap(ctx, err, "stop sandbox %s", id)
	}
	r.doneAt(id, runtimeapi.PodSandboxState_SANDBOX_NOTREADY, time.Now())
	return nil
}

// removeSandbox stops and removes a sandbox (with its containers).
func (r *Runtime) removeSandbox(ctx context.Context, id string) error {
	if err := r.stopSandbox(ctx, id); err != nil {
		return err
	}
	if err := retryRemoving(ctx, func() error {
		_, err := r.rs.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id})
		return err
	}); err != nil {
		if isNotFound(err) {
			return notFound(id)
		}
		return wrap(ctx, err, "remove sandbox %s", id)
	}
	r.mu.Lock()
	delete(r.sandboxDone, id)
	r.mu.Unlock()
	return nil
}

// Remove removes a container, killing it first if it runs, retrying the
// remove while containerd still sees it running; with it goes a sandbox
// the adapter made for it alone. A sandbox is stopped and removed (its
// containers with it).
func (r *Runtime) Remove(ctx context.Context, ref string) error {
	o, err := r.resolve(ctx, ref)
	if err != nil {
		return fmt.Errorf("remove: %w", err)
	}
	if o.sandbox != nil {
		if err := r.removeSandbox(ctx, o.id()); err != nil {
			return fmt.Errorf("remove: %w", err)
		}
		return nil
	}
	id := o.id()
	sandboxID := ""
	if l, err := r.rs.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{Id: id}}); err == nil && len(l.GetContainers()) == 1 {
		sandboxID = l.GetContainers()[0].GetPodSandboxId()
	}
	if o.container.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING {
		if err := r.stopContainer(ctx, id, 0); err != nil && !errors.Is(err, runtimeadapter.ErrNotFound) {
			return fmt.Errorf("remove: %w", err)
		}
	}
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		err = retryRemoving(ctx, func() error {
			_, err := r.rs.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id})
			return err
		})
		if err == nil || isNotFound(err) || ctx.Err() != nil || !strings.Contains(err.Error(), "running") {
			break
		}
		// "container is still running, to stop first": the exit has
		// not reached its status yet.
		_, _ = r.rs.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id})
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
	}
	if err != nil && !isNotFound(err) {
		return wrap(ctx, err, "remove container %s", ref)
	}
	r.mu.Lock()
	delete(r.statuses, id)
	delete(r.fresh, id)
	r.mu.Unlock()
	if err := r.removeImplicitIfEmpty(ctx, sandboxID); err != nil {
		return fmt.Errorf("remove: %w", err)
	}
	if isNotFound(err) {
		return fmt.Errorf("remove: %w", notFound(ref))
	}
	return nil
}

// removingTimeout bounds how long a remove waits for another remove of the
// same object (a sandbox's removal removes its containers) to finish.
const removingTimeout = 10 * time.Second

// retryRemoving calls remove again while the runtime says the object (or
// one of a sandbox's containers) is "already in removing state": another
// remove is under way, and the object is gone once it is done (then
// NotFound).
func retryRemoving(ctx context.Context, remove func() error) error {
	deadline := time.Now().Add(removingTimeout)
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		err := remove()
		if err == nil || !strings.Contains(err.Error(), "removing state") || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
	}
}
