package podsync

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// DefaultRootDir is actorlet's default --root-dir, which AppSpec assumes.
const DefaultRootDir = "/var/lib/actorlet"

// SpecOptions are the node's settings that shape container specs. They
// must agree with the manifest.ValidationOptions the pod was validated
// with: AppSpecWith fails, naming the field, for what they do not allow.
type SpecOptions struct {
	// RootDir is actorlet's state directory (--root-dir). A pod's
	// disk-backed emptyDir volumes are the directories
	// <RootDir>/pods/<uid>/volumes/empty-dir/<name> (see PodDirs). It must
	// be absolute when a container mounts such a volume.
	RootDir string
	// AllowHostPath lets containers mount hostPath volumes
	// (--allow-host-path).
	AllowHostPath bool
	// AllowPrivileged lets containers run privileged (--allow-privileged).
	AllowPrivileged bool
	// ReadFile reads Localhost seccomp profiles (under
	// <RootDir>/seccomp/), os.ReadFile in the agent: the plan does no I/O
	// itself. nil makes a container with such a profile fail to start
	// (CreateContainerConfigError).
	ReadFile func(name string) ([]byte, error)
	// HostIPs are the node's addresses (--node-ip, else found as the
	// kubelet finds them): status.hostIP(s), and status.podIP(s) of
	// hostNetwork pods. Empty: unknown (a fieldRef to them fails).
	HostIPs []string
	// Allocatable is the node's allocatable resources: a resourceFieldRef
	// to a limit a container does not set resolves to it. Empty: unknown.
	Allocatable v1.ResourceList
	// ReadVolumeFile reads the file name (relative) inside the volume
	// directory dir without leaving it, not even through a symbolic link
	// a container made there (volumeprep.ReadVolumeFile in the agent):
	// env valueFrom.fileKeyRef. nil makes a container with one fail to
	// start (CreateContainerConfigError).
	ReadVolumeFile func(dir, name string) ([]byte, error)
	// SecretsOnDisk keeps secret volumes (and projected volumes with a
	// secret source) on the disk of RootDir, under their 0700 parent,
	// rather than on a tmpfs mounted on each (the default when the agent
	// runs as root; see volumeprep.PrepareWith).
	SecretsOnDisk bool
}

// DownwardFor is what the downward API resolves for a pod on node with
// these options whose sandbox has address sandboxIP ("" when not known;
// a hostNetwork pod has the node's addresses).
func (o SpecOptions) DownwardFor(node string, pod *v1.Pod, sandboxIP string) Downward {
	return Downward{NodeName: node, HostIPs: o.HostIPs, PodIPs: PodIPsFor(pod, sandboxIP, o.HostIPs), Allocatable: o.Allocatable,
		RootDir: o.RootDir, ReadVolumeFile: o.ReadVolumeFile}
}

// CFS and shares constants, as the kubelet uses them.
const (
	cpuPeriod    = 100_000 // µs: the CFS period the kubelet sets
	minCPUQuota  = 1_000   // µs: the kernel's minimum quota (10m CPU)
	minShares    = 2
	maxShares    = 262_144
	sharesPerCPU = 1024
)

// GracePeriod is the pod's terminationGracePeriodSeconds (30 s when unset,
// as Kubernetes defaults it).
func GracePeriod(pod *v1.Pod) time.Duration {
	if pod == nil || pod.Spec.TerminationGracePeriodSeconds == nil {
		return 30 * time.Second
	}
	return time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
}

func meta(node string, pod *v1.Pod, name string, typ runtimeadapter.ContainerType, hash string, restarts int) runtimeadapter.Meta {
	return runtimeadapter.Meta{
		Node: node, PodUID: string(pod.UID), PodName: pod.Name, PodNamespace: pod.Namespace,
		ContainerName: name, Type: typ, Hash: hash, RestartCount: restarts,
		GracePeriod: GracePeriod(pod),
	}
}

// hostname is the pod's hostname as the kubelet makes it: spec.hostname,
// else the pod's name cut to the 63 characters a Linux hostname (and a
// DNS-1123 label) allows, without trailing '-' or '.'. spec.subdomain is
// not used: there is no cluster DNS to make the name a FQDN.
func hostname(pod *v1.Pod) string {
	if pod.Spec.Hostname != "" {
		return pod.Spec.Hostname
	}
	h := pod.Name
	if len(h) > 63 {
		h = strings.TrimRight(h[:63], "-.")
	}
	return h
}

