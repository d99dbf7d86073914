package podsync

import (
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/actorlet/actorlet/runtimeadapter"
)

func TestAppSpecHonoursContainerFields(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	c := &pod.Spec.Containers[0]
	c.Command = []string{"/bin/server"}
	c.Args = []string{"--port", "80"}
	c.Env = []v1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "x=y"}}
	c.WorkingDir = "/srv"
	s := AppSpec(node, pod, c, "sandbox-id", 3)
	if s.Name != "actorlet_app_web_default_uid-1234_3" {
		t.Errorf("name %q", s.Name)
	}
	if !reflect.DeepEqual(s.Entrypoint, c.Command) || !reflect.DeepEqual(s.Cmd, c.Args) || s.WorkingDir != "/srv" {
		t.Errorf("command/args/workingDir not honoured: %+v", s)
	}
	if !reflect.DeepEqual(s.Env, []string{"A=1", "B=x=y"}) {
		t.Errorf("env %v", s.Env)
	}
	if s.NetworkMode != "container:sandbox-id" {
		t.Errorf("network mode %q, want the sandbox's namespace", s.NetworkMode)
	}
	m, err := runtimeadapter.ParseMeta(s.Labels)
	if err != nil {
		t.Fatal(err)
	}
	want := runtimeadapter.Meta{Node: node, PodUID: "uid-1234567890", PodName: "web", PodNamespace: "default",
		ContainerName: "app", Type: runtimeadapter.TypeApp, Hash: ContainerHash(c), RestartCount: 3, GracePeriod: GracePeriod(pod)}
	if m != want {
		t.Errorf("labels say %+v, want %+v", m, want)
	}
}

func TestAppSpecIsAppSpecWithDefaults(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	pod.Spec.Volumes = []v1.Volume{{Name: "cache", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
	pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "cache", MountPath: "/cache"}}
	got := AppSpec(node, pod, &pod.Spec.Containers[0], "sb", 1)
	want, err := AppSpecWith(SpecOptions{RootDir: DefaultRootDir}, node, pod, &pod.Spec.Containers[0], "sb", 1)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("AppSpec = %+v\nAppSpecWith(defaults) = %+v, %v", got, want, err)
	}
	if got.Mounts[0].Source != "/var/lib/actorlet/pods/uid-1234567890/volumes/empty-dir/cache" {
		t.Errorf("emptyDir source %q", got.Mounts[0].Source)
	}
}

func TestAppSpecPanicsWhereAppSpecWithFails(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	pod.Spec.Containers[0].SecurityContext = &v1.SecurityContext{Privileged: ptr.To(true)}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "privileged") {
			t.Errorf("recovered %v, want a panic naming privileged", r)
		}
	}()
	AppSpec(node, pod, &pod.Spec.Containers[0], "sb", 0)
}

func TestHostNetwork(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	pod.Spec.HostNetwork = true
	pod.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 80, Protocol: v1.ProtocolTCP}}
	if s := SandboxSpec(node, pod, "pause:1", 0); s.NetworkMode != "host" || s.Hostname != "" || s.PortBindings != nil {
		t.Errorf("sandbox network %q hostname %q ports %v, want host, none, none", s.NetworkMode, s.Hostname, s.PortBindings)
	}
	if s := AppSpec(node, pod, &pod.Spec.Containers[0], "sb", 0); s.NetworkMode != "host" {
		t.Errorf("app network %q, want host", s.NetworkMode)
	}
	pod.Spec.HostNetwork = false
	s := SandboxSpec(node, pod, "pause:1", 2)
	if s.NetworkMode != "" || s.Hostname != "web" || s.Name != "actorlet_POD_web_default_uid-1234_2" {
		t.Errorf("pod-network sandbox %+v", s)
	}
	if s.Labels[runtimeadapter.LabelContainerType] != "sandbox" {
		t.Errorf("sandbox type label %q", s.Labels[runtimeadapter.LabelContainerType])
	}
}

// shareProcessNamespace: the sandbox says its pod shares its PID
// namespace and every container joins it, with hostNetwork too; without
// it each container has its own.
func TestShareProcessNamespace(t *testing.T) {
	for _, hostNetwork := range []bool{false, true} {
		pod := testPod(v1.RestartPolicyAlways, "app")
		pod.Spec.HostNetwork = hostNetwork
		if s := SandboxSpec(node, pod, "pause:1", 0); s.PidMode != "" {
			t.Errorf("hostNetwork %v: sandbox PID mode %q without shareProcessNamespace", hostNetwork, s.PidMode)
		}
		if s := AppSpec(node, pod, &pod.Spec.Containers[0], "sb", 0); s.PidMode != "" {
			t.Errorf("hostNetwork %v: app PID mode %q without shareProcessNamespace", hostNetwork, s.PidMode)
		}
		pod.Spec.ShareProcessNamespace = ptr.To(true)
		if s := SandboxSpec(node, pod, "pause:1", 0); s.PidMode != runtimeadapter.PidModePod {
			t.Errorf("hostNetwork %v: sandbox PID mode %q, want %q", hostNetwork, s.PidMode, runtimeadapter.PidModePod)
		}
		if s := AppSpec(node, pod, &pod.Spec.Containers[0], "sb", 0); s.PidMode != "container:sb" {
			t.Errorf("hostNetwork %v: app PID mode %q, want container:sb", hostNetwork, s.PidMode)
		}
	}
}

