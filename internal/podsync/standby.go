package podsync

// Standby containers: the next instance of a restartable app container,
// created ahead of time so that its restart is one start call (issue 16).
// A standby is an ordinary instance of the container (its deterministic
// runtime name and restart count label are those of the attempt it will
// be) that also carries LabelStandby and, in LabelConfigHash, the hash of
// everything its configuration was made from (StandbyConfig). While it is
// created and never started (Adoptable) the plan keeps it out of the
// container's instances: restartCount, lastState, the status, the
// back-off and GC never see it. Once started it is the container's newest
// instance like any other; a standby whose start failed is a StartError
// exit, as any container whose start failed (Docker's State.Error).

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// Labels of a standby (set on it at its create).
const (
	// LabelStandby ("true") marks an instance created ahead of its restart.
	LabelStandby = "io.actorlet.standby"
	// LabelConfigHash is StandbyConfig of the inputs the standby was made
	// from.
	LabelConfigHash = "io.actorlet.container.config-hash"
)

// ReasonStandby is the reason of a Start that only creates a standby.
const ReasonStandby = "Standby"

// IsStandby: c is a standby not yet started (a pending standby).
func IsStandby(c *runtimeadapter.Container) bool {
	return c.Labels[LabelStandby] == "true" && Adoptable(c)
}

// AsStandby labels the spec of app container instance as a standby made
// from inputs whose StandbyConfig is config.
func AsStandby(spec runtimeadapter.ContainerSpec, config string) runtimeadapter.ContainerSpec {
	spec.Labels = maps.Clone(spec.Labels)
	spec.Labels[LabelStandby] = "true"
	spec.Labels[LabelConfigHash] = config
	return spec
}

