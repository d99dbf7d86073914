package manifest

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// bare is a pod as a minimal manifest decodes: nothing defaulted. It has no
// init container, as actorlet rejects them; addInit adds one.
func bare() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: v1.PodSpec{
			Containers: []v1.Container{{Name: "app", Image: "nginx:1.25"}},
		},
	}
}

// addInit gives p an undefaulted init container "init", for the tests about
// init containers (Validate rejects a pod that has one).
func addInit(p *v1.Pod) {
	p.Spec.InitContainers = []v1.Container{{Name: "init", Image: "busybox:1.36"}}
}

func TestSetDefaults(t *testing.T) {
	httpProbe := func() *v1.Probe {
		return &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Port: intstr.FromInt32(80)}}}
	}
	wantProbe := &v1.Probe{
		ProbeHandler:     v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Port: intstr.FromInt32(80), Path: "/", Scheme: v1.URISchemeHTTP}},
		TimeoutSeconds:   1,
		PeriodSeconds:    10,
		SuccessThreshold: 1,
		FailureThreshold: 3,
	}
	tests := []struct {
		name   string
		mutate func(*v1.Pod) // applied to bare() before SetDefaults
		got    func(*v1.Pod) any
		want   any
	}{
		{"namespace", nil, func(p *v1.Pod) any { return p.Namespace }, "default"},
		{"namespace kept", func(p *v1.Pod) { p.Namespace = "kube-system" }, func(p *v1.Pod) any { return p.Namespace }, "kube-system"},
		{"restartPolicy", nil, func(p *v1.Pod) any { return p.Spec.RestartPolicy }, v1.RestartPolicyAlways},
		{"restartPolicy kept", func(p *v1.Pod) { p.Spec.RestartPolicy = v1.RestartPolicyNever }, func(p *v1.Pod) any { return p.Spec.RestartPolicy }, v1.RestartPolicyNever},
		{"dnsPolicy", nil, func(p *v1.Pod) any { return p.Spec.DNSPolicy }, v1.DNSClusterFirst},
		{"terminationGracePeriodSeconds", nil, func(p *v1.Pod) any { return *p.Spec.TerminationGracePeriodSeconds }, int64(30)},
		{"terminationGracePeriodSeconds 0 kept", func(p *v1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr(int64(0)) }, func(p *v1.Pod) any { return *p.Spec.TerminationGracePeriodSeconds }, int64(0)},
		{"schedulerName", nil, func(p *v1.Pod) any { return p.Spec.SchedulerName }, "default-scheduler"},
		{"securityContext", nil, func(p *v1.Pod) any { return p.Spec.SecurityContext }, &v1.PodSecurityContext{}},
		{"enableServiceLinks", nil, func(p *v1.Pod) any { return *p.Spec.EnableServiceLinks }, true},
		{"enableServiceLinks false kept", func(p *v1.Pod) { p.Spec.EnableServiceLinks = ptr(false) }, func(p *v1.Pod) any { return *p.Spec.EnableServiceLinks }, false},
		{"no tolerations", nil, func(p *v1.Pod) any { return p.Spec.Tolerations }, []v1.Toleration(nil)},

		{"terminationMessagePath app", nil, func(p *v1.Pod) any { return p.Spec.Containers[0].TerminationMessagePath }, "/dev/termination-log"},
		{"terminationMessagePath init", addInit, func(p *v1.Pod) any { return p.Spec.InitContainers[0].TerminationMessagePath }, "/dev/termination-log"},
		{"terminationMessagePolicy app", nil, func(p *v1.Pod) any { return p.Spec.Containers[0].TerminationMessagePolicy }, v1.TerminationMessageReadFile},
		{"terminationMessagePolicy init", addInit, func(p *v1.Pod) any { return p.Spec.InitContainers[0].TerminationMessagePolicy }, v1.TerminationMessageReadFile},

		{"pull tagged", nil, func(p *v1.Pod) any { return p.Spec.Containers[0].ImagePullPolicy }, v1.PullIfNotPresent},
		{"pull init tagged", addInit, func(p *v1.Pod) any { return p.Spec.InitContainers[0].ImagePullPolicy }, v1.PullIfNotPresent},
		{"pull untagged", func(p *v1.Pod) { p.Spec.Containers[0].Image = "nginx" }, func(p *v1.Pod) any { return p.Spec.Containers[0].ImagePullPolicy }, v1.PullAlways},
		{"pull init untagged", func(p *v1.Pod) { addInit(p); p.Spec.InitContainers[0].Image = "busybox" }, func(p *v1.Pod) any { return p.Spec.InitContainers[0].ImagePullPolicy }, v1.PullAlways},
		{"pull latest", func(p *v1.Pod) { p.Spec.Containers[0].Image = "nginx:latest" }, func(p *v1.Pod) any { return p.Spec.Containers[0].ImagePullPolicy }, v1.PullAlways},
		{"pull digest", func(p *v1.Pod) { p.Spec.Containers[0].Image = "nginx@sha256:" + sha }, func(p *v1.Pod) any { return p.Spec.Containers[0].ImagePullPolicy }, v1.PullIfNotPresent},
		{"pull latest with digest", func(p *v1.Pod) { p.Spec.Containers[0].Image = "nginx:latest@sha256:" + sha }, func(p *v1.Pod) any { return p.Spec.Containers[0].ImagePullPolicy }, v1.PullAlways},
		{"pull registry port untagged", func(p *v1.Pod) { p.Spec.Containers[0].Image = "localhost:5000/team/nginx" }, func(p *v1.Pod) any { return p.Spec.Containers[0].ImagePullPolicy }, v1.PullAlways},
		{"pull registry port tagged", func(p *v1.Pod) { p.Spec.Containers[0].Image = "localhost:5000/team/nginx:2" }, func(p *v1.Pod) any { return p.Spec.Containers[0].ImagePullPolicy }, v1.PullIfNotPresent},
		{"pull kept", func(p *v1.Pod) {
			p.Spec.Containers[0].Image, p.Spec.Containers[0].ImagePullPolicy = "nginx", v1.PullNever
		}, func(p *v1.Pod) any { return p.Spec.Containers[0].ImagePullPolicy }, v1.PullNever},

		{"downwardAPI volume", func(p *v1.Pod) {
			p.Spec.Volumes = []v1.Volume{{Name: "d", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{
				Items: []v1.DownwardAPIVolumeFile{{Path: "l", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}}},
			}}}}
		}, func(p *v1.Pod) any { return p.Spec.Volumes[0].DownwardAPI }, &v1.DownwardAPIVolumeSource{
			DefaultMode: ptr(int32(0o644)),
			Items:       []v1.DownwardAPIVolumeFile{{Path: "l", FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.labels"}}},
		}},
		{"projected volume", func(p *v1.Pod) {
			p.Spec.Volumes = []v1.Volume{{Name: "d", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
				DefaultMode: ptr(int32(0o400)),
				Sources: []v1.VolumeProjection{{DownwardAPI: &v1.DownwardAPIProjection{
					Items: []v1.DownwardAPIVolumeFile{{Path: "n", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
				}}},
			}}}}
		}, func(p *v1.Pod) any { return p.Spec.Volumes[0].Projected }, &v1.ProjectedVolumeSource{
			DefaultMode: ptr(int32(0o400)),
			Sources: []v1.VolumeProjection{{DownwardAPI: &v1.DownwardAPIProjection{
				Items: []v1.DownwardAPIVolumeFile{{Path: "n", FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
			}}},
		}},

		{"port protocol", func(p *v1.Pod) { p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80}} },
			func(p *v1.Pod) any { return p.Spec.Containers[0].Ports[0] }, v1.ContainerPort{ContainerPort: 80, Protocol: v1.ProtocolTCP}},
		{"port protocol kept", func(p *v1.Pod) {
			p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 53, Protocol: v1.ProtocolUDP}}
		},
			func(p *v1.Pod) any { return p.Spec.Containers[0].Ports[0].Protocol }, v1.ProtocolUDP},
		{"port init protocol", func(p *v1.Pod) { addInit(p); p.Spec.InitContainers[0].Ports = []v1.ContainerPort{{ContainerPort: 81}} },
			func(p *v1.Pod) any { return p.Spec.InitContainers[0].Ports[0].Protocol }, v1.ProtocolTCP},
		{"hostPort without hostNetwork", func(p *v1.Pod) { p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80}} },
			func(p *v1.Pod) any { return p.Spec.Containers[0].Ports[0].HostPort }, int32(0)},
		{"hostPort under hostNetwork", func(p *v1.Pod) {
			p.Spec.HostNetwork = true
			p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80}}
		}, func(p *v1.Pod) any { return p.Spec.Containers[0].Ports[0].HostPort }, int32(80)},
		{"hostPort under hostNetwork init", func(p *v1.Pod) {
			addInit(p)
			p.Spec.HostNetwork = true
			p.Spec.InitContainers[0].Ports = []v1.ContainerPort{{ContainerPort: 81}}
		}, func(p *v1.Pod) any { return p.Spec.InitContainers[0].Ports[0].HostPort }, int32(81)},
		{"hostPort under hostNetwork kept", func(p *v1.Pod) {
			p.Spec.HostNetwork = true
			p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
		}, func(p *v1.Pod) any { return p.Spec.Containers[0].Ports[0].HostPort }, int32(8080)},

		{"liveness probe", func(p *v1.Pod) { p.Spec.Containers[0].LivenessProbe = httpProbe() }, func(p *v1.Pod) any { return p.Spec.Containers[0].LivenessProbe }, wantProbe},
		{"readiness probe", func(p *v1.Pod) { p.Spec.Containers[0].ReadinessProbe = httpProbe() }, func(p *v1.Pod) any { return p.Spec.Containers[0].ReadinessProbe }, wantProbe},
		{"startup probe", func(p *v1.Pod) { p.Spec.Containers[0].StartupProbe = httpProbe() }, func(p *v1.Pod) any { return p.Spec.Containers[0].StartupProbe }, wantProbe},
		{"init probe", func(p *v1.Pod) { addInit(p); p.Spec.InitContainers[0].StartupProbe = httpProbe() }, func(p *v1.Pod) any { return p.Spec.InitContainers[0].StartupProbe }, wantProbe},
		{"probe values kept", func(p *v1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &v1.Probe{
				ProbeHandler:   v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Scheme: v1.URISchemeHTTPS}},
				TimeoutSeconds: 5, PeriodSeconds: 7, SuccessThreshold: 2, FailureThreshold: 9,
			}
		}, func(p *v1.Pod) any { return p.Spec.Containers[0].LivenessProbe }, &v1.Probe{
			ProbeHandler:   v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Scheme: v1.URISchemeHTTPS}},
			TimeoutSeconds: 5, PeriodSeconds: 7, SuccessThreshold: 2, FailureThreshold: 9,
		}},
		{"grpc probe service", func(p *v1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: 9000}}}
		}, func(p *v1.Pod) any { return *p.Spec.Containers[0].LivenessProbe.GRPC.Service }, ""},
		{"lifecycle httpGet", func(p *v1.Pod) {
			p.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Port: intstr.FromInt32(80)}}}
		}, func(p *v1.Pod) any { return p.Spec.Containers[0].Lifecycle.PreStop.HTTPGet },
			&v1.HTTPGetAction{Port: intstr.FromInt32(80), Path: "/", Scheme: v1.URISchemeHTTP}},
		{"env fieldRef apiVersion", func(p *v1.Pod) {
			p.Spec.Containers[0].Env = []v1.EnvVar{{Name: "POD", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
		}, func(p *v1.Pod) any { return p.Spec.Containers[0].Env[0].ValueFrom.FieldRef.APIVersion }, "v1"},
		{"requests from limits", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources = v1.ResourceRequirements{
				Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("1Gi")},
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")},
			}
		}, func(p *v1.Pod) any { return p.Spec.Containers[0].Resources.Requests },
			v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m"), v1.ResourceMemory: resource.MustParse("1Gi")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := bare()
			if tt.mutate != nil {
				tt.mutate(pod)
			}
			SetDefaults(pod)
			if got := tt.got(pod); !equality.Semantic.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestSetDefaultsIdempotent(t *testing.T) {
	once := bare()
	addInit(once)
	once.Spec.HostNetwork = true
	once.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80}}
	once.Spec.Containers[0].LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{}}}
	SetDefaults(once)
	twice := once.DeepCopy()
	SetDefaults(twice)
	if !equality.Semantic.DeepEqual(once, twice) {
		t.Errorf("second SetDefaults changed the pod:\n%#v\n%#v", once, twice)
	}
}

const sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
