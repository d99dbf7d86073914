package manifest

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	restartPolicies = []v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever}
	// An app container's own restartPolicy (Kubernetes' ContainerRestartRules).
	containerRestartPolicies = []v1.ContainerRestartPolicy{v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyOnFailure, v1.ContainerRestartPolicyNever}
	dnsPolicies              = []v1.DNSPolicy{v1.DNSClusterFirst, v1.DNSClusterFirstWithHostNet, v1.DNSDefault, v1.DNSNone}
	pullPolicies             = []v1.PullPolicy{v1.PullAlways, v1.PullIfNotPresent, v1.PullNever}
	protocols                = []v1.Protocol{v1.ProtocolTCP, v1.ProtocolUDP, v1.ProtocolSCTP}
	termMsgPolicies          = []v1.TerminationMessagePolicy{v1.TerminationMessageReadFile, v1.TerminationMessageFallbackToLogsOnError}
)

// ValidationOptions are the node operator's choices that decide whether
// some fields are allowed. The zero value is the strict default.
type ValidationOptions struct {
	// AllowPrivileged allows securityContext.privileged: true
	// (--allow-privileged).
	AllowPrivileged bool
	// AllowHostPath allows hostPath volumes (--allow-host-path).
	AllowHostPath bool
	// AppArmor says whether the host has AppArmor enabled, which a
	// Localhost AppArmor profile needs; nil reads it from the host
	// (HostAppArmor).
	AppArmor *bool
}

// Validate is ValidateWith with the strict ValidationOptions{}: no
// privileged containers, no hostPath volumes.
func Validate(pod *v1.Pod) (warnings []string, err error) {
	return ValidateWith(pod, ValidationOptions{})
}

// ValidateWith checks a pod that went through SetDefaults (an undefaulted
// pod fails: e.g. its restartPolicy is empty).
//
// err aggregates one field.Error per problem, each naming its field path,
// e.g. "spec.containers[0].image: Required value"; it is nil when the pod
// is valid. It is a utilerrors.Aggregate holding every error; its message
// shows the first 50 (each cut at 1 KiB) and how many more there are, and
// takes time linear in their number. The checks: metadata.name is a DNS-1123 subdomain,
// metadata.namespace a DNS-1123 label, labels and annotations are valid;
// at least one container; container names are DNS-1123 labels, unique
// across init and app containers; image is set; restartPolicy is Always,
// OnFailure or Never; dnsPolicy, imagePullPolicy and
// terminationMessagePolicy are known values; terminationGracePeriodSeconds
// ≥ 0; spec.hostname is a DNS-1123 label.
//
// Ports: containerPort is 1–65535, hostPort 0–65535 (and equal to
// containerPort under hostNetwork) with no (hostIP, hostPort, protocol)
// used twice in the pod, hostIP an IP address, protocol TCP, UDP or SCTP,
// port names valid and unique per container.
//
// Env: names are printable ASCII without '=' (Kubernetes' relaxed rule); a
// valueFrom excludes value; fieldRef has apiVersion v1 and a fieldPath
// actorlet resolves: metadata.name, metadata.namespace, metadata.uid,
// metadata.labels['<key>'], metadata.annotations['<key>'], spec.nodeName,
// spec.serviceAccountName, status.podIP(s), status.hostIP(s); a
// resourceFieldRef names limits. or requests. cpu, memory or
// ephemeral-storage, with a divisor Kubernetes accepts.
//
// downwardAPI volumes (and projected ones' downwardAPI sources): item
// paths relative, without '..', unique; each item one fieldRef
// (metadata.name, namespace, uid, labels, annotations, or one label or
// annotation) or resourceFieldRef (containerName required, of the pod);
// modes within 0777. configMap and secret volumes (and projected ones'
// configMap and secret sources): a name, items with a valid key and a
// unique relative path, modes within 0777 (validateObjectVolume). env's
// configMapKeyRef and secretKeyRef name an object and a key; envFrom
// names one ConfigMap or Secret, with a valid prefix.
//
// Volumes: names are unique DNS-1123 labels, each volume has at most one
// source (none means emptyDir, as Kubernetes defaults it); emptyDir medium
// is "" or Memory with sizeLimit ≥ 0 (on disk it is not enforced: a
// warning); a Memory emptyDir is a tmpfs private to one container, so it
// may be mounted once only (a warning says its contents do not survive a
// restart); hostPath (opts.AllowHostPath only) has an absolute path
// without ".." and a known type. Mounts name a volume, mountPath is
// absolute, not "/" and unique per container, subPath relative without
// ".." (none on a Memory emptyDir).
//
// Resources: limits of cpu and memory (memory 0 or ≥ 6Mi, Docker's
// minimum) and requests of cpu, memory and ephemeral-storage, all ≥ 0,
// requests ≤ limits; an ephemeral-storage limit is not enforced (a
// warning); other resources (hugepages, extended resources) are Forbidden.
//
// Security: runAsUser and runAsGroup (container's, else the pod's) are
// valid IDs and runAsGroup needs a runAsUser; runAsNonRoot needs a
// runAsUser other than 0 (actorlet does not read the image's user);
// capabilities are known Linux capabilities or ALL; privileged needs
// opts.AllowPrivileged; allowPrivilegeEscalation false excludes privileged
// and an added SYS_ADMIN. seccomp and AppArmor profiles and the AppArmor
// annotations are checked by validateSecurityProfiles; the seccomp
// annotations removed in Kubernetes 1.27 are Forbidden.
//
// Fields actorlet does not honour are looked up in its support table
// (support.go): setting one whose neglect would change what runs or weaken
// isolation is an error ("<path>: Forbidden: not supported by actorlet"),
// any other gives a warning ("<path>: ignored by actorlet"); a field the
// operator has not allowed is an error too ("<path>: Forbidden: not
// allowed on this node: ..."). Warnings are returned whether or not err is
// nil.
func ValidateWith(pod *v1.Pod, opts ValidationOptions) (warnings []string, err error) {
	errs := validateMeta(pod)
	warnings, specErrs := validateSpec(&pod.Spec, field.NewPath("spec"))
	errs = append(errs, specErrs...)
	appArmor := HostAppArmor
	if opts.AppArmor != nil {
		appArmor = func() bool { return *opts.AppArmor }
	}
	errs = append(errs, validateSecurityProfiles(pod, appArmor())...)
	w, unsupported := checkSupport(pod, opts)
	warnings = append(warnings, w...)
	errs = append(errs, unsupported...)
	return warnings, aggregateFields(errs)
}