func TestSandboxPortBindings(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "web", "dns")
	pod.Spec.InitContainers = []v1.Container{{Name: "init", Image: "i", Ports: []v1.ContainerPort{{ContainerPort: 1, HostPort: 1, Protocol: v1.ProtocolTCP}}}}
	pod.Spec.Containers[0].Ports = []v1.ContainerPort{
		{Name: "http", ContainerPort: 8080, HostPort: 80, Protocol: v1.ProtocolTCP},
		{Name: "metrics", ContainerPort: 9090, Protocol: v1.ProtocolTCP}, // not published
		{ContainerPort: 8443, HostPort: 443, HostIP: "127.0.0.1"},        // protocol unset: tcp
	}
	pod.Spec.Containers[1].Ports = []v1.ContainerPort{
		{ContainerPort: 53, HostPort: 5353, Protocol: v1.ProtocolUDP},
		{ContainerPort: 53, HostPort: 5353, Protocol: v1.ProtocolTCP},
		{ContainerPort: 9999, HostPort: 9999, Protocol: v1.ProtocolSCTP},
	}
	want := []runtimeadapter.PortBinding{
		{HostPort: 80, ContainerPort: 8080, Protocol: "tcp"},
		{HostIP: "127.0.0.1", HostPort: 443, ContainerPort: 8443, Protocol: "tcp"},
		{HostPort: 5353, ContainerPort: 53, Protocol: "udp"},
		{HostPort: 5353, ContainerPort: 53, Protocol: "tcp"},
		{HostPort: 9999, ContainerPort: 9999, Protocol: "sctp"},
	}
	if got := SandboxSpec(node, pod, "pause:1", 0).PortBindings; !reflect.DeepEqual(got, want) {
		t.Errorf("sandbox port bindings\n%+v\nwant\n%+v", got, want)
	}
	for i := range pod.Spec.Containers {
		if s := AppSpec(node, pod, &pod.Spec.Containers[i], "sb", 0); s.PortBindings != nil {
			t.Errorf("app container %s publishes %v; only the sandbox may", s.Name, s.PortBindings)
		}
	}
}

func TestHostname(t *testing.T) {
	tests := []struct{ name, hostname, want string }{
		{name: "web", want: "web"},
		{name: "web", hostname: "db-0", want: "db-0"},
		{name: "a123456789b123456789c123456789d123456789e123456789f123456789g123456789", want: "a123456789b123456789c123456789d123456789e123456789f123456789g12"},
		// A cut that ends in '-' or '.' loses them, as with the kubelet.
		{name: strings.Repeat("a", 61) + "-.b", want: strings.Repeat("a", 61)},
		{name: strings.Repeat("a", 62) + ".example.com", want: strings.Repeat("a", 62)},
	}
	for _, tt := range tests {
		pod := testPod(v1.RestartPolicyAlways, "app")
		pod.Name, pod.Spec.Hostname = tt.name, tt.hostname
		pod.Spec.Subdomain = "ignored"
		if got := SandboxSpec(node, pod, "p", 0).Hostname; got != tt.want || len(got) > 63 {
			t.Errorf("name %q hostname %q: sandbox hostname %q, want %q", tt.name, tt.hostname, got, tt.want)
		}
	}
}

func TestGracePeriodDefault(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	if GracePeriod(pod) != 30e9 {
		t.Errorf("unset grace %v, want 30s", GracePeriod(pod))
	}
	g := int64(5)
	pod.Spec.TerminationGracePeriodSeconds = &g
	if GracePeriod(pod) != 5e9 {
		t.Errorf("grace %v, want 5s", GracePeriod(pod))
	}
}

// specCase is one row of the AppSpecWith tables: a mutation of testPod's
// pod with one container "app", and what the spec must hold.
type specCase struct {
	name   string
	opts   SpecOptions
	mutate func(p *v1.Pod, c *v1.Container)
	check  func(t *testing.T, s runtimeadapter.ContainerSpec)
	// wantErr, when set, is a substring of the error AppSpecWith must
	// return.
	wantErr string
}