// sharesPID: the pod's containers share one PID namespace, the sandbox's
// (shareProcessNamespace), as the kubelet shares it: the pause process
// is PID 1 and reaps the others' orphans.
func sharesPID(pod *v1.Pod) bool {
	return pod.Spec.ShareProcessNamespace != nil && *pod.Spec.ShareProcessNamespace
}

// SandboxSpec is the runtime spec of a pod's sandbox: the container that
// holds the pod's network namespace (the pause image), and its PID
// namespace with shareProcessNamespace (hostNetwork or not). On the pod network
// it has the pod's hostname and publishes every app container's ports that
// have a hostPort (app containers share its network namespace, so this is
// where Docker must bind them); with hostNetwork it has neither (the
// containers use the host's ports directly).
func SandboxSpec(node string, pod *v1.Pod, image string, attempt int) runtimeadapter.ContainerSpec {
	m := meta(node, pod, runtimeadapter.SandboxName, runtimeadapter.TypeSandbox, SandboxHash(pod), attempt)
	s := runtimeadapter.ContainerSpec{
		Name:   runtimeadapter.ContainerName(runtimeadapter.SandboxName, pod.Name, pod.Namespace, string(pod.UID), attempt),
		Image:  image,
		Labels: m.Labels(),
	}
	if sharesPID(pod) {
		s.PidMode = runtimeadapter.PidModePod
	}
	if pod.Spec.HostNetwork {
		s.NetworkMode = "host"
		return s
	}
	s.Hostname = hostname(pod)
	s.PortBindings = PortBindings(pod)
	return s
}

// PortBindings are the host ports a pod's sandbox publishes: one per port
// of an app container with a hostPort, in spec order, the protocol in
// lower case (TCP when unset). Nil with hostNetwork. Init containers' ports
// are not published, as with the kubelet.
func PortBindings(pod *v1.Pod) []runtimeadapter.PortBinding {
	if pod.Spec.HostNetwork {
		return nil
	}
	var out []runtimeadapter.PortBinding
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort == 0 {
				continue
			}
			proto := strings.ToLower(string(p.Protocol))
			if proto == "" {
				proto = "tcp"
			}
			out = append(out, runtimeadapter.PortBinding{
				HostIP: p.HostIP, HostPort: int(p.HostPort), ContainerPort: int(p.ContainerPort), Protocol: proto,
			})
		}
	}
	return out
}

// AppSpec is AppSpecWith with SpecOptions{RootDir: DefaultRootDir}: no
// hostPath volumes, no privileged containers. It is kept for callers that
// have no SpecOptions yet; it panics where AppSpecWith fails, which cannot
// happen for a pod manifest.Validate accepted.
//
// Deprecated: use AppSpecWith, which reports errors and honours the
// node's options.
func AppSpec(node string, pod *v1.Pod, c *v1.Container, sandboxID string, restarts int) runtimeadapter.ContainerSpec {
	s, err := AppSpecWith(SpecOptions{RootDir: DefaultRootDir}, node, pod, c, sandboxID, restarts)
	if err != nil {
		panic(fmt.Sprintf("podsync.AppSpec: %v (use AppSpecWith)", err))
	}
	return s
}