func validateMeta(pod *v1.Pod) field.ErrorList {
	var errs field.ErrorList
	meta := field.NewPath("metadata")
	if pod.Name == "" {
		errs = append(errs, field.Required(meta.Child("name"), ""))
	} else {
		errs = append(errs, invalid(meta.Child("name"), pod.Name, validation.IsDNS1123Subdomain(pod.Name))...)
	}
	if pod.Namespace == "" {
		errs = append(errs, field.Required(meta.Child("namespace"), ""))
	} else {
		errs = append(errs, invalid(meta.Child("namespace"), pod.Namespace, validation.IsDNS1123Label(pod.Namespace))...)
	}
	errs = append(errs, metavalidation.ValidateLabels(pod.Labels, meta.Child("labels"))...)
	errs = append(errs, apivalidation.ValidateAnnotations(pod.Annotations, meta.Child("annotations"))...)
	return errs
}

func validateSpec(spec *v1.PodSpec, path *field.Path) (warnings []string, errs field.ErrorList) {
	if len(spec.Containers) == 0 {
		errs = append(errs, field.Required(path.Child("containers"), "a pod needs at least one container"))
	}
	names := sets.New[string]()
	hostPorts := sets.New[string]()
	for i := range spec.InitContainers {
		errs = append(errs, validateContainer(&spec.InitContainers[i], spec.HostNetwork, names, hostPorts, path.Child("initContainers").Index(i))...)
		ic := &spec.InitContainers[i]
		if rp := ic.RestartPolicy; rp != nil && *rp != v1.ContainerRestartPolicyAlways {
			errs = append(errs, field.NotSupported(path.Child("initContainers").Index(i).Child("restartPolicy"), *rp, []string{string(v1.ContainerRestartPolicyAlways)}))
		}
		sidecar := ic.RestartPolicy != nil && *ic.RestartPolicy == v1.ContainerRestartPolicyAlways
		for name, p := range map[string]*v1.Probe{"livenessProbe": ic.LivenessProbe, "readinessProbe": ic.ReadinessProbe, "startupProbe": ic.StartupProbe} {
			if p != nil && !sidecar { // sidecars are probed as app containers are
				errs = append(errs, field.Forbidden(path.Child("initContainers").Index(i).Child(name), "may not be set for init containers"))
			}
		}
	}
	for i := range spec.Containers {
		errs = append(errs, validateContainer(&spec.Containers[i], spec.HostNetwork, names, hostPorts, path.Child("containers").Index(i))...)
		if rp := spec.Containers[i].RestartPolicy; rp != nil && !slices.Contains(containerRestartPolicies, *rp) {
			errs = append(errs, field.NotSupported(path.Child("containers").Index(i).Child("restartPolicy"), *rp, containerRestartPolicies))
		}
	}
	errs = append(errs, validateRestartRules(spec, path)...)
	if !slices.Contains(restartPolicies, spec.RestartPolicy) {
		errs = append(errs, field.NotSupported(path.Child("restartPolicy"), spec.RestartPolicy, restartPolicies))
	}
	if !slices.Contains(dnsPolicies, spec.DNSPolicy) {
		errs = append(errs, field.NotSupported(path.Child("dnsPolicy"), spec.DNSPolicy, dnsPolicies))
	}
	if g := spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		errs = append(errs, field.Invalid(path.Child("terminationGracePeriodSeconds"), *g, "must be greater than or equal to 0"))
	}
	if spec.Hostname != "" {
		errs = append(errs, invalid(path.Child("hostname"), spec.Hostname, validation.IsDNS1123Label(spec.Hostname))...)
	}
	w, e := validateVolumes(spec, path)
	warnings, errs = append(warnings, w...), append(errs, e...)
	w, e = validateResources(spec, path)
	warnings, errs = append(warnings, w...), append(errs, e...)
	errs = append(errs, validateFileKeyRefs(spec, path)...)
	errs = append(errs, validateSecurity(spec, path)...)
	return warnings, errs
}

