package manifest

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// TestValidateRun covers what validate_run.go checks: env sources,
// volumes and mounts, resources and security contexts, with and without
// the operator's options.
func TestValidateRun(t *testing.T) {
	allowAll := ValidationOptions{AllowPrivileged: true, AllowHostPath: true}
	tests := []struct {
		name      string
		opts      ValidationOptions
		mutate    func(*v1.Pod) // applied to a defaulted bare() pod
		wantErrs  []string      // prefixes, in order
		wantWarns []string      // prefixes, in order
	}{
		// Env fieldRef.
		{name: "fieldRef supported paths", mutate: setEnvVars(
			fieldEnv("N", "metadata.name"), fieldEnv("NS", "metadata.namespace"), fieldEnv("UID", "metadata.uid"),
			fieldEnv("NODE", "spec.nodeName"), fieldEnv("SA", "spec.serviceAccountName"),
			fieldEnv("L", "metadata.labels['app']"), fieldEnv("A", "metadata.annotations['example.com/x']"),
		)},
		{name: "fieldRef status paths", mutate: setEnvVars(
			fieldEnv("IP", "status.podIP"), fieldEnv("IPS", "status.podIPs"),
			fieldEnv("HOST", "status.hostIP"), fieldEnv("HOSTS", "status.hostIPs"),
		)},
		{name: "fieldRef unknown path", mutate: setEnvVars(fieldEnv("X", "spec.hostname")),
			wantErrs: []string{`spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Unsupported value: "spec.hostname"`}},
		{name: "fieldRef empty path", mutate: setEnvVars(fieldEnv("X", "")),
			wantErrs: []string{"spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Required value"}},
		{name: "fieldRef bad label key", mutate: setEnvVars(fieldEnv("X", "metadata.labels['a b']")),
			wantErrs: []string{`spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Invalid value: "metadata.labels['a b']"`}},
		{name: "fieldRef unterminated subscript", mutate: setEnvVars(fieldEnv("X", "metadata.labels['a")),
			wantErrs: []string{`spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Invalid value: "metadata.labels['a": a subscript must end`}},
		{name: "fieldRef apiVersion", mutate: func(p *v1.Pod) {
			e := fieldEnv("N", "metadata.name")
			e.ValueFrom.FieldRef.APIVersion = "v2"
			setEnvVars(e)(p)
		}, wantErrs: []string{`spec.containers[0].env[0].valueFrom.fieldRef.apiVersion: Unsupported value: "v2"`}},
		{name: "value and valueFrom", mutate: func(p *v1.Pod) {
			e := fieldEnv("N", "metadata.name")
			e.Value = "x"
			setEnvVars(e)(p)
		}, wantErrs: []string{"spec.containers[0].env[0].valueFrom: Invalid value: \"\": may not be specified when `value` is not empty"}},
		{name: "valueFrom empty", mutate: setEnvVars(v1.EnvVar{Name: "X", ValueFrom: &v1.EnvVarSource{}}),
			wantErrs: []string{"spec.containers[0].env[0].valueFrom: Invalid value: \"\": must specify one of"}},
		{name: "valueFrom two sources", mutate: func(p *v1.Pod) {
			e := fieldEnv("N", "metadata.name")
			e.ValueFrom.ConfigMapKeyRef = &v1.ConfigMapKeySelector{Key: "k"}
			setEnvVars(e)(p)
		}, wantErrs: []string{
			"spec.containers[0].env[0].valueFrom: Invalid value: \"\": may not have more than one field",
			"spec.containers[0].env[0].valueFrom.configMapKeyRef.name: Required value",
		}},
		{name: "resourceFieldRef", mutate: setEnvVars(
			resourceEnv("A", "limits.cpu", "", ""), resourceEnv("B", "requests.cpu", "app", "1m"),
			resourceEnv("C", "limits.memory", "", "1Mi"), resourceEnv("D", "requests.ephemeral-storage", "", "1k"),
		)},
		{name: "resourceFieldRef hugepages", mutate: setEnvVars(resourceEnv("A", "limits.hugepages-2Mi", "", "")),
			wantErrs: []string{`spec.containers[0].env[0].valueFrom.resourceFieldRef.resource: Unsupported value: "limits.hugepages-2Mi"`}},
		{name: "resourceFieldRef no resource", mutate: setEnvVars(resourceEnv("A", "", "", "")),
			wantErrs: []string{"spec.containers[0].env[0].valueFrom.resourceFieldRef.resource: Required value"}},
		{name: "resourceFieldRef cpu divisor", mutate: setEnvVars(resourceEnv("A", "limits.cpu", "", "1Mi")),
			wantErrs: []string{`spec.containers[0].env[0].valueFrom.resourceFieldRef.divisor: Unsupported value: "1Mi"`}},
		{name: "resourceFieldRef memory divisor", mutate: setEnvVars(resourceEnv("A", "limits.memory", "", "3")),
			wantErrs: []string{`spec.containers[0].env[0].valueFrom.resourceFieldRef.divisor: Unsupported value: "3"`}},
		{name: "configMapKeyRef and secretKeyRef", mutate: setEnvVars(
			v1.EnvVar{Name: "X", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "app"}, Key: "k"}}},
			v1.EnvVar{Name: "Y", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "db"}, Key: "password", Optional: ptr(true)}}})},
		{name: "configMapKeyRef without name", mutate: setEnvVars(v1.EnvVar{Name: "X", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{Key: "k"}}}),
			wantErrs: []string{"spec.containers[0].env[0].valueFrom.configMapKeyRef.name: Required value"}},
		{name: "empty secretKeyRef", mutate: setEnvVars(v1.EnvVar{Name: "X", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{}}}),
			wantErrs: []string{"spec.containers[0].env[0].valueFrom.secretKeyRef.name: Required value", "spec.containers[0].env[0].valueFrom.secretKeyRef.key: Required value"}},
		{name: "secretKeyRef bad key", mutate: setEnvVars(v1.EnvVar{Name: "X", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "db"}, Key: "a/b"}}}),
			wantErrs: []string{`spec.containers[0].env[0].valueFrom.secretKeyRef.key: Invalid value: "a/b"`}},
		{name: "envFrom", mutate: func(p *v1.Pod) {
			p.Spec.Containers[0].EnvFrom = []v1.EnvFromSource{{Prefix: "APP_", ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "app"}}},
				{SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "db"}, Optional: ptr(true)}}}
		}},
		{name: "envFrom bad", mutate: func(p *v1.Pod) {
			p.Spec.Containers[0].EnvFrom = []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{}}, {Prefix: "A=", SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "db"}}}, {}}
		}, wantErrs: []string{
			"spec.containers[0].envFrom[0].configMapRef.name: Required value",
			`spec.containers[0].envFrom[1].prefix: Invalid value: "A="`,
			"spec.containers[0].envFrom[2]: Invalid value: \"\": must specify one of: `configMapRef` or `secretRef`",
		}},

		// Volumes.
		{name: "emptyDir mounted", mutate: withVolumes([]v1.Volume{emptyDir("cache", "")}, mountOf("cache", "/cache"))},
		{name: "volume without source is an emptyDir", mutate: withVolumes([]v1.Volume{{Name: "data"}}, mountOf("data", "/data"))},
		{name: "emptyDir read-only with subPath", mutate: withVolumes([]v1.Volume{emptyDir("cache", "")},
			v1.VolumeMount{Name: "cache", MountPath: "/cache", ReadOnly: true, SubPath: "a/b"})},
		{name: "volume unmounted", mutate: withVolumes([]v1.Volume{emptyDir("cache", "")})},
		{name: "emptyDir Memory", mutate: withVolumes([]v1.Volume{emptyDir("shm", v1.StorageMediumMemory)}, mountOf("shm", "/dev/shm")),
			wantWarns: []string{"spec.volumes[0].emptyDir.medium: Memory: the tmpfs is private to its container and emptied when the container restarts"}},
		{name: "emptyDir Memory sizeLimit", mutate: func(p *v1.Pod) {
			v := emptyDir("shm", v1.StorageMediumMemory)
			v.EmptyDir.SizeLimit = ptr(resource.MustParse("64Mi"))
			withVolumes([]v1.Volume{v}, mountOf("shm", "/dev/shm"))(p)
		}, wantWarns: []string{"spec.volumes[0].emptyDir.medium: Memory"}},
		{name: "emptyDir disk sizeLimit is a warning", mutate: func(p *v1.Pod) {
			v := emptyDir("cache", "")
			v.EmptyDir.SizeLimit = ptr(resource.MustParse("1Gi"))
			withVolumes([]v1.Volume{v}, mountOf("cache", "/cache"))(p)
		}, wantWarns: []string{"spec.volumes[0].emptyDir.sizeLimit: ignored by actorlet: the size of an emptyDir on disk is not limited"}},
		{name: "emptyDir mode", mutate: func(p *v1.Pod) {
			v := emptyDir("tmp", "")
			v.EmptyDir.Mode = ptr(int32(0o1777))
			withVolumes([]v1.Volume{v}, mountOf("tmp", "/tmp"))(p)
		}},
		{name: "emptyDir mode out of range", mutate: func(p *v1.Pod) {
			v := emptyDir("tmp", "")
			v.EmptyDir.Mode = ptr(int32(0o4777))
			withVolumes([]v1.Volume{v}, mountOf("tmp", "/tmp"))(p)
		}, wantErrs: []string{`spec.volumes[0].emptyDir.mode: Invalid value: "04777": must be between 0000 and 01777`}},
		{name: "emptyDir Memory mode", mutate: func(p *v1.Pod) {
			v := emptyDir("shm", v1.StorageMediumMemory)
			v.EmptyDir.Mode = ptr(int32(0o700))
			withVolumes([]v1.Volume{v}, mountOf("shm", "/dev/shm"))(p)
		}, wantErrs: []string{"spec.volumes[0].emptyDir.mode: Forbidden: not supported by actorlet: a Memory emptyDir is a tmpfs of the runtime's mode (1777)"},
			wantWarns: []string{"spec.volumes[0].emptyDir.medium: Memory"}},
		{name: "emptyDir negative sizeLimit", mutate: func(p *v1.Pod) {
			v := emptyDir("cache", "")
			v.EmptyDir.SizeLimit = ptr(resource.MustParse("-1"))
			withVolumes([]v1.Volume{v})(p)
		}, wantErrs: []string{`spec.volumes[0].emptyDir.sizeLimit: Invalid value: "-1"`}},
		{name: "emptyDir HugePages", mutate: withVolumes([]v1.Volume{emptyDir("hp", v1.StorageMediumHugePages)}),
			wantErrs: []string{`spec.volumes[0].emptyDir.medium: Unsupported value: "HugePages"`}},
		{name: "emptyDir Memory shared by two containers", mutate: func(p *v1.Pod) {
			addContainer(p, "side")
			withVolumes([]v1.Volume{emptyDir("shm", v1.StorageMediumMemory)}, mountOf("shm", "/dev/shm"))(p)
			p.Spec.Containers[1].VolumeMounts = []v1.VolumeMount{mountOf("shm", "/dev/shm")}
		}, wantErrs: []string{"spec.volumes[0].emptyDir.medium: Forbidden: not supported by actorlet: a Memory emptyDir is a tmpfs private to one container"},
			wantWarns: []string{"spec.volumes[0].emptyDir.medium: Memory"}},
		{name: "emptyDir Memory with subPath", mutate: withVolumes([]v1.Volume{emptyDir("shm", v1.StorageMediumMemory)},
			v1.VolumeMount{Name: "shm", MountPath: "/x", SubPath: "a"}),
			wantErrs:  []string{"spec.containers[0].volumeMounts[0].subPath: Forbidden: not supported by actorlet: a Memory emptyDir is a tmpfs"},
			wantWarns: []string{"spec.volumes[0].emptyDir.medium: Memory"}},
		{name: "emptyDir shared on disk by two containers", mutate: func(p *v1.Pod) {
			addContainer(p, "side")
			withVolumes([]v1.Volume{emptyDir("cache", "")}, mountOf("cache", "/cache"))(p)
			p.Spec.Containers[1].VolumeMounts = []v1.VolumeMount{mountOf("cache", "/other")}
		}},
		{name: "hostPath not allowed", mutate: withVolumes([]v1.Volume{hostPath("logs", "/var/log", nil)}, mountOf("logs", "/logs")),
			wantErrs: []string{"spec.volumes[0].hostPath: Forbidden: not allowed on this node: hostPath volumes need the operator's --allow-host-path"}},
		{name: "hostPath allowed", opts: ValidationOptions{AllowHostPath: true}, mutate: withVolumes([]v1.Volume{
			hostPath("a", "/var/log", nil),
			hostPath("b", "/etc/ssl/", ptr(v1.HostPathDirectory)),
			hostPath("c", "/srv/data", ptr(v1.HostPathDirectoryOrCreate)),
			hostPath("d", "/etc/hosts", ptr(v1.HostPathFile)),
			hostPath("e", "/run/x.sock", ptr(v1.HostPathSocket)),
			hostPath("f", "/tmp/f", ptr(v1.HostPathFileOrCreate)),
		}, v1.VolumeMount{Name: "a", MountPath: "/a", ReadOnly: true}, v1.VolumeMount{Name: "b", MountPath: "/b", SubPath: "certs"})},
		{name: "hostPath relative", opts: allowAll, mutate: withVolumes([]v1.Volume{hostPath("a", "var/log", nil)}),
			wantErrs: []string{`spec.volumes[0].hostPath.path: Invalid value: "var/log": must be an absolute path`}},
		{name: "hostPath backstep", opts: allowAll, mutate: withVolumes([]v1.Volume{hostPath("a", "/var/../etc", nil)}),
			wantErrs: []string{`spec.volumes[0].hostPath.path: Invalid value: "/var/../etc": must not contain '..'`}},
		{name: "hostPath empty", opts: allowAll, mutate: withVolumes([]v1.Volume{hostPath("a", "", nil)}),
			wantErrs: []string{"spec.volumes[0].hostPath.path: Required value"}},
		{name: "hostPath type", opts: allowAll, mutate: withVolumes([]v1.Volume{hostPath("a", "/x", ptr(v1.HostPathType("Pipe")))}),
			wantErrs: []string{`spec.volumes[0].hostPath.type: Unsupported value: "Pipe"`}},
		{name: "two volume sources", opts: allowAll, mutate: func(p *v1.Pod) {
			v := hostPath("a", "/x", nil)
			v.EmptyDir = &v1.EmptyDirVolumeSource{}
			withVolumes([]v1.Volume{v})(p)
		}, wantErrs: []string{"spec.volumes[0]: Forbidden: may not specify more than 1 volume type"}},
		{name: "secret volume", mutate: withVolumes([]v1.Volume{{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "s", DefaultMode: ptr[int32](0o400)}}}},
			v1.VolumeMount{Name: "s", MountPath: "/s"}, v1.VolumeMount{Name: "s", MountPath: "/k", SubPath: "key"})},
		{name: "configMap volume items", mutate: withVolumes([]v1.Volume{{Name: "c", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
			LocalObjectReference: v1.LocalObjectReference{Name: "app"}, Optional: ptr(true),
			Items: []v1.KeyToPath{{Key: "a.conf", Path: "etc/a.conf", Mode: ptr[int32](0o600)}, {Key: "b", Path: "b"}}}}}}, mountOf("c", "/c"))},
		{name: "configMap volume bad", mutate: withVolumes([]v1.Volume{{Name: "c", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
			DefaultMode: ptr[int32](0o1000),
			Items:       []v1.KeyToPath{{Key: "a/b", Path: "x"}, {Key: "b", Path: "../y"}, {Key: "c", Path: "x", Mode: ptr[int32](-1)}, {Path: "z"}}}}}}),
			wantErrs: []string{
				"spec.volumes[0].configMap.name: Required value",
				"spec.volumes[0].configMap.defaultMode: Invalid value: 512",
				`spec.volumes[0].configMap.items[0].key: Invalid value: "a/b"`,
				`spec.volumes[0].configMap.items[1].path: Invalid value: "../y": must not start with '..'`,
				`spec.volumes[0].configMap.items[2].path: Duplicate value: "x"`,
				"spec.volumes[0].configMap.items[2].mode: Invalid value: -1",
				"spec.volumes[0].configMap.items[3].key: Required value",
			}},
		{name: "empty secret volume source", mutate: withVolumes([]v1.Volume{{Name: "d", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{}}}}),
			wantErrs: []string{"spec.volumes[0].secret.secretName: Required value"}},
		{name: "downwardAPI volume", mutate: withVolumes([]v1.Volume{downwardVol("info", ptr[int32](0o400),
			dItem("labels", "metadata.labels"), dItem("annotations", "metadata.annotations"), dItem("name", "metadata.name"),
			dItem("sub/ns", "metadata.namespace"), dItem("uid", "metadata.uid"), dItem("app", "metadata.labels['app']"),
			v1.DownwardAPIVolumeFile{Path: "mem", Mode: ptr[int32](0o600), ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "app", Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}},
		)}, mountOf("info", "/etc/podinfo"))},
		{name: "downwardAPI volume bad items", mutate: withVolumes([]v1.Volume{downwardVol("info", ptr[int32](0o1000),
			dItem("ip", "status.podIP"), dItem("../x", "metadata.name"), dItem("a", "metadata.name"), dItem("a", "metadata.uid"),
			v1.DownwardAPIVolumeFile{Path: "cpu", ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.cpu"}},
			v1.DownwardAPIVolumeFile{Path: "cpu2", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "db", Resource: "limits.cpu"}},
			v1.DownwardAPIVolumeFile{Path: "none"},
		)}, v1.VolumeMount{Name: "info", MountPath: "/i", SubPath: "a"}),
			wantErrs: []string{
				"spec.volumes[0].downwardAPI.defaultMode: Invalid value: 512",
				`spec.volumes[0].downwardAPI.items[0].fieldRef.fieldPath: Unsupported value: "status.podIP"`,
				`spec.volumes[0].downwardAPI.items[1].path: Invalid value: "../x": must not start with '..'`,
				`spec.volumes[0].downwardAPI.items[3].path: Duplicate value: "a"`,
				"spec.volumes[0].downwardAPI.items[4].resourceFieldRef.containerName: Required value",
				`spec.volumes[0].downwardAPI.items[5].resourceFieldRef.containerName: Not found: "db"`,
				"spec.volumes[0].downwardAPI.items[6]: Required value",
			}},
		{name: "projected downwardAPI volume", mutate: withVolumes([]v1.Volume{{Name: "p", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
			Sources: []v1.VolumeProjection{{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{dItem("name", "metadata.name")}}}},
		}}}}, mountOf("p", "/p"))},
		{name: "projected other sources", mutate: withVolumes([]v1.Volume{{Name: "p", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
			Sources: []v1.VolumeProjection{
				{ConfigMap: &v1.ConfigMapProjection{}}, {Secret: &v1.SecretProjection{Items: []v1.KeyToPath{{Key: "k", Path: "../k"}}}},
				{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token"}},
				{ClusterTrustBundle: &v1.ClusterTrustBundleProjection{Path: "ca.pem"}},
				{PodCertificate: &v1.PodCertificateProjection{SignerName: "example.com/foo"}},
			},
		}}}}, mountOf("p", "/p")),
			wantErrs: []string{
				"spec.volumes[0].projected.sources[0].configMap.name: Required value",
				"spec.volumes[0].projected.sources[1].secret.name: Required value",
				`spec.volumes[0].projected.sources[1].secret.items[0].path: Invalid value: "../k"`,
				"spec.volumes[0].projected.sources[2].serviceAccountToken: Forbidden: not supported by actorlet: only downwardAPI, configMap and secret sources are projected; a static pod has no service account token",
				"spec.volumes[0].projected.sources[3].clusterTrustBundle: Forbidden: not supported by actorlet: only downwardAPI, configMap and secret sources are projected; a static pod has no API server to read ClusterTrustBundles from",
				"spec.volumes[0].projected.sources[4].podCertificate: Forbidden: not supported by actorlet: only downwardAPI, configMap and secret sources are projected; a static pod has no API server to sign its certificate",
			}},
		{name: "volume name invalid", mutate: withVolumes([]v1.Volume{emptyDir("Data", "")}),
			wantErrs: []string{`spec.volumes[0].name: Invalid value: "Data"`}},
		{name: "volume name required", mutate: withVolumes([]v1.Volume{emptyDir("", "")}),
			wantErrs: []string{"spec.volumes[0].name: Required value"}},
		{name: "volume name duplicate", mutate: withVolumes([]v1.Volume{emptyDir("a", ""), emptyDir("a", "")}),
			wantErrs: []string{`spec.volumes[1].name: Duplicate value: "a"`}},
		{name: "mount of an unknown volume", mutate: withVolumes(nil, mountOf("data", "/d")),
			wantErrs: []string{`spec.containers[0].volumeMounts[0].name: Not found: "data"`}},
		{name: "mount name required", mutate: withVolumes(nil, mountOf("", "/d")),
			wantErrs: []string{"spec.containers[0].volumeMounts[0].name: Required value"}},
		{name: "mountPath required", mutate: withVolumes([]v1.Volume{emptyDir("a", "")}, mountOf("a", "")),
			wantErrs: []string{"spec.containers[0].volumeMounts[0].mountPath: Required value"}},
		{name: "mountPath relative", mutate: withVolumes([]v1.Volume{emptyDir("a", "")}, mountOf("a", "data")),
			wantErrs: []string{`spec.containers[0].volumeMounts[0].mountPath: Invalid value: "data": must be an absolute path`}},
		{name: "mountPath root", mutate: withVolumes([]v1.Volume{emptyDir("a", "")}, mountOf("a", "/")),
			wantErrs: []string{`spec.containers[0].volumeMounts[0].mountPath: Invalid value: "/": must not be the root directory`}},
		{name: "mountPath duplicate", mutate: withVolumes([]v1.Volume{emptyDir("a", ""), emptyDir("b", "")}, mountOf("a", "/d"), mountOf("b", "/d/")),
			wantErrs: []string{`spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/d/": must be unique`}},
		{name: "subPath absolute", mutate: withVolumes([]v1.Volume{emptyDir("a", "")}, v1.VolumeMount{Name: "a", MountPath: "/d", SubPath: "/etc"}),
			wantErrs: []string{`spec.containers[0].volumeMounts[0].subPath: Invalid value: "/etc": must be a relative path`}},
		{name: "subPath backstep", mutate: withVolumes([]v1.Volume{emptyDir("a", "")}, v1.VolumeMount{Name: "a", MountPath: "/d", SubPath: "x/../../etc"}),
			wantErrs: []string{`spec.containers[0].volumeMounts[0].subPath: Invalid value: "x/../../etc": must not contain '..'`}},
		{name: "subPathExpr", mutate: withVolumes([]v1.Volume{emptyDir("a", "")}, v1.VolumeMount{Name: "a", MountPath: "/d", SubPathExpr: "$(POD)"}),
			wantErrs: []string{"spec.containers[0].volumeMounts[0].subPathExpr: Forbidden: not supported by actorlet"}},
		{name: "mountPropagation None", mutate: withVolumes([]v1.Volume{emptyDir("a", "")},
			v1.VolumeMount{Name: "a", MountPath: "/d", MountPropagation: ptr(v1.MountPropagationNone)})},
		{name: "mountPropagation HostToContainer", mutate: withVolumes([]v1.Volume{emptyDir("a", "")},
			v1.VolumeMount{Name: "a", MountPath: "/d", MountPropagation: ptr(v1.MountPropagationHostToContainer)}),
			wantErrs: []string{"spec.containers[0].volumeMounts[0].mountPropagation: Forbidden: not supported by actorlet"}},
		{name: "recursiveReadOnly IfPossible", mutate: withVolumes([]v1.Volume{emptyDir("a", "")},
			v1.VolumeMount{Name: "a", MountPath: "/d", ReadOnly: true, RecursiveReadOnly: ptr(v1.RecursiveReadOnlyIfPossible)})},
		{name: "recursiveReadOnly Enabled", mutate: withVolumes([]v1.Volume{emptyDir("a", "")},
			v1.VolumeMount{Name: "a", MountPath: "/d", ReadOnly: true, RecursiveReadOnly: ptr(v1.RecursiveReadOnlyEnabled)}),
			wantErrs: []string{"spec.containers[0].volumeMounts[0].recursiveReadOnly: Forbidden: not supported by actorlet"}},
		{name: "volumeDevices", mutate: func(p *v1.Pod) {
			p.Spec.Containers[0].VolumeDevices = []v1.VolumeDevice{{Name: "a", DevicePath: "/dev/x"}}
		}, wantErrs: []string{"spec.containers[0].volumeDevices: Forbidden: not supported by actorlet"}},

		// Resources.
		{name: "cpu and memory limits and requests", mutate: setResources(
			v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m"), v1.ResourceMemory: resource.MustParse("128Mi")},
			v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("64Mi")})},
		{name: "limits only: requests follow, no warning", mutate: func(p *v1.Pod) {
			setResources(v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("1Gi")}, nil)(p)
			SetDefaults(p)
		}},
		{name: "zero limits", mutate: setResources(v1.ResourceList{v1.ResourceCPU: resource.MustParse("0"), v1.ResourceMemory: resource.MustParse("0")}, nil)},
		{name: "ephemeral-storage request", mutate: setResources(nil, v1.ResourceList{v1.ResourceEphemeralStorage: resource.MustParse("1Gi")})},
		{name: "ephemeral-storage limit is a warning", mutate: func(p *v1.Pod) {
			setResources(v1.ResourceList{v1.ResourceEphemeralStorage: resource.MustParse("1Gi")}, nil)(p)
			SetDefaults(p)
		}, wantWarns: []string{"spec.containers[0].resources.limits[ephemeral-storage]: ignored by actorlet: ephemeral storage is not limited"}},
		{name: "memory limit below Docker's minimum", mutate: setResources(v1.ResourceList{v1.ResourceMemory: resource.MustParse("4Mi")}, nil),
			wantErrs: []string{`spec.containers[0].resources.limits[memory]: Invalid value: "4Mi": must be 0 or at least 6Mi`}},
		{name: "memory limit at Docker's minimum", mutate: setResources(v1.ResourceList{v1.ResourceMemory: resource.MustParse("6Mi")}, nil)},
		{name: "negative limit", mutate: setResources(v1.ResourceList{v1.ResourceCPU: resource.MustParse("-1")}, nil),
			wantErrs: []string{`spec.containers[0].resources.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0`}},
		{name: "negative request", mutate: setResources(nil, v1.ResourceList{v1.ResourceMemory: resource.MustParse("-1")}),
			wantErrs: []string{`spec.containers[0].resources.requests[memory]: Invalid value: "-1"`}},
		{name: "request above limit", mutate: setResources(
			v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")}, v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}),
			wantErrs: []string{`spec.containers[0].resources.requests[cpu]: Invalid value: "1": must be less than or equal to cpu limit of 500m`}},
		{name: "hugepages", mutate: func(p *v1.Pod) {
			setResources(v1.ResourceList{"hugepages-2Mi": resource.MustParse("2Mi"), v1.ResourceMemory: resource.MustParse("64Mi")}, nil)(p)
			SetDefaults(p)
		}, wantErrs: []string{
			"spec.containers[0].resources.limits[hugepages-2Mi]: Forbidden: not supported by actorlet: only cpu and memory limits are applied",
			"spec.containers[0].resources.requests[hugepages-2Mi]: Forbidden: not supported by actorlet",
		}},
		{name: "extended resource", mutate: setResources(v1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}, nil),
			wantErrs: []string{"spec.containers[0].resources.limits[nvidia.com/gpu]: Forbidden: not supported by actorlet"}},
		// Pod-level resources, checked as Kubernetes checks them.
		{name: "pod-level resources", mutate: podResources(v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("200Mi")},
			v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("100Mi")})},
		{name: "pod-level pids (not a pod-level resource of Kubernetes 1.37)", mutate: podResources(v1.ResourceList{"pids": resource.MustParse("2048")}, nil),
			wantErrs: []string{`spec.resources.limits[pids]: Unsupported value: "pids": supported values: "cpu", "memory"`}},
		{name: "pod-level hugepages", mutate: podResources(v1.ResourceList{"hugepages-2Mi": resource.MustParse("2Mi")}, nil),
			wantErrs: []string{"spec.resources.limits[hugepages-2Mi]: Forbidden: not supported by actorlet"}},
		{name: "pod-level memory limit below Docker's minimum", mutate: podResources(v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Mi")}, nil),
			wantErrs: []string{`spec.resources.limits[memory]: Invalid value: "1Mi": must be 0 or at least 6Mi`}},
		{name: "pod-level request above its limit", mutate: podResources(v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}, v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}),
			wantErrs: []string{`spec.resources.requests[cpu]: Invalid value: "2": must be less than or equal to cpu limit of 1`}},
		{name: "container limit above the pod's", mutate: func(p *v1.Pod) {
			podResources(v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")}, nil)(p)
			setResources(v1.ResourceList{v1.ResourceMemory: resource.MustParse("128Mi")}, nil)(p)
		}, wantErrs: []string{`spec.containers[0].resources.limits[memory]: Invalid value: "128Mi": must be less than or equal to pod limits of 64Mi`}},
		{name: "container requests above the pod's", mutate: func(p *v1.Pod) {
			podResources(nil, v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")})(p)
			setResources(nil, v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m")})(p)
		}, wantErrs: []string{`spec.resources.requests[cpu]: Invalid value: "100m": must be greater than or equal to aggregate container requests of 250m`}},

		// Security.
		{name: "runAsUser and runAsGroup", mutate: setSC(&v1.SecurityContext{RunAsUser: ptr(int64(1000)), RunAsGroup: ptr(int64(1000))})},
		{name: "runAsUser 0", mutate: setSC(&v1.SecurityContext{RunAsUser: ptr(int64(0))})},
		{name: "runAsUser negative", mutate: setSC(&v1.SecurityContext{RunAsUser: ptr(int64(-1))}),
			wantErrs: []string{"spec.containers[0].securityContext.runAsUser: Invalid value: -1"}},
		{name: "pod runAsGroup negative", mutate: func(p *v1.Pod) {
			p.Spec.SecurityContext.RunAsUser, p.Spec.SecurityContext.RunAsGroup = ptr(int64(1)), ptr(int64(-1))
		}, wantErrs: []string{"spec.securityContext.runAsGroup: Invalid value: -1"}},
		{name: "pod runAsUser and runAsGroup", mutate: func(p *v1.Pod) {
			p.Spec.SecurityContext.RunAsUser, p.Spec.SecurityContext.RunAsGroup = ptr(int64(1000)), ptr(int64(1000))
		}},
		{name: "runAsGroup without runAsUser", mutate: setSC(&v1.SecurityContext{RunAsGroup: ptr(int64(1000))}),
			wantErrs: []string{"spec.containers[0].securityContext.runAsGroup: Forbidden: not supported by actorlet: runAsGroup needs runAsUser"}},
		{name: "pod runAsGroup without runAsUser: reported once", mutate: func(p *v1.Pod) {
			addContainer(p, "side")
			p.Spec.SecurityContext.RunAsGroup = ptr(int64(1000))
		}, wantErrs: []string{"spec.securityContext.runAsGroup: Forbidden: not supported by actorlet: runAsGroup needs runAsUser"}},
		{name: "container runAsGroup with pod runAsUser", mutate: func(p *v1.Pod) {
			p.Spec.SecurityContext.RunAsUser = ptr(int64(1000))
			setSC(&v1.SecurityContext{RunAsGroup: ptr(int64(2000))})(p)
		}},
		{name: "runAsNonRoot with runAsUser", mutate: setSC(&v1.SecurityContext{RunAsNonRoot: ptr(true), RunAsUser: ptr(int64(1000))})},
		{name: "runAsNonRoot without runAsUser", mutate: setSC(&v1.SecurityContext{RunAsNonRoot: ptr(true)}),
			wantErrs: []string{"spec.containers[0].securityContext.runAsNonRoot: Forbidden: not supported by actorlet: runAsNonRoot needs runAsUser"}},
		{name: "pod runAsNonRoot with container runAsUser 0", mutate: func(p *v1.Pod) {
			p.Spec.SecurityContext.RunAsNonRoot = ptr(true)
			setSC(&v1.SecurityContext{RunAsUser: ptr(int64(0))})(p)
		}, wantErrs: []string{"spec.containers[0].securityContext.runAsUser: Invalid value: 0: must not be 0 when runAsNonRoot is true"}},
		{name: "readOnlyRootFilesystem", mutate: setSC(&v1.SecurityContext{ReadOnlyRootFilesystem: ptr(true)})},
		{name: "allowPrivilegeEscalation false", mutate: setSC(&v1.SecurityContext{AllowPrivilegeEscalation: ptr(false)})},
		{name: "capabilities", mutate: setSC(&v1.SecurityContext{Capabilities: &v1.Capabilities{
			Add: []v1.Capability{"NET_ADMIN", "CAP_SYS_TIME", "net_raw"}, Drop: []v1.Capability{"ALL"},
		}})},
		{name: "capability unknown", mutate: setSC(&v1.SecurityContext{Capabilities: &v1.Capabilities{Add: []v1.Capability{"NET_ADMIN", "FLY"}}}),
			wantErrs: []string{`spec.containers[0].securityContext.capabilities.add[1]: Invalid value: "FLY"`}},
		{name: "allowPrivilegeEscalation false and privileged", opts: allowAll,
			mutate:   setSC(&v1.SecurityContext{Privileged: ptr(true), AllowPrivilegeEscalation: ptr(false)}),
			wantErrs: []string{"spec.containers[0].securityContext.allowPrivilegeEscalation: Invalid value: false: cannot be false when privileged is true"}},
		{name: "allowPrivilegeEscalation false and SYS_ADMIN", mutate: setSC(&v1.SecurityContext{
			AllowPrivilegeEscalation: ptr(false), Capabilities: &v1.Capabilities{Add: []v1.Capability{"SYS_ADMIN"}},
		}), wantErrs: []string{"spec.containers[0].securityContext.allowPrivilegeEscalation: Invalid value: false: cannot be false when capabilities.add has SYS_ADMIN"}},
		{name: "privileged not allowed with host path allowed", opts: ValidationOptions{AllowHostPath: true},
			mutate:   setSC(&v1.SecurityContext{Privileged: ptr(true)}),
			wantErrs: []string{"spec.containers[0].securityContext.privileged: Forbidden: not allowed on this node"}},
		{name: "procMount Unmasked", mutate: setSC(&v1.SecurityContext{ProcMount: ptr(v1.UnmaskedProcMount)}),
			wantErrs: []string{"spec.containers[0].securityContext.procMount: Forbidden: not supported by actorlet"}},
		{name: "supplementalGroups", mutate: func(p *v1.Pod) { p.Spec.SecurityContext.SupplementalGroups = []int64{5} }},
		{name: "supplementalGroups invalid", mutate: func(p *v1.Pod) { p.Spec.SecurityContext.SupplementalGroups = []int64{5, -1} },
			wantErrs: []string{"spec.securityContext.supplementalGroups[1]: Invalid value: -1"}},
		{name: "supplementalGroupsPolicy Merge", mutate: func(p *v1.Pod) {
			p.Spec.SecurityContext.SupplementalGroupsPolicy = ptr(v1.SupplementalGroupsPolicyMerge)
		}},
		{name: "supplementalGroupsPolicy Strict", mutate: func(p *v1.Pod) {
			p.Spec.SecurityContext.SupplementalGroupsPolicy = ptr(v1.SupplementalGroupsPolicyStrict)
		}, wantErrs: []string{"spec.securityContext.supplementalGroupsPolicy: Forbidden: not supported by actorlet: only Merge: Docker always adds the groups"}},
		{name: "fsGroup and fsGroupChangePolicy", mutate: func(p *v1.Pod) {
			p.Spec.SecurityContext.FSGroup = ptr(int64(2000))
			p.Spec.SecurityContext.FSGroupChangePolicy = ptr(v1.FSGroupChangeOnRootMismatch)
		}},
		{name: "fsGroup invalid", mutate: func(p *v1.Pod) { p.Spec.SecurityContext.FSGroup = ptr(int64(-2)) },
			wantErrs: []string{"spec.securityContext.fsGroup: Invalid value: -2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := bare()
			SetDefaults(pod)
			if tt.mutate != nil {
				tt.mutate(pod)
			}
			warnings, err := ValidateWith(pod, tt.opts)
			var got []string
			if err != nil {
				var agg utilerrors.Aggregate
				if !errors.As(err, &agg) {
					t.Fatalf("err %T is not an Aggregate: %v", err, err)
				}
				for _, e := range agg.Errors() {
					got = append(got, e.Error())
				}
			}
			matchAll(t, "error", got, tt.wantErrs)
			matchAll(t, "warning", warnings, tt.wantWarns)
		})
	}
}

// TestValidateIsStrictValidateWith: Validate allows neither privileged
// containers nor hostPath volumes.
func TestValidateIsStrictValidateWith(t *testing.T) {
	pod := bare()
	SetDefaults(pod)
	withVolumes([]v1.Volume{hostPath("logs", "/var/log", nil)}, mountOf("logs", "/logs"))(pod)
	setSC(&v1.SecurityContext{Privileged: ptr(true)})(pod)
	_, err := Validate(pod)
	for _, want := range []string{"spec.volumes[0].hostPath: Forbidden", "spec.containers[0].securityContext.privileged: Forbidden"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v, want %q", err, want)
		}
	}
	if _, err := ValidateWith(pod, ValidationOptions{AllowHostPath: true, AllowPrivileged: true}); err != nil {
		t.Errorf("ValidateWith(allow all): %v", err)
	}
}