// AppSpecWith is the runtime spec of one app container c of pod, joining
// the network namespace of the sandbox sandboxID (or the host's, with
// hostNetwork). restarts is the container's restart count, which is also
// its attempt number in the runtime name. It is pure: the directories its
// mounts need are listed by PodDirs and made by volumeprep.Prepare.
//
// It maps, as the kubelet does:
//   - the sandbox's network namespace (else the host's, with
//     hostNetwork) and, with shareProcessNamespace, its PID namespace;
//   - command, args (with $(VAR) references to the container's env
//     expanded), workingDir;
//   - env: values (expanded with the variables defined before them) and
//     valueFrom.fieldRef of metadata.name, metadata.namespace, metadata.uid,
//     metadata.labels['<key>'], metadata.annotations['<key>'],
//     spec.nodeName (node), spec.serviceAccountName, status.hostIP(s)
//     (opts.HostIPs) and status.podIP(s) (empty: AppSpecWith does not know
//     the sandbox's address, AppSpecFor does; a hostNetwork pod has
//     opts.HostIPs), and valueFrom.resourceFieldRef (opts.Allocatable for
//     an unset limit);
//   - volumeMounts of emptyDir volumes (a bind mount of the pod's
//     directory, or with medium Memory a tmpfs of sizeLimit) and hostPath
//     volumes (a bind mount of the path; opts.AllowHostPath only), with
//     readOnly and subPath, and of downwardAPI and projected volumes (a
//     read-only bind mount of the directory volumeprep writes, see
//     DownwardAPIPath);
//   - resources: limits.memory → memory limit (no swap), limits.cpu → CFS
//     quota per 100 ms period (at least 1 ms), each limit not set being
//     the pod-level one (effectiveLimits), requests.cpu (else the
//     container's limits.cpu) → CPU shares, milliCPU × 1024 / 1000 in
//     [2, 262144];
//   - securityContext (the container's, else the pod's runAsUser and
//     runAsGroup): user "uid[:gid]", the pod's fsGroup and
//     supplementalGroups as supplemental groups (see supplementalGroups), readOnlyRootFilesystem, privileged
//     (opts.AllowPrivileged only), capabilities add/drop,
//     allowPrivilegeEscalation: false → no-new-privileges.
//
// Errors name the container and field; every one is also a
// manifest.ValidateWith error, so a validated pod (with matching options)
// never fails here.
func AppSpecWith(opts SpecOptions, node string, pod *v1.Pod, c *v1.Container, sandboxID string, restarts int) (runtimeadapter.ContainerSpec, error) {
	return AppSpecFor(opts, opts.DownwardFor(node, pod, ""), pod, c, sandboxID, restarts)
}

// AppSpecFor is AppSpecWith with what the downward API resolves beyond
// the pod: d.NodeName is the node, d.HostIPs, d.PodIPs and d.Allocatable
// resolve env fieldRefs status.hostIP(s) and status.podIP(s) and env
// resourceFieldRefs (see Downward.FieldRef and Downward.ResourceFieldRef).
func AppSpecFor(opts SpecOptions, d Downward, pod *v1.Pod, c *v1.Container, sandboxID string, restarts int) (runtimeadapter.ContainerSpec, error) {
	node := d.NodeName
	m := meta(node, pod, c.Name, runtimeadapter.TypeApp, ContainerHash(c), restarts)
	s := runtimeadapter.ContainerSpec{
		Name:       runtimeadapter.ContainerName(c.Name, pod.Name, pod.Namespace, string(pod.UID), restarts),
		Image:      c.Image,
		WorkingDir: c.WorkingDir,
		Labels:     m.Labels(),
	}
	if pod.Spec.HostNetwork {
		s.NetworkMode = "host"
	} else {
		s.NetworkMode = "container:" + sandboxID
	}
	if sharesPID(pod) {
		s.PidMode = "container:" + sandboxID
	}
	env, vars, err := containerEnv(d, pod, c)
	if err != nil {
		return runtimeadapter.ContainerSpec{}, fmt.Errorf("container %q: %w", c.Name, err)
	}
	s.Env = env
	s.Entrypoint = expandAll(c.Command, vars)
	s.Cmd = expandAll(c.Args, vars)
	if s.Mounts, err = mounts(opts, pod, c); err != nil {
		return runtimeadapter.ContainerSpec{}, fmt.Errorf("container %q: %w", c.Name, err)
	}
	s.Resources = resources(pod, c)
	if err := applySecurity(opts, pod, c, &s); err != nil {
		return runtimeadapter.ContainerSpec{}, fmt.Errorf("container %q: %w", c.Name, err)
	}
	return s, nil
}