func runSpecCases(t *testing.T, tests []specCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := testPod(v1.RestartPolicyAlways, "app")
			pod.Labels = map[string]string{"app": "web"}
			pod.Annotations = map[string]string{"example.com/team": "blue"}
			pod.Spec.ServiceAccountName = "robot"
			c := &pod.Spec.Containers[0]
			tt.mutate(pod, c)
			s, err := AppSpecWith(tt.opts, node, pod, c, "sb", 0)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("AppSpecWith = %v, want an error containing %q", err, tt.wantErr)
				}
				if !strings.HasPrefix(err.Error(), `container "app": `) {
					t.Errorf("error %q does not name the container", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("AppSpecWith: %v", err)
			}
			tt.check(t, s)
		})
	}
}

func wantStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

func fieldEnv(name, path string) v1.EnvVar {
	return v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}}
}

func TestAppSpecEnv(t *testing.T) {
	runSpecCases(t, []specCase{
		{name: "fieldRefs", mutate: func(_ *v1.Pod, c *v1.Container) {
			c.Env = []v1.EnvVar{
				fieldEnv("POD_NAME", "metadata.name"), fieldEnv("POD_NAMESPACE", "metadata.namespace"),
				fieldEnv("POD_UID", "metadata.uid"), fieldEnv("NODE", "spec.nodeName"),
				fieldEnv("SA", "spec.serviceAccountName"), fieldEnv("APP", "metadata.labels['app']"),
				fieldEnv("TEAM", "metadata.annotations['example.com/team']"), fieldEnv("NONE", "metadata.labels['absent']"),
			}
		}, check: func(t *testing.T, s runtimeadapter.ContainerSpec) {
			wantStrings(t, "env", s.Env, []string{
				"POD_NAME=web", "POD_NAMESPACE=default", "POD_UID=uid-1234567890", "NODE=" + node,
				"SA=robot", "APP=web", "TEAM=blue", "NONE=",
			})
		}},
		{name: "expansion in env, command and args", mutate: func(_ *v1.Pod, c *v1.Container) {
			c.Env = []v1.EnvVar{
				{Name: "LATER", Value: "$(POD_NAME)"}, // defined after: stays
				fieldEnv("POD_NAME", "metadata.name"),
				{Name: "LOG", Value: "/var/log/$(POD_NAME).log"},
				{Name: "ESC", Value: "$$(POD_NAME) $(MISSING) $x $"},
				{Name: "EMPTY"},
			}
			c.Command = []string{"/bin/$(POD_NAME)"}
			c.Args = []string{"--log=$(LOG)", "--later=$(LATER)", "$$", "$(EMPTY)x", "$(unterminated $(POD_NAME)"}
		}, check: func(t *testing.T, s runtimeadapter.ContainerSpec) {
			wantStrings(t, "env", s.Env, []string{
				"LATER=$(POD_NAME)", "POD_NAME=web", "LOG=/var/log/web.log", "ESC=$(POD_NAME) $(MISSING) $x $", "EMPTY=",
			})
			wantStrings(t, "entrypoint", s.Entrypoint, []string{"/bin/web"})
			wantStrings(t, "cmd", s.Cmd, []string{"--log=/var/log/web.log", "--later=$(POD_NAME)", "$", "x", "$(unterminated $(POD_NAME)"})
		}},
		{name: "nil command and args stay nil", mutate: func(_ *v1.Pod, c *v1.Container) {
			c.Env = []v1.EnvVar{{Name: "A", Value: "1"}}
		}, check: func(t *testing.T, s runtimeadapter.ContainerSpec) {
			if s.Entrypoint != nil || s.Cmd != nil {
				t.Errorf("entrypoint %q cmd %q, want nil (the image's)", s.Entrypoint, s.Cmd)
			}
		}},
		{name: "status.podIP unknown is empty", mutate: func(_ *v1.Pod, c *v1.Container) {
			c.Env = []v1.EnvVar{{Name: "A", Value: "1"}, fieldEnv("IP", "status.podIP")}
		}, check: func(t *testing.T, s runtimeadapter.ContainerSpec) {
			wantStrings(t, "env", s.Env, []string{"A=1", "IP="})
		}},
		{name: "status.hostIP unknown", mutate: func(_ *v1.Pod, c *v1.Container) {
			c.Env = []v1.EnvVar{{Name: "A", Value: "1"}, fieldEnv("IP", "status.hostIP")}
		}, wantErr: `env[1].valueFrom.fieldRef: fieldPath "status.hostIP": the node's address is not known`},
		{name: "unknown fieldPath", mutate: func(_ *v1.Pod, c *v1.Container) {
			c.Env = []v1.EnvVar{fieldEnv("X", "spec.hostname")}
		}, wantErr: `env[0].valueFrom.fieldRef: fieldPath "spec.hostname" is not supported`},
		{name: "secretKeyRef without the secret", mutate: func(_ *v1.Pod, c *v1.Container) {
			c.Env = []v1.EnvVar{{Name: "S", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "db"}, Key: "k"}}}}
		}, wantErr: `env[0].valueFrom.secretKeyRef: secret "db" not found`},
		// fileKeyRef: read from the pod's emptyDir at creation (here a
		// map of files by host path), the kubelet's env file format.
		{name: "fileKeyRef", opts: envFiles(map[string]string{"config.env": "DB_ADDRESS='address'\nREST_ENDPOINT='endpoint'\n"}), mutate: fileKeyRef("REST_ENDPOINT", false),
			check: wantEnv("DB=endpoint")},
		{name: "fileKeyRef in a subdirectory, multi-line", opts: envFiles(map[string]string{"sub/x.env": "# set by init\nDB='a\nb' # two lines\n"}),
			mutate: func(p *v1.Pod, c *v1.Container) {
				fileKeyRef("DB", false)(p, c)
				c.Env[0].ValueFrom.FileKeyRef.Path = "sub/x.env"
			}, check: wantEnv("DB=a\nb")},
		{name: "fileKeyRef: missing key", opts: envFiles(map[string]string{"config.env": "OTHER='x'\n"}), mutate: fileKeyRef("DB_ADDRESS", false),
			wantErr: `env[0].valueFrom.fileKeyRef: key "DB_ADDRESS" not found in file "config.env" of volume "config"`},
		{name: "fileKeyRef: missing key, optional", opts: envFiles(map[string]string{"config.env": "OTHER='x'\n"}), mutate: fileKeyRef("DB_ADDRESS", true),
			check: wantEnv()},
		{name: "fileKeyRef: missing file", opts: envFiles(nil), mutate: fileKeyRef("DB_ADDRESS", false),
			wantErr: `env[0].valueFrom.fileKeyRef: file "config.env" of volume "config": open config.env: file does not exist`},
		{name: "fileKeyRef: missing file, optional", opts: envFiles(nil), mutate: fileKeyRef("DB_ADDRESS", true), check: wantEnv()},
		{name: "fileKeyRef: not an env file", opts: envFiles(map[string]string{"config.env": "DB_ADDRESS=address\n"}), mutate: fileKeyRef("DB_ADDRESS", true),
			wantErr: `env[0].valueFrom.fileKeyRef: file "config.env" of volume "config": line 1: the value of DB_ADDRESS must be in single quotes`},
		{name: "fileKeyRef without a reader", opts: SpecOptions{RootDir: "/r"}, mutate: fileKeyRef("DB_ADDRESS", false),
			wantErr: `env[0].valueFrom.fileKeyRef: file "config.env" of volume "config": volume files cannot be read here`},
	})
}

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "1", "B": "two", "E": ""}
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"$(A)", "1"},
		{"x$(A)y$(B)z", "x1ytwoz"},
		{"$(E)", ""},
		{"$$(A)", "$(A)"},
		{"$$$(A)", "$1"},
		{"$(C)", "$(C)"},
		{"$()", "$()"},
		{"$A", "$A"},
		{"$", "$"},
		{"a$", "a$"},
		{"$(A", "$(A"},
		{"$($(A)", "$($(A)"}, // the name is "$(A": undefined
		{"$( $(A)", "$( $(A)"},
		{"$(A)$(A)", "11"},
	}
	for _, tt := range tests {
		if got := expand(tt.in, vars); got != tt.want {
			t.Errorf("expand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAppSpecMounts(t *testing.T) {
	const root = "/var/lib/al"
	opts := SpecOptions{RootDir: root}
	hostOK := SpecOptions{RootDir: root, AllowHostPath: true}
	emptyDir := func(name string, medium v1.StorageMedium) v1.Volume {
		return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: medium}}}
	}
	hostPath := func(name, path string) v1.Volume {
		return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: path}}}
	}
	dir := root + "/pods/uid-1234567890/volumes/empty-dir/"
	mounts := func(want ...runtimeadapter.Mount) func(*testing.T, runtimeadapter.ContainerSpec) {
		return func(t *testing.T, s runtimeadapter.ContainerSpec) {
			if !reflect.DeepEqual(s.Mounts, want) {
				t.Errorf("mounts\n%+v\nwant\n%+v", s.Mounts, want)
			}
		}
	}
	bind := runtimeadapter.MountBind
	runSpecCases(t, []specCase{
		{name: "emptyDir", opts: opts, mutate: func(p *v1.Pod, c *v1.Container) {
			p.Spec.Volumes = []v1.Volume{emptyDir("cache", ""), {Name: "nosource"}}
			c.VolumeMounts = []v1.VolumeMount{
				{Name: "cache", MountPath: "/cache"},
				{Name: "cache", MountPath: "/ro", ReadOnly: true},
				{Name: "cache", MountPath: "/sub", SubPath: "a/b"},
				{Name: "nosource", MountPath: "/ns"},
			}
		}, check: mounts(
			runtimeadapter.Mount{Type: bind, Source: dir + "cache", Target: "/cache"},
			runtimeadapter.Mount{Type: bind, Source: dir + "cache", Target: "/ro", ReadOnly: true},
			runtimeadapter.Mount{Type: bind, Source: dir + "cache/a/b", Target: "/sub"},
			runtimeadapter.Mount{Type: bind, Source: dir + "nosource", Target: "/ns"},
		)},
		{name: "emptyDir Memory", opts: opts, mutate: func(p *v1.Pod, c *v1.Container) {
			sized := emptyDir("sized", v1.StorageMediumMemory)
			sized.EmptyDir.SizeLimit = ptr.To(resource.MustParse("64Mi"))
			p.Spec.Volumes = []v1.Volume{emptyDir("shm", v1.StorageMediumMemory), sized}
			c.VolumeMounts = []v1.VolumeMount{{Name: "shm", MountPath: "/dev/shm"}, {Name: "sized", MountPath: "/s", ReadOnly: true}}
		}, check: mounts(
			runtimeadapter.Mount{Type: runtimeadapter.MountTmpfs, Target: "/dev/shm"},
			runtimeadapter.Mount{Type: runtimeadapter.MountTmpfs, Target: "/s", ReadOnly: true, SizeBytes: 64 << 20},
		)},
		{name: "hostPath allowed", opts: hostOK, mutate: func(p *v1.Pod, c *v1.Container) {
			p.Spec.Volumes = []v1.Volume{hostPath("logs", "/var/log/"), hostPath("etc", "/etc")}
			c.VolumeMounts = []v1.VolumeMount{{Name: "logs", MountPath: "/logs"}, {Name: "etc", MountPath: "/certs", SubPath: "ssl/certs", ReadOnly: true}}
		}, check: mounts(
			runtimeadapter.Mount{Type: bind, Source: "/var/log", Target: "/logs"},
			runtimeadapter.Mount{Type: bind, Source: "/etc/ssl/certs", Target: "/certs", ReadOnly: true},
		)},
		{name: "no mounts", opts: opts, mutate: func(p *v1.Pod, _ *v1.Container) {
			p.Spec.Volumes = []v1.Volume{emptyDir("unused", "")}
		}, check: mounts()},
		{name: "hostPath not allowed", opts: opts, mutate: func(p *v1.Pod, c *v1.Container) {
			p.Spec.Volumes = []v1.Volume{hostPath("logs", "/var/log")}
			c.VolumeMounts = []v1.VolumeMount{{Name: "logs", MountPath: "/logs"}}
		}, wantErr: `volumeMounts[0]: volume "logs": hostPath volumes are not allowed on this node (--allow-host-path)`},
		{name: "unknown volume", opts: opts, mutate: func(_ *v1.Pod, c *v1.Container) {
			c.VolumeMounts = []v1.VolumeMount{{Name: "data", MountPath: "/d"}}
		}, wantErr: `volumeMounts[0]: volume "data" not found`},
		{name: "emptyDir without a root dir", mutate: func(p *v1.Pod, c *v1.Container) {
			p.Spec.Volumes = []v1.Volume{emptyDir("cache", "")}
			c.VolumeMounts = []v1.VolumeMount{{Name: "cache", MountPath: "/cache"}}
		}, wantErr: `emptyDir needs an absolute root directory`},
		{name: "subPath backstep", opts: opts, mutate: func(p *v1.Pod, c *v1.Container) {
			p.Spec.Volumes = []v1.Volume{emptyDir("cache", "")}
			c.VolumeMounts = []v1.VolumeMount{{Name: "cache", MountPath: "/c", SubPath: "../../etc"}}
		}, wantErr: `subPath "../../etc": must not contain '..'`},
		{name: "subPath absolute", opts: opts, mutate: func(p *v1.Pod, c *v1.Container) {
			p.Spec.Volumes = []v1.Volume{emptyDir("cache", "")}
			c.VolumeMounts = []v1.VolumeMount{{Name: "cache", MountPath: "/c", SubPath: "/etc"}}
		}, wantErr: `subPath "/etc": must be a relative path`},
		{name: "subPath of a Memory emptyDir", opts: opts, mutate: func(p *v1.Pod, c *v1.Container) {
			p.Spec.Volumes = []v1.Volume{emptyDir("shm", v1.StorageMediumMemory)}
			c.VolumeMounts = []v1.VolumeMount{{Name: "shm", MountPath: "/c", SubPath: "x"}}
		}, wantErr: `subPath of a Memory emptyDir`},
		{name: "HugePages", opts: opts, mutate: func(p *v1.Pod, c *v1.Container) {
			p.Spec.Volumes = []v1.Volume{emptyDir("hp", v1.StorageMediumHugePages)}
			c.VolumeMounts = []v1.VolumeMount{{Name: "hp", MountPath: "/hp"}}
		}, wantErr: `emptyDir medium "HugePages" is not supported`},
		{name: "nfs volume", opts: opts, mutate: func(p *v1.Pod, c *v1.Container) {
			p.Spec.Volumes = []v1.Volume{{Name: "s", VolumeSource: v1.VolumeSource{NFS: &v1.NFSVolumeSource{}}}}
			c.VolumeMounts = []v1.VolumeMount{{Name: "s", MountPath: "/s"}}
		}, wantErr: `only emptyDir, hostPath, downwardAPI, configMap, secret and projected volumes are supported`},
		{name: "mountPropagation", opts: opts, mutate: func(p *v1.Pod, c *v1.Container) {
			p.Spec.Volumes = []v1.Volume{emptyDir("cache", "")}
			c.VolumeMounts = []v1.VolumeMount{{Name: "cache", MountPath: "/c", MountPropagation: ptr.To(v1.MountPropagationBidirectional)}}
		}, wantErr: `mountPropagation Bidirectional is not supported`},
		{name: "subPathExpr", opts: opts, mutate: func(p *v1.Pod, c *v1.Container) {
			p.Spec.Volumes = []v1.Volume{emptyDir("cache", "")}
			c.VolumeMounts = []v1.VolumeMount{{Name: "cache", MountPath: "/c", SubPathExpr: "$(X)"}}
		}, wantErr: `subPathExpr is not supported`},
		{name: "recursiveReadOnly Enabled", opts: opts, mutate: func(p *v1.Pod, c *v1.Container) {
			p.Spec.Volumes = []v1.Volume{emptyDir("cache", "")}
			c.VolumeMounts = []v1.VolumeMount{{Name: "cache", MountPath: "/c", ReadOnly: true, RecursiveReadOnly: ptr.To(v1.RecursiveReadOnlyEnabled)}}
		}, wantErr: `recursiveReadOnly Enabled is not supported`},
	})
}

