package manifest

import (
	"fmt"
	"path"
	"reflect"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	resourcehelper "k8s.io/component-helpers/resource"
)

// This file checks the values of the fields actorlet runs beyond names,
// images and ports: env sources, volumes and mounts, resources and
// security contexts (see ValidateWith). What is checked here agrees with
// what internal/podsync builds: a pod ValidateWith accepts is one podsync
// can run with the same options.

// minMemoryLimit is Docker's minimum memory limit (6 MiB).
const minMemoryLimit = 6 << 20

// Env fieldRef paths actorlet resolves (podsync.Downward.FieldRef),
// besides metadata.labels['<key>'] and metadata.annotations['<key>'].
var fieldRefPaths = []string{
	"metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
	"status.podIP", "status.podIPs", "status.hostIP", "status.hostIPs",
}

// resourceFieldNames are the resources a resourceFieldRef may name
// (podsync.Downward.ResourceFieldRef); Kubernetes also knows hugepages-*.
var resourceFieldNames = []string{
	"limits.cpu", "limits.memory", "limits.ephemeral-storage",
	"requests.cpu", "requests.memory", "requests.ephemeral-storage",
}

// Divisors Kubernetes accepts: for CPU, 1m and 1; for memory and
// ephemeral storage, 1 and the decimal and binary powers up to E and Ei.
var (
	cpuDivisors    = []string{"1m", "1"}
	memoryDivisors = []string{"1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"}
)

var (
	hostPathTypes = []v1.HostPathType{
		v1.HostPathUnset, v1.HostPathDirectoryOrCreate, v1.HostPathDirectory, v1.HostPathFileOrCreate,
		v1.HostPathFile, v1.HostPathSocket, v1.HostPathCharDev, v1.HostPathBlockDev,
	}
	emptyDirMedia = []v1.StorageMedium{v1.StorageMediumDefault, v1.StorageMediumMemory}
)

// capabilities are the Linux capabilities (capabilities(7)), without the
// CAP_ prefix.
var capabilities = sets.New(
	"CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID",
	"SETPCAP", "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW",
	"IPC_LOCK", "IPC_OWNER", "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT",
	"SYS_ADMIN", "SYS_BOOT", "SYS_NICE", "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD",
	"LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP", "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG",
	"WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF", "CHECKPOINT_RESTORE",
)

// podContainer is one init or app container with its field path.
type podContainer struct {
	c    *v1.Container
	path *field.Path
	init bool // an init container (sidecars included)
}

func podContainers(spec *v1.PodSpec, p *field.Path) []podContainer {
	var out []podContainer
	for i := range spec.InitContainers {
		out = append(out, podContainer{&spec.InitContainers[i], p.Child("initContainers").Index(i), true})
	}
	for i := range spec.Containers {
		out = append(out, podContainer{&spec.Containers[i], p.Child("containers").Index(i), false})
	}
	return out
}