// resources maps c's resources as the kubelet does (see AppSpecWith);
// a cpu or memory limit c does not set is the pod's (pod-level
// spec.resources.limits), which the kubelet puts on the pod's cgroup
// instead: see effectiveLimits.
func resources(pod *v1.Pod, c *v1.Container) runtimeadapter.Resources {
	var r runtimeadapter.Resources
	limits := effectiveLimits(pod, c)
	if q, ok := limits[v1.ResourceMemory]; ok {
		r.MemoryBytes = q.Value()
	}
	if q, ok := limits[v1.ResourceCPU]; ok && !q.IsZero() {
		r.CPUPeriod = cpuPeriod
		r.CPUQuota = max(q.MilliValue()*cpuPeriod/1000, minCPUQuota)
	}
	req, ok := c.Resources.Requests[v1.ResourceCPU]
	if !ok {
		req, ok = c.Resources.Limits[v1.ResourceCPU]
	}
	if ok {
		r.CPUShares = min(max(req.MilliValue()*sharesPerCPU/1000, minShares), maxShares)
	}
	return r
}

// effectiveLimits are c's limits, with the pod-level limit of cpu and
// memory where c sets none. The kubelet bounds the pod's containers
// together with a pod cgroup of those limits; actorlet, on Docker's
// per-container cgroups, bounds each such container by the whole pod
// limit (so their sum may exceed it: see the README).
func effectiveLimits(pod *v1.Pod, c *v1.Container) v1.ResourceList {
	if pod.Spec.Resources == nil || len(pod.Spec.Resources.Limits) == 0 {
		return c.Resources.Limits
	}
	out := c.Resources.Limits.DeepCopy()
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
		if q, ok := pod.Spec.Resources.Limits[name]; ok {
			if _, own := out[name]; !own {
				if out == nil {
					out = v1.ResourceList{}
				}
				out[name] = q
			}
		}
	}
	return out
}

// applySecurity sets s's user and security settings from c's security
// context, with the pod's runAsUser and runAsGroup as defaults, and its
// seccomp and AppArmor profiles (see seccompProfile, appArmorProfile).
func applySecurity(opts SpecOptions, pod *v1.Pod, c *v1.Container, s *runtimeadapter.ContainerSpec) error {
	var psc v1.PodSecurityContext
	if pod.Spec.SecurityContext != nil {
		psc = *pod.Spec.SecurityContext
	}
	var sc v1.SecurityContext
	if c.SecurityContext != nil {
		sc = *c.SecurityContext
	}
	uid, gid := sc.RunAsUser, sc.RunAsGroup
	if uid == nil {
		uid = psc.RunAsUser
	}
	if gid == nil {
		gid = psc.RunAsGroup
	}
	switch {
	case uid != nil && gid != nil:
		s.User = strconv.FormatInt(*uid, 10) + ":" + strconv.FormatInt(*gid, 10)
	case uid != nil:
		s.User = strconv.FormatInt(*uid, 10)
	case gid != nil:
		return fmt.Errorf("securityContext.runAsGroup %d needs runAsUser: Docker cannot set only the group", *gid)
	}
	if sc.Privileged != nil && *sc.Privileged {
		if !opts.AllowPrivileged {
			return fmt.Errorf("securityContext.privileged: privileged containers are not allowed on this node (--allow-privileged)")
		}
		s.Privileged = true
	}
	s.GroupAdd = supplementalGroups(psc)
	s.ReadOnlyRootfs = sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem
	s.NoNewPrivileges = sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation
	if caps := sc.Capabilities; caps != nil {
		for _, a := range caps.Add {
			s.CapAdd = append(s.CapAdd, string(a))
		}
		for _, d := range caps.Drop {
			s.CapDrop = append(s.CapDrop, string(d))
		}
	}
	var err error
	if s.Seccomp, err = seccompProfile(opts, pod, c); err != nil {
		return err
	}
	s.AppArmor, err = appArmorProfile(pod, c)
	return err
}

// supplementalGroups are the groups the kubelet adds to every container's
// processes: the pod's fsGroup, then its supplementalGroups, each once.
// The runtime adds those the image's /etc/group gives the user
// (supplementalGroupsPolicy Merge; Strict is refused at validation).
func supplementalGroups(psc v1.PodSecurityContext) []int64 {
	var out []int64
	if psc.FSGroup != nil {
		out = append(out, *psc.FSGroup)
	}
	for _, g := range psc.SupplementalGroups {
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}