// configInputs is everything AppSpecFor makes an app container's runtime
// spec from, beyond the node's fixed options: the pod's identity and
// metadata (downward API env), its spec except its other containers
// (volumes, pod security context, service account …), the container, the
// sandbox it joins and its address (status.podIP), the node's addresses,
// and the content of the pod's ConfigMaps and Secrets (env valueFrom,
// envFrom), as a digest.
type configInputs struct {
	Node        string            `json:"node"`
	HostIPs     []string          `json:"hostIPs,omitempty"`
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace"`
	UID         string            `json:"uid"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Spec        v1.PodSpec        `json:"spec"`
	SandboxID   string            `json:"sandboxID"`
	SandboxIP   string            `json:"sandboxIP,omitempty"`
	Objects     string            `json:"objects,omitempty"`
}

// StandbyConfig is the hash of every input to the configuration of the
// next instance of app container c of pod in the sandbox sb: a standby
// whose LabelConfigHash differs is stale (a spec edit, a new sandbox or
// pod IP, a changed downward-API value, ConfigMap or Secret) and is
// replaced.
func StandbyConfig(node string, hostIPs []string, pod *v1.Pod, c *v1.Container, sb *runtimeadapter.Container, objs Objects) string {
	in := configInputs{
		Node: node, HostIPs: hostIPs, Name: pod.Name, Namespace: pod.Namespace, UID: string(pod.UID),
		Labels: pod.Labels, Annotations: pod.Annotations, Spec: pod.Spec, SandboxID: sb.ID,
	}
	in.Spec.Containers, in.Spec.InitContainers, in.Spec.EphemeralContainers = []v1.Container{*c}, nil, nil
	if !pod.Spec.HostNetwork && NeedsPodIP(c) {
		in.SandboxIP = sb.IP
	}
	if len(objs.ConfigMaps)+len(objs.Secrets) > 0 {
		in.Objects = objectsDigest(objs)
	}
	b, err := json.Marshal(in)
	if err != nil { // only plain data: cannot happen
		panic(fmt.Sprintf("podsync: standby config: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// objectsDigest is a digest of the objects' names and content (a
// one-way hash: no Secret value can be read back from it).
func objectsDigest(objs Objects) string {
	type entry struct {
		Kind, Name string
		Data       map[string][]byte `json:",omitempty"`
		Text       map[string]string `json:",omitempty"`
	}
	var es []entry
	for _, name := range slices.Sorted(maps.Keys(objs.ConfigMaps)) {
		cm := objs.ConfigMaps[name]
		es = append(es, entry{Kind: "ConfigMap", Name: name, Text: cm.Data, Data: cm.BinaryData})
	}
	for _, name := range slices.Sorted(maps.Keys(objs.Secrets)) {
		es = append(es, entry{Kind: "Secret", Name: name, Data: objs.Secrets[name].Data})
	}
	b, err := json.Marshal(es) // map keys are sorted
	if err != nil {
		panic(fmt.Sprintf("podsync: objects digest: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// standbyPlan is what standbyFor found for an app container: whether it
// may have a standby, the one to start for its restart (nil: none fits),
// and the config hash of its next instance.
type standbyPlan struct {
	on     bool // c may have a standby
	use    *runtimeadapter.Container
	config string
}

// standbyFor finds the pending standby of c, whose newest instance is
// latest, in the running sandbox sb, that is its next instance (attempt
// latest+1, made from the inputs of now), and drops the others (stale,
// extra, or no standby wanted: the feature off, or an image pulled at
// every start).
func (p *Plan) standbyFor(in Input, g grouped, c *v1.Container, latest *runtimeadapter.Container, sb *runtimeadapter.Container) standbyPlan {
	var sp standbyPlan
	pending := g.standbys[c.Name]
	if !in.Standby || pullsEveryStart(c) {
		p.DropStandby = append(p.DropStandby, pending...)
		return sp
	}
	sp.on = true
	sp.config = StandbyConfig(in.Node, in.HostIPs, in.Pod, c, sb, in.Objects)
	for i := range pending {
		s := &pending[i]
		if sp.use == nil && restarts(s) == restarts(latest)+1 && labelHash(s) == ContainerHash(c) && s.Labels[LabelConfigHash] == sp.config {
			sp.use = s
			continue
		}
		p.DropStandby = append(p.DropStandby, *s)
	}
	return sp
}

// pullsEveryStart: c's image is pulled before each of its instances is
// created (imagePullPolicy Always, explicit or defaulted for a :latest or
// untagged image), so its next instance cannot be made ahead: it would
// miss that pull.
func pullsEveryStart(c *v1.Container) bool {
	switch c.ImagePullPolicy {
	case v1.PullAlways:
		return true
	case "":
		if strings.Contains(c.Image, "@") {
			return false
		}
		name := c.Image[strings.LastIndex(c.Image, "/")+1:]
		i := strings.LastIndex(name, ":")
		return i < 0 || name[i+1:] == "latest"
	}
	return false
}

// wantStandby: c's next instance is worth creating now — its newest
// instance runs under restartPolicy Always (a restart will come), or it
// exited and waits for its restart (CrashLoopBackOff).
func wantStandby(pod *v1.Pod, latest *runtimeadapter.Container, waiting bool) bool {
	switch latest.State {
	case runtimeadapter.StateRunning:
		return pod.Spec.RestartPolicy == v1.RestartPolicyAlways || pod.Spec.RestartPolicy == ""
	case runtimeadapter.StateExited:
		return waiting
	}
	return false
}

// dropStandbys drops every pending standby of the pod (a new sandbox, a
// finished pod: none of them is the next instance).
func (p *Plan) dropStandbys(g grouped) {
	for _, name := range slices.Sorted(maps.Keys(g.standbys)) {
		p.DropStandby = append(p.DropStandby, g.standbys[name]...)
	}
}

// standbyCreate is a standby's create: the Start it stands for, with its
// config hash.
func standbyCreate(name string, attempt int, config string) Start {
	return Start{Name: name, Restarts: attempt, Reason: ReasonStandby, Config: config}
}
