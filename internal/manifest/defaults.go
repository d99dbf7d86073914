package manifest

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults that SetDefaults applies, as the Kubernetes API server does
// (k8s.io/api ships no defaulting code, so actorlet applies them by hand).
const (
	// DefaultNamespace is metadata.namespace when a manifest has none.
	DefaultNamespace = metav1.NamespaceDefault
	// DefaultTerminationGracePeriodSeconds is
	// spec.terminationGracePeriodSeconds (in seconds) when unset.
	DefaultTerminationGracePeriodSeconds = int64(v1.DefaultTerminationGracePeriodSeconds)

	defaultTerminationMessagePath = v1.TerminationMessagePathDefault // "/dev/termination-log"
	defaultProbeTimeoutSeconds    = int32(1)
	defaultProbePeriodSeconds     = int32(10)
	defaultProbeSuccessThreshold  = int32(1)
	defaultProbeFailureThreshold  = int32(3)
	defaultHTTPGetPath            = "/"
	defaultFieldRefAPIVersion     = "v1"
	defaultGRPCService            = ""
	latestTag                     = "latest"
)

// SetDefaults fills the fields of pod that Kubernetes defaults when a pod is
// created, so that a manifest means the same to actorlet as to a kubelet.
// Fields already set are kept; it is idempotent.
//
// Pod: metadata.namespace "default"; spec.restartPolicy Always;
// spec.dnsPolicy ClusterFirst; spec.terminationGracePeriodSeconds 30 (s);
// spec.schedulerName "default-scheduler"; spec.securityContext {};
// spec.enableServiceLinks true.
//
// Every container (init, app and ephemeral): terminationMessagePath
// "/dev/termination-log"; terminationMessagePolicy File; imagePullPolicy
// Always when the image's tag is "latest" or it has neither tag nor digest,
// else IfNotPresent; ports[].protocol TCP, and ports[].hostPort =
// containerPort when spec.hostNetwork is true; resources.requests copied
// from resources.limits for each resource without a request;
// env[].valueFrom.fieldRef.apiVersion "v1"; liveness, readiness and startup
// probes: timeoutSeconds 1, periodSeconds 10, successThreshold 1,
// failureThreshold 3, httpGet path "/" and scheme HTTP, grpc service "";
// lifecycle postStart/preStop httpGet path "/" and scheme HTTP.
//
// Volume sources are not defaulted here: a volume without a source is run
// as an emptyDir, as Kubernetes defaults it (see podsync).
func SetDefaults(pod *v1.Pod) {
	if pod.Namespace == "" {
		pod.Namespace = DefaultNamespace
	}
	spec := &pod.Spec
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = v1.RestartPolicyAlways
	}
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = v1.DNSClusterFirst
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptr(DefaultTerminationGracePeriodSeconds)
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = v1.DefaultSchedulerName
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &v1.PodSecurityContext{}
	}
	if spec.EnableServiceLinks == nil {
		spec.EnableServiceLinks = ptr(v1.DefaultEnableServiceLinks)
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i], spec.HostNetwork)
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i], spec.HostNetwork)
	}
	for i := range spec.EphemeralContainers {
		defaultContainer((*v1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon), spec.HostNetwork)
	}
	for i := range spec.Volumes {
		defaultDownwardVolume(&spec.Volumes[i])
	}
}

// defaultDownwardVolume defaults a downwardAPI, configMap, secret or
// projected volume as Kubernetes does: defaultMode 0644, each item's
// fieldRef.apiVersion v1.
func defaultDownwardVolume(vol *v1.Volume) {
	items := func(list []v1.DownwardAPIVolumeFile) {
		for i := range list {
			if fr := list[i].FieldRef; fr != nil && fr.APIVersion == "" {
				fr.APIVersion = defaultFieldRefAPIVersion
			}
		}
	}
	if d := vol.DownwardAPI; d != nil {
		if d.DefaultMode == nil {
			d.DefaultMode = ptr(v1.DownwardAPIVolumeSourceDefaultMode)
		}
		items(d.Items)
	}
	if c := vol.ConfigMap; c != nil && c.DefaultMode == nil {
		c.DefaultMode = ptr(v1.ConfigMapVolumeSourceDefaultMode)
	}
	if sv := vol.Secret; sv != nil && sv.DefaultMode == nil {
		sv.DefaultMode = ptr(v1.SecretVolumeSourceDefaultMode)
	}
	if p := vol.Projected; p != nil {
		if p.DefaultMode == nil {
			p.DefaultMode = ptr(v1.ProjectedVolumeSourceDefaultMode)
		}
		for _, src := range p.Sources {
			if src.DownwardAPI != nil {
				items(src.DownwardAPI.Items)
			}
		}
	}
}

func defaultContainer(c *v1.Container, hostNetwork bool) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = defaultPullPolicy(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = defaultTerminationMessagePath
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = v1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		p := &c.Ports[i]
		if p.Protocol == "" {
			p.Protocol = v1.ProtocolTCP
		}
		if hostNetwork && p.HostPort == 0 {
			p.HostPort = p.ContainerPort
		}
	}
	if c.Resources.Limits != nil {
		if c.Resources.Requests == nil {
			c.Resources.Requests = v1.ResourceList{}
		}
		for name, limit := range c.Resources.Limits {
			if _, ok := c.Resources.Requests[name]; !ok {
				c.Resources.Requests[name] = limit.DeepCopy()
			}
		}
	}
	for i := range c.Env {
		if vf := c.Env[i].ValueFrom; vf != nil && vf.FieldRef != nil && vf.FieldRef.APIVersion == "" {
			vf.FieldRef.APIVersion = defaultFieldRefAPIVersion
		}
	}
	for _, p := range []*v1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		defaultProbe(p)
	}
	if c.Lifecycle != nil {
		for _, h := range []*v1.LifecycleHandler{c.Lifecycle.PostStart, c.Lifecycle.PreStop} {
			if h != nil {
				defaultHTTPGet(h.HTTPGet)
			}
		}
	}
}

func defaultProbe(p *v1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = defaultProbeTimeoutSeconds
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = defaultProbePeriodSeconds
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = defaultProbeSuccessThreshold
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = defaultProbeFailureThreshold
	}
	defaultHTTPGet(p.HTTPGet)
	if p.GRPC != nil && p.GRPC.Service == nil {
		p.GRPC.Service = ptr(defaultGRPCService)
	}
}

func defaultHTTPGet(h *v1.HTTPGetAction) {
	if h == nil {
		return
	}
	if h.Path == "" {
		h.Path = defaultHTTPGetPath
	}
	if h.Scheme == "" {
		h.Scheme = v1.URISchemeHTTP
	}
}

// defaultPullPolicy is Always for a ":latest" image or one with neither tag
// nor digest (the runtime reads that as :latest), IfNotPresent otherwise.
func defaultPullPolicy(image string) v1.PullPolicy {
	name, _, hasDigest := strings.Cut(image, "@")
	tag := ""
	// A tag follows the last ':' after the last '/'; an earlier ':' is a
	// registry port ("localhost:5000/web").
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		tag = name[i+1:]
	}
	if tag == latestTag || (tag == "" && !hasDigest) {
		return v1.PullAlways
	}
	return v1.PullIfNotPresent
}

func ptr[T any](v T) *T { return &v }