func TestAppSpecResources(t *testing.T) {
	res := func(limits, requests v1.ResourceList) func(*v1.Pod, *v1.Container) {
		return func(_ *v1.Pod, c *v1.Container) {
			c.Resources = v1.ResourceRequirements{Limits: limits, Requests: requests}
		}
	}
	want := func(r runtimeadapter.Resources) func(*testing.T, runtimeadapter.ContainerSpec) {
		return func(t *testing.T, s runtimeadapter.ContainerSpec) {
			if s.Resources != r {
				t.Errorf("resources %+v, want %+v", s.Resources, r)
			}
		}
	}
	q := resource.MustParse
	runSpecCases(t, []specCase{
		{name: "none: runtime defaults", mutate: res(nil, nil), check: want(runtimeadapter.Resources{})},
		{name: "memory limit", mutate: res(v1.ResourceList{v1.ResourceMemory: q("128Mi")}, nil),
			check: want(runtimeadapter.Resources{MemoryBytes: 128 << 20})},
		{name: "memory limit in decimal units", mutate: res(v1.ResourceList{v1.ResourceMemory: q("1G")}, nil),
			check: want(runtimeadapter.Resources{MemoryBytes: 1_000_000_000})},
		{name: "cpu limit: quota, and shares from it", mutate: res(v1.ResourceList{v1.ResourceCPU: q("500m")}, nil),
			check: want(runtimeadapter.Resources{CPUPeriod: 100_000, CPUQuota: 50_000, CPUShares: 512})},
		{name: "cpu limit above the host's CPUs", mutate: res(v1.ResourceList{v1.ResourceCPU: q("64")}, nil),
			check: want(runtimeadapter.Resources{CPUPeriod: 100_000, CPUQuota: 6_400_000, CPUShares: 65536})},
		{name: "tiny cpu limit: minimum quota", mutate: res(v1.ResourceList{v1.ResourceCPU: q("1m")}, nil),
			check: want(runtimeadapter.Resources{CPUPeriod: 100_000, CPUQuota: 1_000, CPUShares: 2})},
		{name: "cpu request and limit", mutate: res(v1.ResourceList{v1.ResourceCPU: q("2")}, v1.ResourceList{v1.ResourceCPU: q("250m")}),
			check: want(runtimeadapter.Resources{CPUPeriod: 100_000, CPUQuota: 200_000, CPUShares: 256})},
		{name: "cpu request only", mutate: res(nil, v1.ResourceList{v1.ResourceCPU: q("1500m")}),
			check: want(runtimeadapter.Resources{CPUShares: 1536})},
		{name: "cpu request 0: minimum shares", mutate: res(nil, v1.ResourceList{v1.ResourceCPU: q("0")}),
			check: want(runtimeadapter.Resources{CPUShares: 2})},
		{name: "huge cpu request: maximum shares", mutate: res(nil, v1.ResourceList{v1.ResourceCPU: q("1000")}),
			check: want(runtimeadapter.Resources{CPUShares: 262_144})},
		{name: "cpu limit 0: no quota", mutate: res(v1.ResourceList{v1.ResourceCPU: q("0")}, nil),
			check: want(runtimeadapter.Resources{CPUShares: 2})},
		{name: "memory request and ephemeral-storage: informational", mutate: res(
			v1.ResourceList{v1.ResourceEphemeralStorage: q("1Gi")}, v1.ResourceList{v1.ResourceMemory: q("1Gi"), v1.ResourceEphemeralStorage: q("1Gi")}),
			check: want(runtimeadapter.Resources{})},
		// Pod-level limits bound a container that sets none of its own
		// (the documentation's pod-level-resources.yaml); its own win.
		{name: "pod-level limits, none of its own", mutate: podRes(v1.ResourceList{v1.ResourceCPU: q("1"), v1.ResourceMemory: q("200Mi")}, nil, nil),
			check: want(runtimeadapter.Resources{MemoryBytes: 200 << 20, CPUPeriod: 100_000, CPUQuota: 100_000})},
		{name: "pod-level limits, its own win", mutate: podRes(v1.ResourceList{v1.ResourceCPU: q("1"), v1.ResourceMemory: q("200Mi")},
			v1.ResourceList{v1.ResourceCPU: q("500m"), v1.ResourceMemory: q("100Mi")}, v1.ResourceList{v1.ResourceCPU: q("500m")}),
			check: want(runtimeadapter.Resources{MemoryBytes: 100 << 20, CPUPeriod: 100_000, CPUQuota: 50_000, CPUShares: 512})},
		{name: "pod-level memory limit, own cpu limit", mutate: podRes(v1.ResourceList{v1.ResourceMemory: q("64Mi")}, v1.ResourceList{v1.ResourceCPU: q("250m")}, nil),
			check: want(runtimeadapter.Resources{MemoryBytes: 64 << 20, CPUPeriod: 100_000, CPUQuota: 25_000, CPUShares: 256})},
		{name: "pod-level requests only: shares stay the container's", mutate: func(p *v1.Pod, _ *v1.Container) {
			p.Spec.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: q("1")}}
		}, check: want(runtimeadapter.Resources{})},
	})
}

