package manifest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// This file is the one place that says which pod fields actorlet honours.
// To support a field, move its row to supported; to start rejecting one,
// move it to rejected. TestSupportTableCoversAPI fails when a field of
// PodSpec, Container or their security contexts has no row, so a newer
// k8s.io/api cannot slip a field past it.

// support is what actorlet does with a field that is set.
type support int

const (
	// supported: honoured, or setting it makes no difference on a
	// standalone node (e.g. schedulerName).
	supported support = iota
	// ignored: not honoured, and ignoring it neither changes what runs nor
	// weakens isolation. Validate returns a warning.
	ignored
	// rejected: not honoured, and ignoring it would change what runs or
	// weaken isolation. Validate returns an error.
	rejected
)

// scope says where a row's path starts.
type scope int

const (
	podScope       scope = iota // at the pod's root: "spec.hostPID"
	containerScope              // in every init and app container: "volumeMounts"
)

// fieldRule classifies one field.
type fieldRule struct {
	scope scope
	// path is the dotted JSON path from the scope's root; "name[*]" means
	// every element of the list "name".
	path    string
	support support
	// why completes the message: the warning is "<path>: <why>", the error
	// "<path>: Forbidden: not supported by actorlet[: <why>]".
	why string
	// harmless reports whether a set value may be ignored safely, e.g.
	// privileged: false. It gets the value as decoded from JSON (bool,
	// float64, string, []any, map[string]any). nil means isUnset.
	harmless func(v any) bool
	// allow, on a rejected row, reports whether the node's operator lets
	// the field be honoured (e.g. --allow-privileged). When it does the row
	// counts as supported; when not, the error says "not allowed on this
	// node: <why>".
	allow func(ValidationOptions) bool
}

const (
	notSupported    = "not supported by actorlet"
	notAllowed      = "not allowed on this node"
	whyIgnored      = "ignored by actorlet"
	whyHookTCP      = "tcpSocket hooks are deprecated and not run; use exec, httpGet or sleep"
	whyScheduling   = "ignored by actorlet: static pods are not scheduled"
	whyTermMessage  = "ignored by actorlet: termination messages are not read yet"
	whyVolumeKind   = "only emptyDir, hostPath, downwardAPI, configMap, secret and projected volumes are mounted"
	whyProjection   = "only downwardAPI, configMap and secret sources are projected"
	whyStrictGroups = "only Merge: Docker always adds the groups the image's /etc/group gives the container's user"
)

func allowHostPath(o ValidationOptions) bool   { return o.AllowHostPath }
func allowPrivileged(o ValidationOptions) bool { return o.AllowPrivileged }

