package manifest

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		// init starts from a pod with an init container "init" (addInit):
		init bool
		// opts are the node's options; the zero value is Validate's.
		opts   ValidationOptions
		mutate func(*v1.Pod) // applied to a defaulted bare() pod
		// wantErrs are the field errors expected, each matched as a prefix
		// of one aggregated error ("<path>: <type>"); none means valid.
		wantErrs []string
		// wantWarns are expected warnings, matched as prefixes.
		wantWarns []string
	}{
		{name: "valid"},
		{name: "valid full", mutate: func(p *v1.Pod) {
			p.Labels = map[string]string{"app": "web"}
			p.Spec.RestartPolicy = v1.RestartPolicyOnFailure
			p.Spec.HostNetwork = true
			p.Spec.Containers[0].Ports = []v1.ContainerPort{{Name: "http", ContainerPort: 80, HostPort: 80, Protocol: v1.ProtocolTCP}}
			p.Spec.Containers[0].Env = []v1.EnvVar{{Name: "A_b.c-1", Value: "x"}}
			p.Spec.Containers[0].Command = []string{"nginx"}
			p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{Privileged: ptr(false), AllowPrivilegeEscalation: ptr(true)}
		}},

		{name: "name required", mutate: func(p *v1.Pod) { p.Name = "" }, wantErrs: []string{"metadata.name: Required value"}},
		{name: "name invalid", mutate: func(p *v1.Pod) { p.Name = "Web_1" }, wantErrs: []string{`metadata.name: Invalid value: "Web_1"`}},
		{name: "name subdomain ok", mutate: func(p *v1.Pod) { p.Name = "web.example" }},
		{name: "namespace invalid", mutate: func(p *v1.Pod) { p.Namespace = "kube.system" }, wantErrs: []string{`metadata.namespace: Invalid value: "kube.system"`}},
		{name: "label invalid", mutate: func(p *v1.Pod) { p.Labels = map[string]string{"a": "b c"} }, wantErrs: []string{`metadata.labels: Invalid value: "b c"`}},
		{name: "no containers", mutate: func(p *v1.Pod) { p.Spec.Containers = nil }, wantErrs: []string{"spec.containers: Required value"}},
		{name: "container name required", mutate: func(p *v1.Pod) { p.Spec.Containers[0].Name = "" }, wantErrs: []string{"spec.containers[0].name: Required value"}},
		{name: "container name invalid", mutate: func(p *v1.Pod) { p.Spec.Containers[0].Name = "App" }, wantErrs: []string{`spec.containers[0].name: Invalid value: "App"`}},
		{name: "init container name invalid", init: true, mutate: func(p *v1.Pod) { p.Spec.InitContainers[0].Name = "a.b" },
			wantErrs: []string{`spec.initContainers[0].name: Invalid value: "a.b"`}},
		{name: "duplicate name across init and app", init: true, mutate: func(p *v1.Pod) { p.Spec.Containers[0].Name = "init" },
			wantErrs: []string{`spec.containers[0].name: Duplicate value: "init"`}},
		{name: "duplicate app names", mutate: func(p *v1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, p.Spec.Containers[0])
		}, wantErrs: []string{`spec.containers[1].name: Duplicate value: "app"`}},
		{name: "image required", mutate: func(p *v1.Pod) { p.Spec.Containers[0].Image = "" }, wantErrs: []string{"spec.containers[0].image: Required value"}},
		{name: "image blank", mutate: func(p *v1.Pod) { p.Spec.Containers[0].Image = "  " }, wantErrs: []string{"spec.containers[0].image: Required value"}},
		{name: "init image blank", init: true, mutate: func(p *v1.Pod) { p.Spec.InitContainers[0].Image = "  " },
			wantErrs: []string{"spec.initContainers[0].image: Required value"}},
		{name: "image padded", mutate: func(p *v1.Pod) { p.Spec.Containers[0].Image = " nginx" }, wantErrs: []string{`spec.containers[0].image: Invalid value: " nginx"`}},
		{name: "restartPolicy", mutate: func(p *v1.Pod) { p.Spec.RestartPolicy = "Sometimes" }, wantErrs: []string{`spec.restartPolicy: Unsupported value: "Sometimes"`}},
		{name: "restartPolicy empty", mutate: func(p *v1.Pod) { p.Spec.RestartPolicy = "" }, wantErrs: []string{`spec.restartPolicy: Unsupported value: ""`}},
		{name: "dnsPolicy", mutate: func(p *v1.Pod) { p.Spec.DNSPolicy = "Mine" }, wantErrs: []string{`spec.dnsPolicy: Unsupported value: "Mine"`}},
		{name: "imagePullPolicy", mutate: func(p *v1.Pod) { p.Spec.Containers[0].ImagePullPolicy = "Maybe" }, wantErrs: []string{`spec.containers[0].imagePullPolicy: Unsupported value: "Maybe"`}},
		{name: "grace negative", mutate: func(p *v1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr(int64(-1)) }, wantErrs: []string{"spec.terminationGracePeriodSeconds: Invalid value: -1"}},
		{name: "grace zero", mutate: func(p *v1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr(int64(0)) }},
		{name: "hostname invalid", mutate: func(p *v1.Pod) { p.Spec.Hostname = "a_b" }, wantErrs: []string{`spec.hostname: Invalid value: "a_b"`}},

		{name: "containerPort zero", mutate: setPort(v1.ContainerPort{ContainerPort: 0, Protocol: v1.ProtocolTCP}), wantErrs: []string{"spec.containers[0].ports[0].containerPort: Invalid value: 0"}},
		{name: "containerPort too big", mutate: setPort(v1.ContainerPort{ContainerPort: 65536, Protocol: v1.ProtocolTCP}), wantErrs: []string{"spec.containers[0].ports[0].containerPort: Invalid value: 65536"}},
		{name: "containerPort max", mutate: setPort(v1.ContainerPort{ContainerPort: 65535, Protocol: v1.ProtocolTCP})},
		// A hostPort out of range is reported whether or not the pod uses
		// hostNetwork.
		{name: "hostPort negative", mutate: setPort(v1.ContainerPort{ContainerPort: 80, HostPort: -1, Protocol: v1.ProtocolTCP}),
			wantErrs: []string{"spec.containers[0].ports[0].hostPort: Invalid value: -1"}},
		{name: "hostPort too big", mutate: setPort(v1.ContainerPort{ContainerPort: 80, HostPort: 70000, Protocol: v1.ProtocolTCP}),
			wantErrs: []string{"spec.containers[0].ports[0].hostPort: Invalid value: 70000"}},
		{name: "hostPort too big under hostNetwork", mutate: func(p *v1.Pod) {
			p.Spec.HostNetwork = true
			setPort(v1.ContainerPort{ContainerPort: 80, HostPort: 70000, Protocol: v1.ProtocolTCP})(p)
		}, wantErrs: []string{"spec.containers[0].ports[0].hostPort: Invalid value: 70000: must be between", "spec.containers[0].ports[0].hostPort: Invalid value: 70000: must match containerPort"}},
		// On the pod network, host ports are published on the sandbox.
		{name: "hostPort without hostNetwork", mutate: setPort(v1.ContainerPort{ContainerPort: 80, HostPort: 8080, Protocol: v1.ProtocolTCP})},
		{name: "hostPort equal to containerPort without hostNetwork", mutate: setPort(v1.ContainerPort{ContainerPort: 80, HostPort: 80, Protocol: v1.ProtocolTCP})},
		{name: "hostPort without hostNetwork in second port", mutate: func(p *v1.Pod) {
			p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, Protocol: v1.ProtocolTCP}, {ContainerPort: 443, HostPort: 8443, Protocol: v1.ProtocolTCP}}
		}},
		{name: "hostIP IPv4", mutate: setPort(v1.ContainerPort{ContainerPort: 80, HostPort: 8080, HostIP: "127.0.0.1", Protocol: v1.ProtocolTCP})},
		{name: "hostIP IPv6", mutate: setPort(v1.ContainerPort{ContainerPort: 80, HostPort: 8080, HostIP: "::1", Protocol: v1.ProtocolTCP})},
		{name: "hostIP invalid", mutate: setPort(v1.ContainerPort{ContainerPort: 80, HostPort: 8080, HostIP: "1.2.3", Protocol: v1.ProtocolTCP}),
			wantErrs: []string{`spec.containers[0].ports[0].hostIP: Invalid value: "1.2.3"`}},
		{name: "hostPort same number other hostIP", mutate: func(p *v1.Pod) {
			p.Spec.Containers[0].Ports = []v1.ContainerPort{
				{ContainerPort: 80, HostPort: 8080, HostIP: "127.0.0.1", Protocol: v1.ProtocolTCP},
				{ContainerPort: 81, HostPort: 8080, HostIP: "127.0.0.2", Protocol: v1.ProtocolTCP},
			}
		}},
		{name: "hostPort duplicate on the pod network", mutate: func(p *v1.Pod) {
			p.Spec.Containers[0].Ports = []v1.ContainerPort{
				{ContainerPort: 80, HostPort: 8080, Protocol: v1.ProtocolTCP},
				{ContainerPort: 81, HostPort: 8080, Protocol: v1.ProtocolTCP},
			}
		}, wantErrs: []string{`spec.containers[0].ports[1].hostPort: Duplicate value: "8080/TCP"`}},
		{name: "hostPort equal to containerPort under hostNetwork", mutate: func(p *v1.Pod) {
			p.Spec.HostNetwork = true
			setPort(v1.ContainerPort{ContainerPort: 8080, HostPort: 8080, Protocol: v1.ProtocolTCP})(p)
		}},
		{name: "hostPort mismatch under hostNetwork", mutate: func(p *v1.Pod) {
			p.Spec.HostNetwork = true
			setPort(v1.ContainerPort{ContainerPort: 80, HostPort: 8080, Protocol: v1.ProtocolTCP})(p)
		}, wantErrs: []string{"spec.containers[0].ports[0].hostPort: Invalid value: 8080"}},
		{name: "hostPort duplicate in pod", mutate: func(p *v1.Pod) {
			p.Spec.HostNetwork = true
			p.Spec.Containers = append(p.Spec.Containers, *p.Spec.Containers[0].DeepCopy())
			p.Spec.Containers[1].Name = "app2"
			p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 8080, HostPort: 8080, Protocol: v1.ProtocolTCP}}
			p.Spec.Containers[1].Ports = []v1.ContainerPort{{ContainerPort: 8080, HostPort: 8080, Protocol: v1.ProtocolTCP}}
		}, wantErrs: []string{`spec.containers[1].ports[0].hostPort: Duplicate value: "8080/TCP"`}},
		{name: "hostPort duplicate across init and app", init: true, mutate: func(p *v1.Pod) {
			p.Spec.HostNetwork = true
			p.Spec.InitContainers[0].Ports = []v1.ContainerPort{{ContainerPort: 8080, HostPort: 8080, Protocol: v1.ProtocolTCP}}
			setPort(v1.ContainerPort{ContainerPort: 8080, HostPort: 8080, Protocol: v1.ProtocolTCP})(p)
		}, wantErrs: []string{`spec.containers[0].ports[0].hostPort: Duplicate value: "8080/TCP"`}},
		{name: "hostPort same number other protocol", mutate: func(p *v1.Pod) {
			p.Spec.HostNetwork = true
			p.Spec.Containers[0].Ports = []v1.ContainerPort{
				{ContainerPort: 53, HostPort: 53, Protocol: v1.ProtocolTCP},
				{ContainerPort: 53, HostPort: 53, Protocol: v1.ProtocolUDP},
			}
		}},
		{name: "protocol", mutate: setPort(v1.ContainerPort{ContainerPort: 80, Protocol: "ICMP"}), wantErrs: []string{`spec.containers[0].ports[0].protocol: Unsupported value: "ICMP"`}},
		{name: "port name invalid", mutate: setPort(v1.ContainerPort{Name: "HTTP_1", ContainerPort: 80, Protocol: v1.ProtocolTCP}), wantErrs: []string{`spec.containers[0].ports[0].name: Invalid value: "HTTP_1"`}},
		{name: "port name duplicate", mutate: func(p *v1.Pod) {
			p.Spec.Containers[0].Ports = []v1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: v1.ProtocolTCP}, {Name: "http", ContainerPort: 81, Protocol: v1.ProtocolTCP}}
		}, wantErrs: []string{`spec.containers[0].ports[1].name: Duplicate value: "http"`}},
		{name: "env name empty", mutate: setEnv(""), wantErrs: []string{`spec.containers[0].env[0].name: Invalid value: ""`}},
		{name: "env name with =", mutate: setEnv("A=B"), wantErrs: []string{`spec.containers[0].env[0].name: Invalid value: "A=B"`}},
		{name: "env name non-ASCII", mutate: setEnv("NAMÉ"), wantErrs: []string{`spec.containers[0].env[0].name: Invalid value: "NAMÉ"`}},

		{name: "several errors", init: true, mutate: func(p *v1.Pod) {
			p.Name = ""
			p.Spec.Containers[0].Image = ""
			p.Spec.InitContainers[0].Image = ""
		}, wantErrs: []string{"metadata.name: Required value", "spec.initContainers[0].image: Required value", "spec.containers[0].image: Required value"}},

		// The support table: rejected fields.
		{name: "initContainers are run", init: true},
		{name: "initContainers empty list", mutate: func(p *v1.Pod) { p.Spec.InitContainers = []v1.Container{} }},
		{name: "init volumeMounts", init: true, mutate: func(p *v1.Pod) {
			p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
			p.Spec.InitContainers[0].VolumeMounts = []v1.VolumeMount{{Name: "data", MountPath: "/d"}}
		}},
		{name: "privileged", mutate: setSC(&v1.SecurityContext{Privileged: ptr(true)}),
			wantErrs: []string{"spec.containers[0].securityContext.privileged: Forbidden: not allowed on this node: privileged containers need the operator's --allow-privileged"}},
		{name: "privileged allowed", opts: ValidationOptions{AllowPrivileged: true}, mutate: setSC(&v1.SecurityContext{Privileged: ptr(true)})},
		{name: "seccomp RuntimeDefault", mutate: setSC(&v1.SecurityContext{SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault}})},
		{name: "seccomp Unconfined", mutate: setSC(&v1.SecurityContext{SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeUnconfined}})},
		{name: "seccomp Localhost", mutate: setSC(&v1.SecurityContext{SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr("team/deny.json")}})},
		{name: "pod seccomp Localhost", mutate: func(p *v1.Pod) {
			p.Spec.SecurityContext.SeccompProfile = &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr("deny.json")}
		}},
		{name: "seccomp Localhost without a profile", mutate: setSC(&v1.SecurityContext{SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost}}),
			wantErrs: []string{"spec.containers[0].securityContext.seccompProfile.localhostProfile: Required value"}},
		{name: "seccomp Localhost absolute", mutate: setSC(&v1.SecurityContext{SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr("/etc/x.json")}}),
			wantErrs: []string{`spec.containers[0].securityContext.seccompProfile.localhostProfile: Invalid value: "/etc/x.json": must be a relative path`}},
		{name: "pod seccomp Localhost backstep", mutate: func(p *v1.Pod) {
			p.Spec.SecurityContext.SeccompProfile = &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr("a/../../x.json")}
		}, wantErrs: []string{`spec.securityContext.seccompProfile.localhostProfile: Invalid value: "a/../../x.json": must not contain '..'`}},
		{name: "seccomp localhostProfile without Localhost", mutate: setSC(&v1.SecurityContext{SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault, LocalhostProfile: ptr("x.json")}}),
			wantErrs: []string{"spec.containers[0].securityContext.seccompProfile.localhostProfile: Invalid value"}},
		{name: "seccomp unknown type", mutate: setSC(&v1.SecurityContext{SeccompProfile: &v1.SeccompProfile{Type: "Strict"}}),
			wantErrs: []string{`spec.containers[0].securityContext.seccompProfile.type: Unsupported value: "Strict"`}},
		{name: "seccomp pod annotation refused", mutate: func(p *v1.Pod) {
			p.Annotations = map[string]string{"seccomp.security.alpha.kubernetes.io/pod": "runtime/default"}
		},
			wantErrs: []string{"metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: Forbidden: not supported by actorlet: the seccomp annotations were removed in Kubernetes 1.27"}},
		{name: "seccomp container annotation refused", mutate: func(p *v1.Pod) {
			p.Annotations = map[string]string{"container.seccomp.security.alpha.kubernetes.io/app": "unconfined"}
		}, wantErrs: []string{"metadata.annotations[container.seccomp.security.alpha.kubernetes.io/app]: Forbidden"}},
		{name: "apparmor RuntimeDefault and Unconfined without AppArmor", opts: ValidationOptions{AppArmor: ptr(false)}, mutate: func(p *v1.Pod) {
			p.Spec.SecurityContext.AppArmorProfile = &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeRuntimeDefault}
			p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeUnconfined}}
		}},
		{name: "apparmor Localhost with AppArmor", opts: ValidationOptions{AppArmor: ptr(true)},
			mutate: setSC(&v1.SecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr("k8s-web")}})},
		{name: "apparmor Localhost without AppArmor", opts: ValidationOptions{AppArmor: ptr(false)},
			mutate:   setSC(&v1.SecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr("k8s-web")}}),
			wantErrs: []string{"spec.containers[0].securityContext.appArmorProfile: Forbidden: not allowed on this node: AppArmor is not enabled on this host, so the Localhost profile k8s-web cannot be applied"}},
		{name: "pod apparmor Localhost without AppArmor", opts: ValidationOptions{AppArmor: ptr(false)}, mutate: func(p *v1.Pod) {
			p.Spec.SecurityContext.AppArmorProfile = &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr("k8s-web")}
		}, wantErrs: []string{"spec.securityContext.appArmorProfile: Forbidden: not allowed on this node: AppArmor is not enabled"}},
		{name: "apparmor Localhost without a profile", opts: ValidationOptions{AppArmor: ptr(true)},
			mutate:   setSC(&v1.SecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost}}),
			wantErrs: []string{"spec.containers[0].securityContext.appArmorProfile.localhostProfile: Required value"}},
		{name: "apparmor unknown type", mutate: setSC(&v1.SecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: "Strict"}}),
			wantErrs: []string{`spec.containers[0].securityContext.appArmorProfile.type: Unsupported value: "Strict"`}},
		{name: "apparmor annotations", opts: ValidationOptions{AppArmor: ptr(true)}, init: true, mutate: func(p *v1.Pod) {
			p.Annotations = map[string]string{
				"container.apparmor.security.beta.kubernetes.io/app":  "localhost/k8s-web",
				"container.apparmor.security.beta.kubernetes.io/init": "runtime/default",
			}
		}},
		{name: "apparmor annotation unconfined without AppArmor", opts: ValidationOptions{AppArmor: ptr(false)}, mutate: func(p *v1.Pod) {
			p.Annotations = map[string]string{"container.apparmor.security.beta.kubernetes.io/app": "unconfined"}
		}},
		{name: "apparmor annotation localhost without AppArmor", opts: ValidationOptions{AppArmor: ptr(false)}, mutate: func(p *v1.Pod) {
			p.Annotations = map[string]string{"container.apparmor.security.beta.kubernetes.io/app": "localhost/k8s-web"}
		}, wantErrs: []string{"metadata.annotations[container.apparmor.security.beta.kubernetes.io/app]: Forbidden: not allowed on this node: AppArmor is not enabled on this host, so the Localhost profile k8s-web"}},
		{name: "apparmor annotation bad value", mutate: func(p *v1.Pod) {
			p.Annotations = map[string]string{"container.apparmor.security.beta.kubernetes.io/app": "strict"}
		}, wantErrs: []string{`metadata.annotations[container.apparmor.security.beta.kubernetes.io/app]: Invalid value: "strict"`}},
		{name: "apparmor annotation of no container", mutate: func(p *v1.Pod) {
			p.Annotations = map[string]string{"container.apparmor.security.beta.kubernetes.io/nope": "unconfined"}
		}, wantErrs: []string{`metadata.annotations[container.apparmor.security.beta.kubernetes.io/nope]: Invalid value: "nope": container not found`}},
		{name: "pod runAsNonRoot false", mutate: func(p *v1.Pod) { p.Spec.SecurityContext.RunAsNonRoot = ptr(false) }},
		{name: "hostPID", mutate: func(p *v1.Pod) { p.Spec.HostPID = true }, wantErrs: []string{"spec.hostPID: Forbidden: not supported by actorlet"}},
		{name: "hostIPC", mutate: func(p *v1.Pod) { p.Spec.HostIPC = true }, wantErrs: []string{"spec.hostIPC: Forbidden: not supported by actorlet"}},
		{name: "hostUsers false", mutate: func(p *v1.Pod) { p.Spec.HostUsers = ptr(false) }, wantErrs: []string{"spec.hostUsers: Forbidden"}},
		{name: "hostUsers true", mutate: func(p *v1.Pod) { p.Spec.HostUsers = ptr(true) }},
		{name: "env valueFrom secretKeyRef", mutate: func(p *v1.Pod) {
			p.Spec.Containers[0].Env = []v1.EnvVar{{Name: "A", Value: "x"}, {Name: "B", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{Key: "k"}}}}
		}, wantErrs: []string{"spec.containers[0].env[1].valueFrom.secretKeyRef.name: Required value"}},
		{name: "env valueFrom fileKeyRef", mutate: fileKeyRefPod(v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}, v1.FileKeySelector{Key: "K", Path: "sub/p.env", VolumeName: "v"})},
		{name: "env valueFrom fileKeyRef: no such volume", mutate: fileKeyRefPod(v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}, v1.FileKeySelector{Key: "K", Path: "p", VolumeName: "w"}),
			wantErrs: []string{`spec.containers[0].env[0].valueFrom.fileKeyRef.volumeName: Not found: "w"`}},
		{name: "env valueFrom fileKeyRef: not an emptyDir", mutate: fileKeyRefPod(v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{}}, v1.FileKeySelector{Key: "K", Path: "p", VolumeName: "v"}),
			wantErrs: []string{`spec.containers[0].env[0].valueFrom.fileKeyRef.volumeName: Invalid value: "v": must be an emptyDir volume`}},
		{name: "env valueFrom fileKeyRef: a Memory emptyDir", mutate: fileKeyRefPod(v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}, v1.FileKeySelector{Key: "K", Path: "p", VolumeName: "v"}),
			wantErrs:  []string{`spec.containers[0].env[0].valueFrom.fileKeyRef.volumeName: Forbidden: not supported by actorlet: a Memory emptyDir is a tmpfs`},
			wantWarns: []string{"spec.volumes[0].emptyDir.medium: Memory: the tmpfs is private to its container"}},
		{name: "env valueFrom fileKeyRef: path and key", mutate: fileKeyRefPod(v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}, v1.FileKeySelector{Key: "1K", Path: "../p", VolumeName: "v"}),
			wantErrs: []string{`spec.containers[0].env[0].valueFrom.fileKeyRef.path: Invalid value: "../p": must not contain '..'`, `spec.containers[0].env[0].valueFrom.fileKeyRef.key: Invalid value: "1K"`}},
		{name: "env valueFrom fileKeyRef: absolute path", mutate: fileKeyRefPod(v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}, v1.FileKeySelector{Key: "K", Path: "/p", VolumeName: "v"}),
			wantErrs: []string{`spec.containers[0].env[0].valueFrom.fileKeyRef.path: Invalid value: "/p": must be a relative path`}},
		{name: "sidecar", init: true, mutate: func(p *v1.Pod) {
			p.Spec.InitContainers[0].RestartPolicy = ptr(v1.ContainerRestartPolicyAlways)
			probe := &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(80)}}}
			p.Spec.InitContainers[0].LivenessProbe = probe
			p.Spec.InitContainers[0].ReadinessProbe = probe
			p.Spec.InitContainers[0].StartupProbe = probe
		}},
		{name: "init container restartPolicy other than Always", init: true, mutate: func(p *v1.Pod) { p.Spec.InitContainers[0].RestartPolicy = ptr(v1.ContainerRestartPolicy("OnFailure")) },
			wantErrs: []string{`spec.initContainers[0].restartPolicy: Unsupported value: "OnFailure": supported values: "Always"`}},
		// restartPolicyRules (ContainerRestartRules): an app container's,
		// action Restart, with its own restartPolicy.
		{name: "restartPolicyRules on an app container", mutate: restartRules(ptr(v1.ContainerRestartPolicyNever),
			v1.ContainerRestartRule{Action: v1.ContainerRestartRuleActionRestart, ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42, 43}}})},
		{name: "restartPolicyRules without the container's restartPolicy", mutate: restartRules(nil,
			v1.ContainerRestartRule{Action: v1.ContainerRestartRuleActionRestart, ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpNotIn, Values: []int32{0}}}),
			wantErrs: []string{"spec.containers[0].restartPolicy: Required value: must be set when restartPolicyRules are"}},
		{name: "restartPolicyRules: RestartAllContainers", mutate: restartRules(ptr(v1.ContainerRestartPolicyNever),
			v1.ContainerRestartRule{Action: v1.ContainerRestartRuleActionRestartAllContainers, ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{88}}})},
		{name: "restartPolicyRules of a sidecar: RestartAllContainers", init: true, mutate: func(p *v1.Pod) {
			p.Spec.InitContainers[0].RestartPolicy = ptr(v1.ContainerRestartPolicyAlways)
			p.Spec.InitContainers[0].RestartPolicyRules = []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestartAllContainers,
				ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{88}}}}
		}},
		{name: "restartPolicyRules: bad rules", mutate: restartRules(ptr(v1.ContainerRestartPolicyNever),
			v1.ContainerRestartRule{Action: "Explode", ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: "Maybe"}},
			v1.ContainerRestartRule{Action: v1.ContainerRestartRuleActionRestart},
			v1.ContainerRestartRule{Action: v1.ContainerRestartRuleActionRestart, ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{1, 1}}}),
			wantErrs: []string{
				`spec.containers[0].restartPolicyRules[0].action: Unsupported value: "Explode"`,
				`spec.containers[0].restartPolicyRules[0].exitCodes.operator: Unsupported value: "Maybe"`,
				"spec.containers[0].restartPolicyRules[1].exitCodes: Required value",
				"spec.containers[0].restartPolicyRules[2].exitCodes.values[1]: Duplicate value: 1",
			}},
		{name: "restartPolicyRules of an init container", init: true, mutate: func(p *v1.Pod) {
			p.Spec.InitContainers[0].RestartPolicy = ptr(v1.ContainerRestartPolicyAlways)
			p.Spec.InitContainers[0].RestartPolicyRules = []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestart,
				ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{1}}}}
		}, wantErrs: []string{"spec.initContainers[0].restartPolicyRules[0].action: Forbidden: not supported by actorlet: only app containers' rules are applied"}},
		{name: "restartPolicy on an app container", mutate: func(p *v1.Pod) { p.Spec.Containers[0].RestartPolicy = ptr(v1.ContainerRestartPolicyOnFailure) }},
		{name: "restartPolicy on an app container: unknown", mutate: func(p *v1.Pod) { p.Spec.Containers[0].RestartPolicy = ptr(v1.ContainerRestartPolicy("Sometimes")) },
			wantErrs: []string{`spec.containers[0].restartPolicy: Unsupported value: "Sometimes"`}},

		// The support table: ignored fields.
		{name: "nodeSelector", mutate: func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "ssd"} }, wantWarns: []string{"spec.nodeSelector: ignored by actorlet"}},
		{name: "tolerations", mutate: func(p *v1.Pod) { p.Spec.Tolerations = []v1.Toleration{{Operator: v1.TolerationOpExists}} }, wantWarns: []string{"spec.tolerations: ignored by actorlet"}},
		{name: "affinity", mutate: func(p *v1.Pod) { p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{}} }, wantWarns: []string{"spec.affinity: ignored by actorlet"}},
		{name: "serviceAccountName", mutate: func(p *v1.Pod) { p.Spec.ServiceAccountName = "sa" }, wantWarns: []string{"spec.serviceAccountName: ignored by actorlet"}},
		{name: "hostname and subdomain", mutate: func(p *v1.Pod) { p.Spec.Hostname, p.Spec.Subdomain = "db-0", "db" },
			wantWarns: []string{"spec.subdomain: ignored by actorlet: without cluster DNS the hostname is not made a FQDN"}},
		{name: "priorityClassName", mutate: func(p *v1.Pod) { p.Spec.PriorityClassName = "system-node-critical" }, wantWarns: []string{"spec.priorityClassName: ignored by actorlet"}},
		{name: "probes are run", mutate: func(p *v1.Pod) {
			probe := &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(80)}}}
			p.Spec.Containers[0].LivenessProbe = probe
			p.Spec.Containers[0].ReadinessProbe = probe
			p.Spec.Containers[0].StartupProbe = probe
		}},
		{name: "grpc probes are run", mutate: func(p *v1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: 9000}}}
			p.Spec.Containers[0].ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: 9000, Service: ptr("db")}}}
			p.Spec.Containers[0].StartupProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: 9000}}}
		}},
		{name: "probe on an init container", init: true, mutate: func(p *v1.Pod) {
			p.Spec.InitContainers[0].ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(80)}}}
		}, wantErrs: []string{"spec.initContainers[0].readinessProbe: Forbidden"}},
		{name: "lifecycle hooks are run", mutate: func(p *v1.Pod) {
			p.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}
		}},
		{name: "tcpSocket hook rejected", mutate: func(p *v1.Pod) {
			p.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(80)}}}
		}, wantErrs: []string{"spec.containers[0].lifecycle.postStart.tcpSocket: Forbidden"}},
		{name: "termination message path", mutate: func(p *v1.Pod) { p.Spec.Containers[0].TerminationMessagePath = "/tmp/msg" },
			wantWarns: []string{"spec.containers[0].terminationMessagePath: ignored by actorlet"}},
		{name: "errors and warnings together", mutate: func(p *v1.Pod) {
			p.Spec.Containers[0].Image = ""
			p.Spec.NodeSelector = map[string]string{"a": "b"}
		}, wantErrs: []string{"spec.containers[0].image: Required value"}, wantWarns: []string{"spec.nodeSelector: ignored"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := bare()
			if tt.init {
				addInit(pod)
			}
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
			for _, want := range tt.wantErrs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err %q does not name %q", err, want)
				}
			}
		})
	}
}