// podRes sets the pod-level limits and the container's limits and
// requests.
func podRes(pod, limits, requests v1.ResourceList) func(*v1.Pod, *v1.Container) {
	return func(p *v1.Pod, c *v1.Container) {
		p.Spec.Resources = &v1.ResourceRequirements{Limits: pod}
		c.Resources = v1.ResourceRequirements{Limits: limits, Requests: requests}
	}
}

func TestAppSpecSecurity(t *testing.T) {
	sc := func(s *v1.SecurityContext) func(*v1.Pod, *v1.Container) {
		return func(_ *v1.Pod, c *v1.Container) { c.SecurityContext = s }
	}
	type sec struct {
		User                                  string
		ReadOnlyRootfs, Privileged, NoNewPriv bool
		CapAdd, CapDrop                       []string
		GroupAdd                              []int64
	}
	want := func(w sec) func(*testing.T, runtimeadapter.ContainerSpec) {
		return func(t *testing.T, s runtimeadapter.ContainerSpec) {
			got := sec{s.User, s.ReadOnlyRootfs, s.Privileged, s.NoNewPrivileges, s.CapAdd, s.CapDrop, s.GroupAdd}
			if !reflect.DeepEqual(got, w) {
				t.Errorf("security %+v, want %+v", got, w)
			}
		}
	}
	runSpecCases(t, []specCase{
		{name: "none", mutate: sc(nil), check: want(sec{})},
		{name: "runAsUser", mutate: sc(&v1.SecurityContext{RunAsUser: ptr.To(int64(1000))}), check: want(sec{User: "1000"})},
		{name: "runAsUser 0", mutate: sc(&v1.SecurityContext{RunAsUser: ptr.To(int64(0))}), check: want(sec{User: "0"})},
		{name: "runAsUser and runAsGroup", mutate: sc(&v1.SecurityContext{RunAsUser: ptr.To(int64(1000)), RunAsGroup: ptr.To(int64(3000))}),
			check: want(sec{User: "1000:3000"})},
		{name: "pod defaults", mutate: func(p *v1.Pod, _ *v1.Container) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{RunAsUser: ptr.To(int64(1)), RunAsGroup: ptr.To(int64(2))}
		}, check: want(sec{User: "1:2"})},
		{name: "container overrides the pod", mutate: func(p *v1.Pod, c *v1.Container) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{RunAsUser: ptr.To(int64(1)), RunAsGroup: ptr.To(int64(2))}
			c.SecurityContext = &v1.SecurityContext{RunAsUser: ptr.To(int64(10))}
		}, check: want(sec{User: "10:2"})},
		// The kubelet's order: fsGroup first, then supplementalGroups.
		{name: "supplementalGroups", mutate: func(p *v1.Pod, _ *v1.Container) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{RunAsUser: ptr.To(int64(1000)), SupplementalGroups: []int64{4000, 4001}}
		}, check: want(sec{User: "1000", GroupAdd: []int64{4000, 4001}})},
		{name: "fsGroup", mutate: func(p *v1.Pod, _ *v1.Container) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: ptr.To(int64(2000))}
		}, check: want(sec{GroupAdd: []int64{2000}})},
		{name: "fsGroup then supplementalGroups, each once", mutate: func(p *v1.Pod, _ *v1.Container) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: ptr.To(int64(2000)), SupplementalGroups: []int64{4000, 2000},
				SupplementalGroupsPolicy: ptr.To(v1.SupplementalGroupsPolicyMerge)}
		}, check: want(sec{GroupAdd: []int64{2000, 4000}})},
		{name: "runAsGroup alone", mutate: sc(&v1.SecurityContext{RunAsGroup: ptr.To(int64(3000))}),
			wantErr: "securityContext.runAsGroup 3000 needs runAsUser"},
		{name: "readOnlyRootFilesystem", mutate: sc(&v1.SecurityContext{ReadOnlyRootFilesystem: ptr.To(true)}), check: want(sec{ReadOnlyRootfs: true})},
		{name: "allowPrivilegeEscalation false", mutate: sc(&v1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false)}), check: want(sec{NoNewPriv: true})},
		{name: "allowPrivilegeEscalation true", mutate: sc(&v1.SecurityContext{AllowPrivilegeEscalation: ptr.To(true)}), check: want(sec{})},
		{name: "capabilities", mutate: sc(&v1.SecurityContext{Capabilities: &v1.Capabilities{Add: []v1.Capability{"NET_ADMIN"}, Drop: []v1.Capability{"ALL"}}}),
			check: want(sec{CapAdd: []string{"NET_ADMIN"}, CapDrop: []string{"ALL"}})},
		{name: "privileged false", mutate: sc(&v1.SecurityContext{Privileged: ptr.To(false)}), check: want(sec{})},
		{name: "privileged not allowed", mutate: sc(&v1.SecurityContext{Privileged: ptr.To(true)}),
			wantErr: "securityContext.privileged: privileged containers are not allowed on this node (--allow-privileged)"},
		{name: "privileged allowed", opts: SpecOptions{AllowPrivileged: true}, mutate: sc(&v1.SecurityContext{Privileged: ptr.To(true)}),
			check: want(sec{Privileged: true})},
	})
}