// supportTable is the table. Rows for supported fields are listed too, so
// the table documents (and its test checks) the whole API surface.
var supportTable = []fieldRule{
	// Metadata actorlet ignores (name, namespace, uid, labels and
	// annotations are honoured and validated elsewhere).
	{scope: podScope, path: "metadata.generateName", support: ignored, why: "ignored by actorlet: a static pod needs metadata.name"},
	{scope: podScope, path: "metadata.ownerReferences", support: ignored, why: whyIgnored},
	{scope: podScope, path: "metadata.finalizers", support: ignored, why: whyIgnored},
	{scope: podScope, path: "metadata.deletionTimestamp", support: ignored, why: whyIgnored},
	{scope: podScope, path: "metadata.deletionGracePeriodSeconds", support: ignored, why: whyIgnored},
	{scope: podScope, path: "status", support: ignored, why: "ignored by actorlet: status is observed, not read from manifests"},

	// PodSpec.
	{scope: podScope, path: "spec.initContainers", support: supported},
	{scope: podScope, path: "spec.containers", support: supported},
	{scope: podScope, path: "spec.restartPolicy", support: supported},
	{scope: podScope, path: "spec.terminationGracePeriodSeconds", support: supported},
	{scope: podScope, path: "spec.dnsPolicy", support: supported}, // the runtime's resolver, as a kubelet without cluster DNS
	{scope: podScope, path: "spec.hostNetwork", support: supported},
	{scope: podScope, path: "spec.hostname", support: supported},           // the sandbox's hostname; app containers share its UTS namespace
	{scope: podScope, path: "spec.schedulerName", support: supported},      // no scheduler on a standalone node
	{scope: podScope, path: "spec.enableServiceLinks", support: supported}, // no Services to link
	// Volumes: emptyDir and (when the operator allows) hostPath; their
	// fields are checked in validateVolumes.
	{scope: podScope, path: "spec.volumes[*].name", support: supported},
	{scope: podScope, path: "spec.volumes[*].emptyDir", support: supported},
	{scope: podScope, path: "spec.volumes[*].hostPath", support: rejected, why: "hostPath volumes need the operator's --allow-host-path", allow: allowHostPath, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].gcePersistentDisk", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].awsElasticBlockStore", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].gitRepo", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].secret", support: supported}, // checked in validateObjectVolume
	{scope: podScope, path: "spec.volumes[*].nfs", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].iscsi", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].glusterfs", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].persistentVolumeClaim", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].rbd", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].flexVolume", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].cinder", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].cephfs", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].flocker", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].downwardAPI", support: supported}, // items checked in validateDownwardAPI
	{scope: podScope, path: "spec.volumes[*].fc", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].azureFile", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].configMap", support: supported}, // checked in validateObjectVolume
	{scope: podScope, path: "spec.volumes[*].vsphereVolume", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].quobyte", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].azureDisk", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].photonPersistentDisk", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].projected", support: supported}, // downwardAPI, configMap and secret sources, see the rows below
	{scope: podScope, path: "spec.volumes[*].projected.sources[*].configMap", support: supported},
	{scope: podScope, path: "spec.volumes[*].projected.sources[*].secret", support: supported},
	{scope: podScope, path: "spec.volumes[*].projected.sources[*].serviceAccountToken", support: rejected, why: whyProjection + "; a static pod has no service account token", harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].projected.sources[*].downwardAPI", support: supported}, // items checked in validateDownwardAPI
	{scope: podScope, path: "spec.volumes[*].projected.sources[*].clusterTrustBundle", support: rejected, why: whyProjection + "; a static pod has no API server to read ClusterTrustBundles from", harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].projected.sources[*].podCertificate", support: rejected, why: whyProjection + "; a static pod has no API server to sign its certificate", harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].portworxVolume", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].scaleIO", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].storageos", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].csi", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].ephemeral", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.volumes[*].image", support: rejected, why: whyVolumeKind, harmless: isAbsent},
	{scope: podScope, path: "spec.ephemeralContainers", support: rejected},
	{scope: podScope, path: "spec.activeDeadlineSeconds", support: rejected},
	{scope: podScope, path: "spec.hostPID", support: rejected},
	{scope: podScope, path: "spec.hostIPC", support: rejected},
	{scope: podScope, path: "spec.shareProcessNamespace", support: supported}, // the sandbox's PID namespace, joined by every container
	{scope: podScope, path: "spec.hostUsers", support: rejected, harmless: isTrue},
	{scope: podScope, path: "spec.hostAliases", support: rejected},
	{scope: podScope, path: "spec.dnsConfig", support: rejected},
	{scope: podScope, path: "spec.setHostnameAsFQDN", support: rejected},
	{scope: podScope, path: "spec.hostnameOverride", support: rejected},
	{scope: podScope, path: "spec.runtimeClassName", support: rejected},
	{scope: podScope, path: "spec.resourceClaims", support: rejected},
	// Pod-level resources (cpu and memory, checked in
	// validatePodResources): requests count at admission, limits bound
	// each container that sets none of its own.
	{scope: podScope, path: "spec.resources.limits", support: supported},
	{scope: podScope, path: "spec.resources.requests", support: supported},
	{scope: podScope, path: "spec.resources.claims", support: rejected},
	{scope: podScope, path: "spec.nodeName", support: ignored, why: "ignored by actorlet: a static pod runs on the node that reads it"},
	{scope: podScope, path: "spec.nodeSelector", support: ignored, why: whyScheduling},
	{scope: podScope, path: "spec.affinity", support: ignored, why: whyScheduling},
	{scope: podScope, path: "spec.tolerations", support: ignored, why: whyScheduling},
	{scope: podScope, path: "spec.topologySpreadConstraints", support: ignored, why: whyScheduling},
	{scope: podScope, path: "spec.schedulingGates", support: ignored, why: whyScheduling},
	{scope: podScope, path: "spec.schedulingGroup", support: ignored, why: whyScheduling},
	{scope: podScope, path: "spec.priorityClassName", support: ignored, why: whyScheduling},
	{scope: podScope, path: "spec.priority", support: ignored, why: whyScheduling},
	{scope: podScope, path: "spec.preemptionPolicy", support: ignored, why: whyScheduling},
	{scope: podScope, path: "spec.overhead", support: ignored, why: whyScheduling},
	{scope: podScope, path: "spec.serviceAccountName", support: ignored, why: whyIgnored},
	{scope: podScope, path: "spec.serviceAccount", support: ignored, why: whyIgnored},
	{scope: podScope, path: "spec.automountServiceAccountToken", support: ignored, why: whyIgnored},
	{scope: podScope, path: "spec.imagePullSecrets", support: ignored, why: whyIgnored},
	{scope: podScope, path: "spec.subdomain", support: ignored, why: "ignored by actorlet: without cluster DNS the hostname is not made a FQDN"},
	{scope: podScope, path: "spec.readinessGates", support: ignored, why: whyIgnored},
	{scope: podScope, path: "spec.os", support: ignored, why: whyIgnored},
	{scope: podScope, path: "spec.evictionResponders", support: ignored, why: whyIgnored},

	// PodSecurityContext.
	// runAsUser and runAsGroup are the containers' defaults; these three
	// are checked in validateSecurity.
	{scope: podScope, path: "spec.securityContext.runAsUser", support: supported},
	{scope: podScope, path: "spec.securityContext.runAsGroup", support: supported},
	{scope: podScope, path: "spec.securityContext.runAsNonRoot", support: supported},
	// supplementalGroups and fsGroup: every container's supplemental
	// groups (IDs checked in validateSecurity); fsGroup also owns the
	// volumes actorlet makes (emptyDir on disk, downwardAPI, configMap,
	// secret, projected), as the kubelet's SetVolumeOwnership.
	{scope: podScope, path: "spec.securityContext.supplementalGroups", support: supported},
	{scope: podScope, path: "spec.securityContext.supplementalGroupsPolicy", support: rejected, why: whyStrictGroups, harmless: equals(string(v1.SupplementalGroupsPolicyMerge))},
	{scope: podScope, path: "spec.securityContext.fsGroup", support: supported},
	{scope: podScope, path: "spec.securityContext.sysctls", support: rejected},
	{scope: podScope, path: "spec.securityContext.seLinuxOptions", support: rejected},
	{scope: podScope, path: "spec.securityContext.seccompProfile", support: supported},  // checked in validateSecurityProfiles,
	{scope: podScope, path: "spec.securityContext.appArmorProfile", support: supported}, // checked in validateSecurityProfiles,
	// Both policies give the same result on the volumes actorlet owns: it
	// makes each of them (every file in it is its own or made after) and
	// gives it to the fsGroup then, and after each write.
	{scope: podScope, path: "spec.securityContext.fsGroupChangePolicy", support: supported},
	{scope: podScope, path: "spec.securityContext.seLinuxChangePolicy", support: ignored, why: whyIgnored},
	{scope: podScope, path: "spec.securityContext.windowsOptions", support: ignored, why: whyIgnored},

	// Container (init and app alike; ephemeral containers are rejected whole).
	{scope: containerScope, path: "name", support: supported},
	{scope: containerScope, path: "image", support: supported},
	{scope: containerScope, path: "imagePullPolicy", support: supported},
	{scope: containerScope, path: "command", support: supported},
	{scope: containerScope, path: "args", support: supported},
	{scope: containerScope, path: "workingDir", support: supported},
	{scope: containerScope, path: "env[*].name", support: supported},
	{scope: containerScope, path: "env[*].value", support: supported},
	{scope: containerScope, path: "env[*].valueFrom.fieldRef", support: supported},         // paths checked in validateEnv
	{scope: containerScope, path: "env[*].valueFrom.resourceFieldRef", support: supported}, // resources checked in validateEnvSource
	{scope: containerScope, path: "env[*].valueFrom.configMapKeyRef", support: supported},  // from the node's ConfigMaps
	{scope: containerScope, path: "env[*].valueFrom.secretKeyRef", support: supported},     // from the node's Secrets
	{scope: containerScope, path: "env[*].valueFrom.fileKeyRef", support: supported},       // from the file in an emptyDir, checked in validateFileKeyRefs
	{scope: containerScope, path: "envFrom", support: supported},                           // checked in validateEnvFrom
	{scope: containerScope, path: "ports[*].name", support: supported},
	{scope: containerScope, path: "ports[*].containerPort", support: supported},
	{scope: containerScope, path: "ports[*].hostPort", support: supported},
	{scope: containerScope, path: "ports[*].protocol", support: supported},
	{scope: containerScope, path: "ports[*].hostIP", support: supported},
	// Mounts: checked in validateVolumeMounts.
	{scope: containerScope, path: "volumeMounts[*].name", support: supported},
	{scope: containerScope, path: "volumeMounts[*].mountPath", support: supported},
	{scope: containerScope, path: "volumeMounts[*].readOnly", support: supported},
	{scope: containerScope, path: "volumeMounts[*].subPath", support: supported},
	{scope: containerScope, path: "volumeMounts[*].subPathExpr", support: rejected},
	{scope: containerScope, path: "volumeMounts[*].mountPropagation", support: rejected, harmless: equals(string(v1.MountPropagationNone))},
	// IfPossible may fall back to a plain read-only mount, as it does on
	// runtimes without recursive read-only mounts.
	{scope: containerScope, path: "volumeMounts[*].recursiveReadOnly", support: rejected, harmless: oneOf(string(v1.RecursiveReadOnlyDisabled), string(v1.RecursiveReadOnlyIfPossible))},
	{scope: containerScope, path: "volumeMounts[*].bindMountOptions", support: rejected},
	{scope: containerScope, path: "volumeDevices", support: rejected},
	// Resource names are checked in validateResources: cpu and memory
	// limits and cpu requests are applied; memory and ephemeral-storage
	// requests only inform scheduling, which a standalone node has not.
	{scope: containerScope, path: "resources.limits", support: supported},
	{scope: containerScope, path: "resources.requests", support: supported},
	{scope: containerScope, path: "resources.claims", support: rejected},
	{scope: containerScope, path: "resizePolicy", support: ignored, why: whyIgnored},
	// Checked in validateSpec: Always on init containers (sidecars) only.
	{scope: containerScope, path: "restartPolicy", support: supported},
	{scope: containerScope, path: "restartPolicyRules", support: supported}, // app containers, action Restart: checked in validateRestartRules
	{scope: containerScope, path: "livenessProbe", support: supported},
	{scope: containerScope, path: "readinessProbe", support: supported},
	{scope: containerScope, path: "startupProbe", support: supported},
	{scope: containerScope, path: "livenessProbe.grpc", support: supported},
	{scope: containerScope, path: "readinessProbe.grpc", support: supported},
	{scope: containerScope, path: "startupProbe.grpc", support: supported},
	{scope: containerScope, path: "lifecycle.postStart", support: supported},
	{scope: containerScope, path: "lifecycle.preStop", support: supported},
	{scope: containerScope, path: "lifecycle.postStart.tcpSocket", support: rejected, why: whyHookTCP},
	{scope: containerScope, path: "lifecycle.preStop.tcpSocket", support: rejected, why: whyHookTCP},
	{scope: containerScope, path: "lifecycle.stopSignal", support: ignored, why: "ignored by actorlet: the image's stop signal is used"},
	{scope: containerScope, path: "terminationMessagePath", support: ignored, why: whyTermMessage, harmless: equals(defaultTerminationMessagePath)},
	{scope: containerScope, path: "terminationMessagePolicy", support: ignored, why: whyTermMessage, harmless: equals(string(v1.TerminationMessageReadFile))},
	{scope: containerScope, path: "stdin", support: ignored, why: whyIgnored},
	{scope: containerScope, path: "stdinOnce", support: ignored, why: whyIgnored},
	{scope: containerScope, path: "tty", support: ignored, why: whyIgnored},

	// Container SecurityContext.
	// The supported ones are checked in validateSecurity.
	{scope: containerScope, path: "securityContext.privileged", support: rejected, why: "privileged containers need the operator's --allow-privileged", allow: allowPrivileged},
	{scope: containerScope, path: "securityContext.capabilities", support: supported},
	{scope: containerScope, path: "securityContext.runAsUser", support: supported},
	{scope: containerScope, path: "securityContext.runAsGroup", support: supported},
	{scope: containerScope, path: "securityContext.runAsNonRoot", support: supported},
	{scope: containerScope, path: "securityContext.readOnlyRootFilesystem", support: supported},
	{scope: containerScope, path: "securityContext.allowPrivilegeEscalation", support: supported},
	{scope: containerScope, path: "securityContext.procMount", support: rejected, harmless: equals(string(v1.DefaultProcMount))},
	{scope: containerScope, path: "securityContext.seLinuxOptions", support: rejected},
	{scope: containerScope, path: "securityContext.seccompProfile", support: supported},  // checked in validateSecurityProfiles,
	{scope: containerScope, path: "securityContext.appArmorProfile", support: supported}, // checked in validateSecurityProfiles,
	{scope: containerScope, path: "securityContext.windowsOptions", support: ignored, why: whyIgnored},
}