// The error for init containers, which actorlet does not run yet, in full.

// matchAll checks that got and want have the same length and that each
// want is a prefix of one got, in order.
func matchAll(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d %ss %q, want %d: %q", len(got), what, got, len(want), want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("%s %d = %q, want prefix %q", what, i, got[i], want[i])
		}
	}
}

func setPort(p v1.ContainerPort) func(*v1.Pod) {
	return func(pod *v1.Pod) { pod.Spec.Containers[0].Ports = []v1.ContainerPort{p} }
}

func setEnv(name string) func(*v1.Pod) {
	return func(pod *v1.Pod) { pod.Spec.Containers[0].Env = []v1.EnvVar{{Name: name, Value: "v"}} }
}

func setSC(sc *v1.SecurityContext) func(*v1.Pod) {
	return func(pod *v1.Pod) { pod.Spec.Containers[0].SecurityContext = sc }
}

// fileKeyRefPod gives the pod a volume "v" of source vs and its first
// container a variable from ref.
func fileKeyRefPod(vs v1.VolumeSource, ref v1.FileKeySelector) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: vs}}
		p.Spec.Containers[0].Env = []v1.EnvVar{{Name: "B", ValueFrom: &v1.EnvVarSource{FileKeyRef: &ref}}}
	}
}

// restartRules sets the first app container's restartPolicy and rules.
func restartRules(policy *v1.ContainerRestartPolicy, rules ...v1.ContainerRestartRule) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Containers[0].RestartPolicy = policy
		p.Spec.Containers[0].RestartPolicyRules = rules
	}
}
