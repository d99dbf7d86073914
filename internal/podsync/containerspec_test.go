package podsync

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"

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

func TestHostNetwork(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	pod.Spec.HostNetwork = true
	if s := SandboxSpec(node, pod, "pause:1", 0); s.NetworkMode != "host" || s.Hostname != "" {
		t.Errorf("sandbox network %q hostname %q, want host and none", s.NetworkMode, s.Hostname)
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

func TestHostnameFits63(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	pod.Name = "a123456789b123456789c123456789d123456789e123456789f123456789g123456789"
	if h := SandboxSpec(node, pod, "p", 0).Hostname; len(h) != 63 {
		t.Errorf("hostname %q has %d characters, want 63", h, len(h))
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