// validateEnvSource checks an env var's valueFrom (its kinds other than
// fieldRef and resourceFieldRef are rejected by the support table).
func validateEnvSource(e v1.EnvVar, p *field.Path) field.ErrorList {
	vf := e.ValueFrom
	if vf == nil {
		return nil
	}
	var errs field.ErrorList
	vp := p.Child("valueFrom")
	if e.Value != "" {
		errs = append(errs, field.Invalid(vp, "", "may not be specified when `value` is not empty"))
	}
	n := 0
	for _, set := range []bool{vf.FieldRef != nil, vf.ResourceFieldRef != nil, vf.ConfigMapKeyRef != nil, vf.SecretKeyRef != nil, vf.FileKeyRef != nil} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		errs = append(errs, field.Invalid(vp, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`"))
	case n > 1:
		errs = append(errs, field.Invalid(vp, "", "may not have more than one field specified at a time"))
	}
	if fr := vf.FieldRef; fr != nil {
		fp := vp.Child("fieldRef")
		if fr.APIVersion != "v1" {
			errs = append(errs, field.NotSupported(fp.Child("apiVersion"), fr.APIVersion, []string{"v1"}))
		}
		errs = append(errs, validateFieldPath(fr.FieldPath, fp.Child("fieldPath"))...)
	}
	if r := vf.ConfigMapKeyRef; r != nil {
		errs = append(errs, validateKeyRef(r.Name, r.Key, vp.Child("configMapKeyRef"))...)
	}
	if r := vf.SecretKeyRef; r != nil {
		errs = append(errs, validateKeyRef(r.Name, r.Key, vp.Child("secretKeyRef"))...)
	}
	if rf := vf.ResourceFieldRef; rf != nil {
		errs = append(errs, validateResourceField(rf, vp.Child("resourceFieldRef"), false)...)
	}
	return errs
}

// Limits of Kubernetes' validation of restartPolicyRules.
const (
	maxRestartRules     = 20
	maxRestartRuleCodes = 255
)

// validateRestartRules checks each container's restartPolicyRules
// (Kubernetes' ContainerRestartRules and RestartAllContainers) as
// Kubernetes does, and refuses by name what actorlet does not do: the
// action Restart on an init container (sidecars included; their action
// RestartAllContainers is honoured). An app container with rules sets its
// restartPolicy.
func validateRestartRules(spec *v1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, pc := range podContainers(spec, p) {
		rules := pc.c.RestartPolicyRules
		if len(rules) == 0 {
			continue
		}
		rp := pc.path.Child("restartPolicyRules")
		init := pc.init
		switch {
		case len(rules) > maxRestartRules:
			errs = append(errs, field.TooMany(rp, len(rules), maxRestartRules))
		case !init && pc.c.RestartPolicy == nil:
			errs = append(errs, field.Required(pc.path.Child("restartPolicy"), "must be set when restartPolicyRules are"))
		}
		for i, r := range rules {
			ip := rp.Index(i)
			switch r.Action {
			case v1.ContainerRestartRuleActionRestart:
				if init {
					errs = append(errs, field.Forbidden(ip.Child("action"), notSupported+": only app containers' rules are applied"))
				}
			case v1.ContainerRestartRuleActionRestartAllContainers:
			case "":
				errs = append(errs, field.Required(ip.Child("action"), ""))
			default:
				errs = append(errs, field.NotSupported(ip.Child("action"), r.Action, []string{string(v1.ContainerRestartRuleActionRestart), string(v1.ContainerRestartRuleActionRestartAllContainers)}))
			}
			ep := ip.Child("exitCodes")
			switch e := r.ExitCodes; {
			case e == nil:
				errs = append(errs, field.Required(ep, "must be specified"))
			case e.Operator != v1.ContainerRestartRuleOnExitCodesOpIn && e.Operator != v1.ContainerRestartRuleOnExitCodesOpNotIn:
				errs = append(errs, field.NotSupported(ep.Child("operator"), e.Operator, []string{string(v1.ContainerRestartRuleOnExitCodesOpIn), string(v1.ContainerRestartRuleOnExitCodesOpNotIn)}))
			case len(e.Values) > maxRestartRuleCodes:
				errs = append(errs, field.TooMany(ep.Child("values"), len(e.Values), maxRestartRuleCodes))
			default:
				seen := sets.New[int32]()
				for j, v := range e.Values {
					if seen.Has(v) {
						errs = append(errs, field.Duplicate(ep.Child("values").Index(j), v))
					}
					seen.Insert(v)
				}
			}
		}
	}
	return errs
}

// validateFileKeyRefs checks each env valueFrom.fileKeyRef (Kubernetes'
// EnvFiles) as Kubernetes does: a volumeName naming an emptyDir volume of
// the pod (on disk: a Memory one is a tmpfs of each container's, which
// actorlet cannot read), a relative path within it, a key that is a
// variable name.
func validateFileKeyRefs(spec *v1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, pc := range podContainers(spec, p) {
		for i, e := range pc.c.Env {
			if e.ValueFrom == nil || e.ValueFrom.FileKeyRef == nil {
				continue
			}
			r, fp := e.ValueFrom.FileKeyRef, pc.path.Child("env").Index(i).Child("valueFrom", "fileKeyRef")
			vol := volumeNamed(spec, r.VolumeName)
			switch {
			case r.VolumeName == "":
				errs = append(errs, field.Required(fp.Child("volumeName"), ""))
			case vol == nil:
				errs = append(errs, field.NotFound(fp.Child("volumeName"), r.VolumeName))
			case vol.EmptyDir == nil && vol.VolumeSource != (v1.VolumeSource{}):
				errs = append(errs, field.Invalid(fp.Child("volumeName"), r.VolumeName, "must be an emptyDir volume"))
			case isMemoryEmptyDir(vol):
				errs = append(errs, field.Forbidden(fp.Child("volumeName"), notSupported+": a Memory emptyDir is a tmpfs actorlet cannot read: use one on disk"))
			}
			switch {
			case r.Path == "":
				errs = append(errs, field.Required(fp.Child("path"), ""))
			case path.IsAbs(r.Path):
				errs = append(errs, field.Invalid(fp.Child("path"), r.Path, "must be a relative path"))
			case hasBackstep(r.Path):
				errs = append(errs, field.Invalid(fp.Child("path"), r.Path, "must not contain '..'"))
			}
			if r.Key == "" {
				errs = append(errs, field.Required(fp.Child("key"), ""))
			} else {
				errs = append(errs, invalid(fp.Child("key"), r.Key, validation.IsEnvVarName(r.Key))...)
			}
		}
	}
	return errs
}

func volumeNamed(spec *v1.PodSpec, name string) *v1.Volume {
	for i := range spec.Volumes {
		if spec.Volumes[i].Name == name {
			return &spec.Volumes[i]
		}
	}
	return nil
}

// validateResourceField checks a resourceFieldRef: a resource actorlet
// resolves and a divisor Kubernetes accepts for it; in a volume
// (inVolume) containerName is required.
func validateResourceField(rf *v1.ResourceFieldSelector, p *field.Path, inVolume bool) field.ErrorList {
	var errs field.ErrorList
	if inVolume && rf.ContainerName == "" {
		errs = append(errs, field.Required(p.Child("containerName"), ""))
	}
	switch {
	case rf.Resource == "":
		return append(errs, field.Required(p.Child("resource"), ""))
	case !slices.Contains(resourceFieldNames, rf.Resource):
		return append(errs, field.NotSupported(p.Child("resource"), rf.Resource, resourceFieldNames))
	}
	if rf.Divisor.IsZero() {
		return errs
	}
	divisors := memoryDivisors
	if strings.HasSuffix(rf.Resource, ".cpu") {
		divisors = cpuDivisors
	}
	for _, d := range divisors {
		if rf.Divisor.Cmp(resource.MustParse(d)) == 0 {
			return errs
		}
	}
	return append(errs, field.NotSupported(p.Child("divisor"), rf.Divisor.String(), divisors))
}

func validateFieldPath(fieldPath string, p *field.Path) field.ErrorList {
	switch {
	case fieldPath == "":
		return field.ErrorList{field.Required(p, "")}
	case slices.Contains(fieldRefPaths, fieldPath):
		return nil
	}
	for _, prefix := range []string{"metadata.labels['", "metadata.annotations['"} {
		rest, ok := strings.CutPrefix(fieldPath, prefix)
		if !ok {
			continue
		}
		key, ok := strings.CutSuffix(rest, "']")
		if !ok {
			return field.ErrorList{field.Invalid(p, fieldPath, "a subscript must end with ']")}
		}
		return invalid(p, fieldPath, validation.IsQualifiedName(key))
	}
	supported := append(slices.Clone(fieldRefPaths), "metadata.labels['<key>']", "metadata.annotations['<key>']")
	return field.ErrorList{field.NotSupported(p, fieldPath, supported)}
}

// validateVolumes checks spec.volumes (their kinds are left to the support
// table) and every container's volumeMounts.
func validateVolumes(spec *v1.PodSpec, p *field.Path) (warnings []string, errs field.ErrorList) {
	vols := map[string]*v1.Volume{}
	for i := range spec.Volumes {
		vol := &spec.Volumes[i]
		vp := p.Child("volumes").Index(i)
		switch {
		case vol.Name == "":
			errs = append(errs, field.Required(vp.Child("name"), ""))
		case vols[vol.Name] != nil:
			errs = append(errs, field.Duplicate(vp.Child("name"), vol.Name))
		default:
			errs = append(errs, invalid(vp.Child("name"), vol.Name, validation.IsDNS1123Label(vol.Name))...)
			vols[vol.Name] = vol
		}
		if countSources(&vol.VolumeSource) > 1 {
			errs = append(errs, field.Forbidden(vp, "may not specify more than 1 volume type"))
		}
		if ed := vol.EmptyDir; ed != nil {
			w, e := validateEmptyDir(ed, vp.Child("emptyDir"))
			warnings, errs = append(warnings, w...), append(errs, e...)
		}
		if hp := vol.HostPath; hp != nil {
			errs = append(errs, validateHostPath(hp, vp.Child("hostPath"))...)
		}
		errs = append(errs, validateDownwardVolume(spec, vol, vp)...)
		errs = append(errs, validateObjectVolume(vol, vp)...)
	}

	memMounts := map[string]int{}
	for _, pc := range podContainers(spec, p) {
		mountPaths := sets.New[string]()
		for j, vm := range pc.c.VolumeMounts {
			mp := pc.path.Child("volumeMounts").Index(j)
			vol := vols[vm.Name]
			switch {
			case vm.Name == "":
				errs = append(errs, field.Required(mp.Child("name"), ""))
			case vol == nil:
				errs = append(errs, field.NotFound(mp.Child("name"), vm.Name))
			}
			switch target := path.Clean(vm.MountPath); {
			case vm.MountPath == "":
				errs = append(errs, field.Required(mp.Child("mountPath"), ""))
			case !path.IsAbs(vm.MountPath):
				errs = append(errs, field.Invalid(mp.Child("mountPath"), vm.MountPath, "must be an absolute path"))
			case target == "/":
				errs = append(errs, field.Invalid(mp.Child("mountPath"), vm.MountPath, "must not be the root directory"))
			case mountPaths.Has(target):
				errs = append(errs, field.Invalid(mp.Child("mountPath"), vm.MountPath, "must be unique"))
			default:
				mountPaths.Insert(target)
			}
			if vm.SubPath != "" {
				errs = append(errs, validateLocalPath(vm.SubPath, mp.Child("subPath"))...)
			}
			if vol != nil && isMemoryEmptyDir(vol) {
				memMounts[vm.Name]++
				if vm.SubPath != "" {
					errs = append(errs, field.Forbidden(mp.Child("subPath"), notSupported+": a Memory emptyDir is a tmpfs, mounted whole"))
				}
			}
		}
	}
	for i := range spec.Volumes {
		if vol := &spec.Volumes[i]; isMemoryEmptyDir(vol) && memMounts[vol.Name] > 1 {
			errs = append(errs, field.Forbidden(p.Child("volumes").Index(i).Child("emptyDir", "medium"),
				notSupported+": a Memory emptyDir is a tmpfs private to one container, so it can be mounted only once"))
		}
	}
	return warnings, errs
}

func isMemoryEmptyDir(vol *v1.Volume) bool {
	return vol.EmptyDir != nil && vol.EmptyDir.Medium == v1.StorageMediumMemory
}

// countSources counts the volume sources set (every field of VolumeSource
// is a pointer to one).
func countSources(vs *v1.VolumeSource) int {
	v := reflect.ValueOf(vs).Elem()
	n := 0
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			n++
		}
	}
	return n
}

func validateEmptyDir(ed *v1.EmptyDirVolumeSource, p *field.Path) (warnings []string, errs field.ErrorList) {
	if !slices.Contains(emptyDirMedia, ed.Medium) {
		errs = append(errs, field.NotSupported(p.Child("medium"), ed.Medium, emptyDirMedia))
	}
	if q := ed.SizeLimit; q != nil {
		switch {
		case q.Sign() < 0:
			errs = append(errs, field.Invalid(p.Child("sizeLimit"), q.String(), "must be greater than or equal to 0"))
		case ed.Medium == v1.StorageMediumDefault && !q.IsZero():
			warnings = append(warnings, fmt.Sprintf("%s: ignored by actorlet: the size of an emptyDir on disk is not limited", p.Child("sizeLimit")))
		}
	}
	if m := ed.Mode; m != nil {
		switch {
		case *m < 0 || *m > 0o1777:
			errs = append(errs, field.Invalid(p.Child("mode"), fmt.Sprintf("%#o", *m), "must be between 0000 and 01777"))
		case ed.Medium == v1.StorageMediumMemory:
			errs = append(errs, field.Forbidden(p.Child("mode"), notSupported+": a Memory emptyDir is a tmpfs of the runtime's mode (1777)"))
		}
	}
	if ed.Medium == v1.StorageMediumMemory {
		warnings = append(warnings, fmt.Sprintf("%s: Memory: the tmpfs is private to its container and emptied when the container restarts", p.Child("medium")))
	}
	return warnings, errs
}

func validateHostPath(hp *v1.HostPathVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case hp.Path == "":
		errs = append(errs, field.Required(p.Child("path"), ""))
	case !path.IsAbs(hp.Path):
		errs = append(errs, field.Invalid(p.Child("path"), hp.Path, "must be an absolute path"))
	case hasBackstep(hp.Path):
		errs = append(errs, field.Invalid(p.Child("path"), hp.Path, "must not contain '..'"))
	}
	if hp.Type != nil && !slices.Contains(hostPathTypes, *hp.Type) {
		errs = append(errs, field.NotSupported(p.Child("type"), *hp.Type, hostPathTypes))
	}
	return errs
}

// validateLocalPath accepts a relative path without ".." elements.
func validateLocalPath(s string, p *field.Path) field.ErrorList {
	switch {
	case path.IsAbs(s):
		return field.ErrorList{field.Invalid(p, s, "must be a relative path")}
	case hasBackstep(s):
		return field.ErrorList{field.Invalid(p, s, "must not contain '..'")}
	}
	return nil
}

func hasBackstep(s string) bool {
	return slices.Contains(strings.Split(s, "/"), "..")
}

// validatePodResources checks the pod-level resources as Kubernetes does
// (PodLevelResources): only cpu and memory (Kubernetes' hugepages are not
// supported by actorlet, as in containers), values not negative, each
// request at most its limit, each container's limit at most the pod's,
// and the containers' effective requests together at most the pod's.
func validatePodResources(spec *v1.PodSpec, p *field.Path) field.ErrorList {
	if spec.Resources == nil {
		return nil
	}
	var errs field.ErrorList
	rp := p.Child("resources")
	supported := []string{string(v1.ResourceCPU), string(v1.ResourceMemory)}
	check := func(kind string, l v1.ResourceList) {
		for _, name := range sortedNames(l) {
			q, np := l[name], rp.Child(kind).Key(string(name))
			switch {
			case strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix):
				errs = append(errs, field.Forbidden(np, notSupported+": only cpu and memory are applied"))
			case name != v1.ResourceCPU && name != v1.ResourceMemory:
				errs = append(errs, field.NotSupported(np, name, supported))
			case q.Sign() < 0:
				errs = append(errs, field.Invalid(np, q.String(), "must be greater than or equal to 0"))
			case kind == "limits" && name == v1.ResourceMemory && !q.IsZero() && q.Value() < minMemoryLimit:
				errs = append(errs, field.Invalid(np, q.String(), "must be 0 or at least 6Mi, Docker's minimum memory limit"))
			}
		}
	}
	check("limits", spec.Resources.Limits)
	check("requests", spec.Resources.Requests)
	if len(errs) > 0 {
		return errs
	}
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
		lim, hasLim := spec.Resources.Limits[name]
		if req, ok := spec.Resources.Requests[name]; ok && hasLim && req.Cmp(lim) > 0 {
			errs = append(errs, field.Invalid(rp.Child("requests").Key(string(name)), req.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, lim.String())))
		}
		if hasLim {
			for _, pc := range podContainers(spec, p) {
				if cl, ok := pc.c.Resources.Limits[name]; ok && cl.Cmp(lim) > 0 {
					errs = append(errs, field.Invalid(pc.path.Child("resources", "limits").Key(string(name)), cl.String(), fmt.Sprintf("must be less than or equal to pod limits of %s", lim.String())))
				}
			}
		}
		if req, ok := spec.Resources.Requests[name]; ok {
			// The containers' effective request, sidecars and init
			// containers counted as Kubernetes counts them.
			sum := resourcehelper.AggregateContainerRequests(&v1.Pod{Spec: *spec}, resourcehelper.PodResourcesOptions{})[name]
			if sum.Cmp(req) > 0 {
				errs = append(errs, field.Invalid(rp.Child("requests").Key(string(name)), req.String(), fmt.Sprintf("must be greater than or equal to aggregate container requests of %s", sum.String())))
			}
		}
	}
	return errs
}

// validateResources checks every container's resource names and values.
func validateResources(spec *v1.PodSpec, p *field.Path) (warnings []string, errs field.ErrorList) {
	errs = validatePodResources(spec, p)
	for _, pc := range podContainers(spec, p) {
		res := pc.c.Resources
		rp := pc.path.Child("resources")
		for _, name := range sortedNames(res.Limits) {
			q := res.Limits[name]
			lp := rp.Child("limits").Key(string(name))
			if q.Sign() < 0 {
				errs = append(errs, field.Invalid(lp, q.String(), "must be greater than or equal to 0"))
				continue
			}
			switch name {
			case v1.ResourceCPU:
			case v1.ResourceMemory:
				if !q.IsZero() && q.Value() < minMemoryLimit {
					errs = append(errs, field.Invalid(lp, q.String(), "must be 0 or at least 6Mi, Docker's minimum memory limit"))
				}
			case v1.ResourceEphemeralStorage:
				warnings = append(warnings, fmt.Sprintf("%s: ignored by actorlet: ephemeral storage is not limited", lp))
			default:
				errs = append(errs, field.Forbidden(lp, notSupported+": only cpu and memory limits are applied"))
			}
		}
		for _, name := range sortedNames(res.Requests) {
			q := res.Requests[name]
			qp := rp.Child("requests").Key(string(name))
			if q.Sign() < 0 {
				errs = append(errs, field.Invalid(qp, q.String(), "must be greater than or equal to 0"))
				continue
			}
			switch name {
			case v1.ResourceCPU, v1.ResourceMemory:
				if lim, ok := res.Limits[name]; ok && q.Cmp(lim) > 0 {
					errs = append(errs, field.Invalid(qp, q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, lim.String())))
				}
			case v1.ResourceEphemeralStorage:
			default:
				errs = append(errs, field.Forbidden(qp, notSupported+": only cpu, memory and ephemeral-storage requests are supported"))
			}
		}
	}
	return warnings, errs
}

func sortedNames(l v1.ResourceList) []v1.ResourceName {
	names := make([]v1.ResourceName, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// validateSecurity checks the pod's and each container's security
// context. An error about a pod-level field shared by several containers
// is reported once.
func validateSecurity(spec *v1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	add := func(e *field.Error) {
		if k := e.Error(); !seen.Has(k) {
			seen.Insert(k)
			errs = append(errs, e)
		}
	}
	addAll := func(l field.ErrorList) {
		for _, e := range l {
			add(e)
		}
	}

	psc := spec.SecurityContext
	if psc == nil {
		psc = &v1.PodSecurityContext{}
	}
	pp := p.Child("securityContext")
	addAll(validateIDs(psc.RunAsUser, psc.RunAsGroup, pp))
	for i, g := range psc.SupplementalGroups {
		addAll(invalid(pp.Child("supplementalGroups").Index(i), g, validation.IsValidGroupID(g)))
	}
	if psc.FSGroup != nil {
		addAll(invalid(pp.Child("fsGroup"), *psc.FSGroup, validation.IsValidGroupID(*psc.FSGroup)))
	}

	for _, pc := range podContainers(spec, p) {
		sc := pc.c.SecurityContext
		if sc == nil {
			sc = &v1.SecurityContext{}
		}
		sp := pc.path.Child("securityContext")
		addAll(validateIDs(sc.RunAsUser, sc.RunAsGroup, sp))

		uid, uidPath := sc.RunAsUser, sp.Child("runAsUser")
		if uid == nil {
			uid, uidPath = psc.RunAsUser, pp.Child("runAsUser")
		}
		gid, gidPath := sc.RunAsGroup, sp.Child("runAsGroup")
		if gid == nil {
			gid, gidPath = psc.RunAsGroup, pp.Child("runAsGroup")
		}
		nonRoot, nonRootPath := sc.RunAsNonRoot, sp.Child("runAsNonRoot")
		if nonRoot == nil {
			nonRoot, nonRootPath = psc.RunAsNonRoot, pp.Child("runAsNonRoot")
		}
		if gid != nil && uid == nil {
			add(field.Forbidden(gidPath, notSupported+": runAsGroup needs runAsUser (Docker cannot set only the group)"))
		}
		if nonRoot != nil && *nonRoot {
			switch {
			case uid == nil:
				add(field.Forbidden(nonRootPath, notSupported+": runAsNonRoot needs runAsUser (actorlet does not read the image's user)"))
			case *uid == 0:
				add(field.Invalid(uidPath, *uid, "must not be 0 when runAsNonRoot is true"))
			}
		}

		sysAdmin := false
		if caps := sc.Capabilities; caps != nil {
			cp := sp.Child("capabilities")
			for i, c := range caps.Add {
				addAll(validateCapability(c, cp.Child("add").Index(i)))
				if norm := normalizeCapability(c); norm == "SYS_ADMIN" || norm == "ALL" {
					sysAdmin = true
				}
			}
			for i, c := range caps.Drop {
				addAll(validateCapability(c, cp.Child("drop").Index(i)))
			}
		}
		if ape := sc.AllowPrivilegeEscalation; ape != nil && !*ape {
			if sc.Privileged != nil && *sc.Privileged {
				add(field.Invalid(sp.Child("allowPrivilegeEscalation"), false, "cannot be false when privileged is true"))
			}
			if sysAdmin {
				add(field.Invalid(sp.Child("allowPrivilegeEscalation"), false, "cannot be false when capabilities.add has SYS_ADMIN"))
			}
		}
	}
	return errs
}

func validateIDs(uid, gid *int64, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if uid != nil {
		errs = append(errs, invalid(p.Child("runAsUser"), *uid, validation.IsValidUserID(*uid))...)
	}
	if gid != nil {
		errs = append(errs, invalid(p.Child("runAsGroup"), *gid, validation.IsValidGroupID(*gid))...)
	}
	return errs
}

// normalizeCapability upper-cases c and drops a CAP_ prefix, as Docker
// does.
func normalizeCapability(c v1.Capability) string {
	return strings.TrimPrefix(strings.ToUpper(string(c)), "CAP_")
}

func validateCapability(c v1.Capability, p *field.Path) field.ErrorList {
	if n := normalizeCapability(c); n == "ALL" || capabilities.Has(n) {
		return nil
	}
	return field.ErrorList{field.Invalid(p, string(c), "must be ALL or a Linux capability, e.g. NET_ADMIN")}
}
