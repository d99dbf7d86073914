package cri

import (
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// What the adapter made itself and still knows without asking the
// runtime, so that a pod's start makes the calls the kubelet's SyncPod
// makes (RunPodSandbox, ImageStatus, CreateContainer, StartContainer) and
// no lookup between them:
//
//   - ranSandbox: the newest sandbox run for a pod (by node and pod UID),
//     with the config it was run with, until this adapter stops or
//     removes it. A host-network app of that pod is created in it without
//     ListPodSandbox and PodSandboxStatus (sandboxFor's lookup), and the
//     sandbox's first Start (it runs since RunPodSandbox returned) makes
//     no call;
//   - fresh: containers created and not yet started: their first Start is
//     StartContainer alone, without the ContainerStatus of resolve.
//
// After an agent restart the adapter knows nothing, and every call looks
// the runtime up as before.

// ranSandbox is a sandbox this adapter ran.
type ranSandbox struct {
	id  string
	cfg *runtimeapi.PodSandboxConfig
	// started: its first Start has returned (later ones ask the runtime).
	started bool
}

// podKey is the key of spec's pod among the sandboxes run ("" if it names
// no node or pod UID).
func podKey(labels map[string]string) string {
	node, uid := labels[runtimeadapter.LabelNode], labels[runtimeadapter.LabelPodUID]
	if node == "" || uid == "" {
		return ""
	}
	return node + "/" + uid
}

// rememberSandbox records sandbox id, just run with cfg, as its pod's
// newest.
func (r *Runtime) rememberSandbox(id string, cfg *runtimeapi.PodSandboxConfig) {
	key := podKey(cfg.GetLabels())
	if key == "" || cfg.GetLabels()[LabelImplicit] != "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.ran[key]; ok {
		delete(r.ranIDs, old.id)
	}
	r.ran[key] = &ranSandbox{id: id, cfg: cfg}
	r.ranIDs[id] = key
}

// forgetSandbox drops sandbox id (stopped, removed, or found unusable).
func (r *Runtime) forgetSandbox(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key, ok := r.ranIDs[id]
	if !ok {
		return
	}
	delete(r.ranIDs, id)
	if s := r.ran[key]; s != nil && s.id == id {
		delete(r.ran, key)
	}
}

// ranFor is the sandbox this adapter ran for the pod of host-network
// spec, if it knows one: the pod's newest (see sandboxFor).
func (r *Runtime) ranFor(spec runtimeadapter.ContainerSpec) (ranSandbox, bool) {
	if spec.NetworkMode != "host" {
		return ranSandbox{}, false
	}
	key := podKey(spec.Labels)
	if key == "" {
		return ranSandbox{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.ran[key]
	if !ok {
		return ranSandbox{}, false
	}
	return *s, true
}

// firstSandboxStart reports whether id is a sandbox this adapter ran
// whose Start has not returned yet, and marks it started.
func (r *Runtime) firstSandboxStart(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	key, ok := r.ranIDs[id]
	if !ok {
		return false
	}
	s := r.ran[key]
	if s == nil || s.id != id || s.started {
		return false
	}
	s.started = true
	return true
}

// takeFresh reports whether id was created by this adapter and not
// started since, and forgets it.
func (r *Runtime) takeFresh(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.fresh[id] {
		return false
	}
	delete(r.fresh, id)
	return true
}

// reservesNames reports whether the runtime refuses a second container
// or sandbox of a name itself, naming the holder (containerd: "name ...
// is reserved for <id>", see reservedBy): its CRI names are made of the
// metadata, which carries actorlet's name, so the reservation is the name
// check, made atomically by the runtime. containerd reserves a
// container's name within its sandbox only: Create leaves the check to it
// for a sandbox, and for a container in a sandbox this adapter ran (every
// container in that sandbox went through this adapter's Create).
func (r *Runtime) reservesNames() bool { return r.RuntimeType() == "containerd" }