func fieldEnv(name, path string) v1.EnvVar {
	return v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}}
}

func setEnvVars(env ...v1.EnvVar) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Spec.Containers[0].Env = env }
}

func emptyDir(name string, medium v1.StorageMedium) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: medium}}}
}

func hostPath(name, path string, typ *v1.HostPathType) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: path, Type: typ}}}
}

func mountOf(name, path string) v1.VolumeMount { return v1.VolumeMount{Name: name, MountPath: path} }

// withVolumes sets the pod's volumes and its first container's mounts.
func withVolumes(vols []v1.Volume, mounts ...v1.VolumeMount) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Volumes = vols
		p.Spec.Containers[0].VolumeMounts = mounts
	}
}

func setResources(limits, requests v1.ResourceList) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Containers[0].Resources = v1.ResourceRequirements{Limits: limits, Requests: requests}
	}
}

// addContainer appends a defaulted copy of the first container, renamed.
func addContainer(p *v1.Pod, name string) {
	c := *p.Spec.Containers[0].DeepCopy()
	c.Name = name
	p.Spec.Containers = append(p.Spec.Containers, c)
}

// resourceEnv is an env var from a resourceFieldRef (divisor "" unset).
func resourceEnv(name, res, container, divisor string) v1.EnvVar {
	rf := &v1.ResourceFieldSelector{Resource: res, ContainerName: container}
	if divisor != "" {
		rf.Divisor = resource.MustParse(divisor)
	}
	return v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{ResourceFieldRef: rf}}
}

func downwardVol(name string, mode *int32, items ...v1.DownwardAPIVolumeFile) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{Items: items, DefaultMode: mode}}}
}

func dItem(p, fieldPath string) v1.DownwardAPIVolumeFile {
	return v1.DownwardAPIVolumeFile{Path: p, FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: fieldPath}}
}

// podResources sets the pod-level limits and requests.
func podResources(limits, requests v1.ResourceList) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Spec.Resources = &v1.ResourceRequirements{Limits: limits, Requests: requests} }
}