// checkSupport applies supportTable to pod: an error for every rejected
// field that is set (unless opts allow it), a warning for every ignored
// one.
func checkSupport(pod *v1.Pod, opts ValidationOptions) (warnings []string, errs field.ErrorList) {
	raw, err := json.Marshal(pod)
	if err != nil { // cannot happen for a decoded pod
		return nil, field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
	}

	warnings, errs = applyRules(podScope, root, nil, opts)
	spec, _ := root["spec"].(map[string]any)
	for _, list := range []string{"initContainers", "containers"} {
		items, _ := spec[list].([]any)
		for i, c := range items {
			w, e := applyRules(containerScope, c, field.NewPath("spec", list).Index(i), opts)
			warnings, errs = append(warnings, w...), append(errs, e...)
		}
	}
	return warnings, errs
}

func applyRules(sc scope, obj any, base *field.Path, opts ValidationOptions) (warnings []string, errs field.ErrorList) {
	for _, r := range supportTable {
		if r.scope != sc || r.support == supported || (r.allow != nil && r.allow(opts)) {
			continue
		}
		visit(obj, strings.Split(r.path, "."), base, func(p *field.Path, v any) {
			harmless := r.harmless
			if harmless == nil {
				harmless = isUnset
			}
			if harmless(v) {
				return
			}
			switch r.support {
			case rejected:
				detail := notSupported
				if r.allow != nil {
					detail = notAllowed
				}
				if r.why != "" {
					detail += ": " + r.why
				}
				errs = append(errs, field.Forbidden(p, detail))
			case ignored:
				warnings = append(warnings, fmt.Sprintf("%s: %s", p, r.why))
			}
		})
	}
	return warnings, errs
}