// envFiles are SpecOptions whose ReadVolumeFile serves files (by path in
// the "config" emptyDir of testPod's pod under /r).
func envFiles(files map[string]string) SpecOptions {
	dir := EmptyDirPath("/r", "uid-1234567890", "config")
	return SpecOptions{RootDir: "/r", ReadVolumeFile: func(d, name string) ([]byte, error) {
		if data, ok := files[filepath.ToSlash(name)]; ok && d == dir {
			return []byte(data), nil
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}}
}

// fileKeyRef gives the pod an emptyDir "config" and c the variable DB
// from key of its config.env.
func fileKeyRef(key string, optional bool) func(*v1.Pod, *v1.Container) {
	return func(p *v1.Pod, c *v1.Container) {
		p.Spec.Volumes = []v1.Volume{{Name: "config", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
		c.Env = []v1.EnvVar{{Name: "DB", ValueFrom: &v1.EnvVarSource{FileKeyRef: &v1.FileKeySelector{
			VolumeName: "config", Path: "config.env", Key: key, Optional: ptr.To(optional)}}}}
	}
}

// wantEnv checks the spec's env is exactly want.
func wantEnv(want ...string) func(*testing.T, runtimeadapter.ContainerSpec) {
	return func(t *testing.T, s runtimeadapter.ContainerSpec) {
		if !slices.Equal(s.Env, want) {
			t.Errorf("env %q, want %q", s.Env, want)
		}
	}
}
