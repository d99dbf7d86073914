package podsync

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/actorlet/actorlet/internal/manifest"
)

// TestValidatedPodsBuild holds the promise of AppSpecWith: a pod that
// manifest.ValidateWith accepts builds with the same options, for every
// app container. Each mutation is tried under every combination of the
// operator's options.
func TestValidatedPodsBuild(t *testing.T) {
	emptyDir := func(name string, medium v1.StorageMedium) v1.Volume {
		return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: medium}}}
	}
	hostPath := func(name, path string, typ v1.HostPathType) v1.Volume {
		return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: path, Type: &typ}}}
	}
	env := func(e ...v1.EnvVar) func(*v1.Pod) { return func(p *v1.Pod) { p.Spec.Containers[0].Env = e } }
	sc := func(s *v1.SecurityContext) func(*v1.Pod) {
		return func(p *v1.Pod) { p.Spec.Containers[0].SecurityContext = s }
	}
	vols := func(v []v1.Volume, m ...v1.VolumeMount) func(*v1.Pod) {
		return func(p *v1.Pod) { p.Spec.Volumes, p.Spec.Containers[0].VolumeMounts = v, m }
	}
	mutations := map[string]func(*v1.Pod){
		"bare":               func(*v1.Pod) {},
		"fieldRefs":          env(fieldEnv("A", "metadata.name"), fieldEnv("B", "metadata.labels['x']"), fieldEnv("C", "spec.nodeName")),
		"podIP":              env(fieldEnv("A", "status.podIP")),
		"status fields":      env(fieldEnv("A", "status.podIPs"), fieldEnv("B", "status.hostIP"), fieldEnv("C", "status.hostIPs")),
		"resourceFieldRef":   env(v1.EnvVar{Name: "M", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}}}),
		"resource hugepages": env(v1.EnvVar{Name: "M", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.hugepages-2Mi"}}}),
		"downwardAPI": vols([]v1.Volume{{Name: "d", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{Items: []v1.DownwardAPIVolumeFile{
			{Path: "l", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
			{Path: "c", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "app", Resource: "limits.cpu"}},
		}}}}}, v1.VolumeMount{Name: "d", MountPath: "/d"}),
		"downwardAPI subPath": vols([]v1.Volume{{Name: "d", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{}}}}, v1.VolumeMount{Name: "d", MountPath: "/d", SubPath: "x"}),
		"downwardAPI status": vols([]v1.Volume{{Name: "d", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{Items: []v1.DownwardAPIVolumeFile{
			{Path: "ip", FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.podIP"}},
		}}}}}, v1.VolumeMount{Name: "d", MountPath: "/d"}),
		"projected configMap": vols([]v1.Volume{{Name: "p", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
			Sources: []v1.VolumeProjection{{ConfigMap: &v1.ConfigMapProjection{}}},
		}}}}, v1.VolumeMount{Name: "p", MountPath: "/p"}),
		"bad fieldPath":    env(fieldEnv("A", "spec.nothing")),
		"secretKeyRef":     env(v1.EnvVar{Name: "S", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{Key: "k"}}}),
		"emptyDir":         vols([]v1.Volume{emptyDir("a", "")}, v1.VolumeMount{Name: "a", MountPath: "/a", SubPath: "x", ReadOnly: true}),
		"no source":        vols([]v1.Volume{{Name: "a"}}, v1.VolumeMount{Name: "a", MountPath: "/a"}),
		"memory":           vols([]v1.Volume{emptyDir("a", v1.StorageMediumMemory)}, v1.VolumeMount{Name: "a", MountPath: "/a"}),
		"memory subPath":   vols([]v1.Volume{emptyDir("a", v1.StorageMediumMemory)}, v1.VolumeMount{Name: "a", MountPath: "/a", SubPath: "x"}),
		"hugepages":        vols([]v1.Volume{emptyDir("a", v1.StorageMediumHugePages)}, v1.VolumeMount{Name: "a", MountPath: "/a"}),
		"hostPath":         vols([]v1.Volume{hostPath("h", "/var/log", v1.HostPathDirectory)}, v1.VolumeMount{Name: "h", MountPath: "/h", SubPath: "x"}),
		"secret volume":    vols([]v1.Volume{{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{}}}}, v1.VolumeMount{Name: "s", MountPath: "/s"}),
		"empty projected":  vols([]v1.Volume{{Name: "s", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{}}}}, v1.VolumeMount{Name: "s", MountPath: "/s"}),
		"unknown volume":   vols(nil, v1.VolumeMount{Name: "x", MountPath: "/x"}),
		"subPath backstep": vols([]v1.Volume{emptyDir("a", "")}, v1.VolumeMount{Name: "a", MountPath: "/a", SubPath: "../x"}),
		"propagation":      vols([]v1.Volume{emptyDir("a", "")}, v1.VolumeMount{Name: "a", MountPath: "/a", MountPropagation: ptr.To(v1.MountPropagationHostToContainer)}),
		"subPathExpr":      vols([]v1.Volume{emptyDir("a", "")}, v1.VolumeMount{Name: "a", MountPath: "/a", SubPathExpr: "x"}),
		"rro enabled":      vols([]v1.Volume{emptyDir("a", "")}, v1.VolumeMount{Name: "a", MountPath: "/a", RecursiveReadOnly: ptr.To(v1.RecursiveReadOnlyEnabled)}),
		"privileged":       sc(&v1.SecurityContext{Privileged: ptr.To(true)}),
		"group alone":      sc(&v1.SecurityContext{RunAsGroup: ptr.To(int64(5))}),
		"user and group":   sc(&v1.SecurityContext{RunAsUser: ptr.To(int64(5)), RunAsGroup: ptr.To(int64(5)), ReadOnlyRootFilesystem: ptr.To(true)}),
		"pod group alone": func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{RunAsGroup: ptr.To(int64(5))}
		},
		"caps": sc(&v1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &v1.Capabilities{Add: []v1.Capability{"NET_ADMIN"}, Drop: []v1.Capability{"ALL"}}}),
		"resources": func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Limits = v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("1Gi")}
		},
		"hostPort": func(p *v1.Pod) {
			p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080, HostIP: "127.0.0.1"}}
		},
	}
	accepted := 0
	for name, mutate := range mutations {
		for _, allow := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			vopts := manifest.ValidationOptions{AllowPrivileged: allow[0], AllowHostPath: allow[1]}
			sopts := SpecOptions{RootDir: "/var/lib/actorlet", AllowPrivileged: allow[0], AllowHostPath: allow[1],
				HostIPs: []string{"10.0.0.5"}, Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("4Gi")}}
			t.Run(fmt.Sprintf("%s/%+v", name, vopts), func(t *testing.T) {
				pod := &v1.Pod{}
				pod.Name, pod.UID = "web", "uid-1"
				pod.Spec.Containers = []v1.Container{{Name: "app", Image: "img:1"}}
				manifest.SetDefaults(pod)
				mutate(pod)
				manifest.SetDefaults(pod)
				if _, err := manifest.ValidateWith(pod, vopts); err != nil {
					return
				}
				accepted++
				for i := range pod.Spec.Containers {
					if _, err := AppSpecWith(sopts, node, pod, &pod.Spec.Containers[i], "sb", 0); err != nil {
						t.Errorf("validated pod does not build: %v", err)
					}
				}
				SandboxSpec(node, pod, "pause", 0)
				PodDirs(sopts, pod)
				if _, err := HostSetupOf(sopts, pod); err != nil {
					t.Errorf("validated pod's volumes cannot be set up: %v", err)
				}
			})
		}
	}
	if accepted < 30 {
		t.Errorf("only %d cases validated: the test checks too little", accepted)
	}
}