// visit calls fn with every value found at segs below obj.
func visit(obj any, segs []string, p *field.Path, fn func(*field.Path, any)) {
	if len(segs) == 0 {
		fn(p, obj)
		return
	}
	m, ok := obj.(map[string]any)
	if !ok {
		return
	}
	name, each := strings.CutSuffix(segs[0], "[*]")
	v, ok := m[name]
	if !ok {
		return
	}
	child := childPath(p, name)
	if !each {
		visit(v, segs[1:], child, fn)
		return
	}
	items, _ := v.([]any)
	for i, item := range items {
		visit(item, segs[1:], child.Index(i), fn)
	}
}

func childPath(p *field.Path, name string) *field.Path {
	if p == nil {
		return field.NewPath(name)
	}
	return p.Child(name)
}

// isUnset: absent, null, false, "", or an empty list or object.
func isUnset(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case bool:
		return !v
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

func isTrue(v any) bool { return v == nil || v == true }

// isAbsent: only absent (or null). For a volume or env source, where an
// empty object ("configMap: {}") still selects that kind.
func isAbsent(v any) bool { return v == nil }

func equals(want string) func(any) bool {
	return func(v any) bool { return v == nil || v == want }
}

func oneOf(want ...string) func(any) bool {
	return func(v any) bool {
		s, ok := v.(string)
		return v == nil || ok && slices.Contains(want, s)
	}
}