// validateContainer checks one container. names collects container names
// and hostPorts "<port>/<protocol>" across the pod, to find duplicates.
func validateContainer(c *v1.Container, hostNetwork bool, names, hostPorts sets.Set[string], path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case c.Name == "":
		errs = append(errs, field.Required(path.Child("name"), ""))
	case names.Has(c.Name):
		errs = append(errs, field.Duplicate(path.Child("name"), c.Name))
	default:
		errs = append(errs, invalid(path.Child("name"), c.Name, validation.IsDNS1123Label(c.Name))...)
	}
	names.Insert(c.Name)

	switch {
	case strings.TrimSpace(c.Image) == "":
		errs = append(errs, field.Required(path.Child("image"), ""))
	case c.Image != strings.TrimSpace(c.Image):
		errs = append(errs, field.Invalid(path.Child("image"), c.Image, "must not have leading or trailing whitespace"))
	}
	if !slices.Contains(pullPolicies, c.ImagePullPolicy) {
		errs = append(errs, field.NotSupported(path.Child("imagePullPolicy"), c.ImagePullPolicy, pullPolicies))
	}
	if !slices.Contains(termMsgPolicies, c.TerminationMessagePolicy) {
		errs = append(errs, field.NotSupported(path.Child("terminationMessagePolicy"), c.TerminationMessagePolicy, termMsgPolicies))
	}

	portNames := sets.New[string]()
	for i, p := range c.Ports {
		pp := path.Child("ports").Index(i)
		if p.Name != "" {
			errs = append(errs, invalid(pp.Child("name"), p.Name, validation.IsValidPortName(p.Name))...)
			if portNames.Has(p.Name) {
				errs = append(errs, field.Duplicate(pp.Child("name"), p.Name))
			}
			portNames.Insert(p.Name)
		}
		errs = append(errs, invalid(pp.Child("containerPort"), p.ContainerPort, validation.IsValidPortNum(int(p.ContainerPort)))...)
		if p.HostPort != 0 {
			errs = append(errs, invalid(pp.Child("hostPort"), p.HostPort, validation.IsValidPortNum(int(p.HostPort)))...)
			if hostNetwork && p.HostPort != p.ContainerPort {
				errs = append(errs, field.Invalid(pp.Child("hostPort"), p.HostPort, "must match containerPort when hostNetwork is true"))
			}
			key := fmt.Sprintf("%s/%d/%s", p.HostIP, p.HostPort, p.Protocol)
			if hostPorts.Has(key) {
				errs = append(errs, field.Duplicate(pp.Child("hostPort"), fmt.Sprintf("%d/%s", p.HostPort, p.Protocol)))
			}
			hostPorts.Insert(key)
		}
		if p.HostIP != "" {
			errs = append(errs, validation.IsValidIPForLegacyField(pp.Child("hostIP"), p.HostIP, true, nil)...)
		}
		if !slices.Contains(protocols, p.Protocol) {
			errs = append(errs, field.NotSupported(pp.Child("protocol"), p.Protocol, protocols))
		}
	}

	for i, e := range c.Env {
		ep := path.Child("env").Index(i)
		errs = append(errs, invalid(ep.Child("name"), e.Name, validation.IsRelaxedEnvVarName(e.Name))...)
		errs = append(errs, validateEnvSource(e, ep)...)
	}
	errs = append(errs, validateEnvFrom(c.EnvFrom, path.Child("envFrom"))...)
	return errs
}

// invalid turns the messages of a validation.IsX check into at most one
// field error.
func invalid(path *field.Path, value any, msgs []string) field.ErrorList {
	if len(msgs) == 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(path, value, strings.Join(msgs, "; "))}
}
