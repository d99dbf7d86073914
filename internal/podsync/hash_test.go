package podsync

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// The golden values pin the hash: if this test fails, an upgrade of
// actorlet would restart every running container. Change it only with a
// migration plan.
func TestContainerHashGolden(t *testing.T) {
	tests := []struct {
		name string
		c    v1.Container
		want string
	}{
		{"minimal", v1.Container{Name: "app", Image: "actorlet/testworkload:0.1.0"}, "738f937f"},
		{"full", v1.Container{Name: "web", Image: "img:1", Command: []string{"/bin/x"}, Args: []string{"-v"},
			WorkingDir: "/w", Env: []v1.EnvVar{{Name: "A", Value: "1"}},
			Ports: []v1.ContainerPort{{ContainerPort: 80, Protocol: v1.ProtocolTCP}}}, "32b533ef"},
	}
	for _, tt := range tests {
		if got := ContainerHash(&tt.c); got != tt.want {
			t.Errorf("%s: hash %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestContainerHashIgnoresUnrunFields(t *testing.T) {
	a := v1.Container{Name: "app", Image: "i:1"}
	b := a
	b.TerminationMessagePath = "/dev/termination-log"
	b.ImagePullPolicy = v1.PullIfNotPresent
	if ContainerHash(&a) != ContainerHash(&b) {
		t.Fatal("defaults of fields actorlet does not run changed the hash")
	}
	b.Image = "i:2"
	if ContainerHash(&a) == ContainerHash(&b) {
		t.Fatal("an image change did not change the hash")
	}
}

func TestSandboxHash(t *testing.T) {
	p := &v1.Pod{}
	h1 := SandboxHash(p)
	p.Spec.ShareProcessNamespace = ptr.To(false)
	if SandboxHash(p) != h1 {
		t.Fatal("shareProcessNamespace: false changed the sandbox hash")
	}
	p.Spec.ShareProcessNamespace = ptr.To(true)
	if SandboxHash(p) == h1 {
		t.Fatal("shareProcessNamespace did not change the sandbox hash")
	}
	p.Spec.ShareProcessNamespace = nil
	p.Spec.HostNetwork = true
	if SandboxHash(p) == h1 {
		t.Fatal("hostNetwork change did not change the sandbox hash")
	}
}

func TestHashCoversWhatRuns(t *testing.T) {
	base := v1.Container{Name: "app", Image: "i:1"}
	f := false
	harmless := base
	harmless.SecurityContext = &v1.SecurityContext{Privileged: &f}
	if ContainerHash(&base) != ContainerHash(&harmless) {
		t.Error("an explicit privileged: false changed the hash")
	}
	for name, change := range map[string]func(c *v1.Container){
		"volume mount": func(c *v1.Container) { c.VolumeMounts = []v1.VolumeMount{{Name: "v", MountPath: "/v"}} },
		"memory limit": func(c *v1.Container) {
			c.Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")}
		},
		"runAsUser": func(c *v1.Container) { u := int64(1000); c.SecurityContext = &v1.SecurityContext{RunAsUser: &u} },
		"seccompProfile": func(c *v1.Container) {
			c.SecurityContext = &v1.SecurityContext{SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeUnconfined}}
		},
		"appArmorProfile": func(c *v1.Container) {
			c.SecurityContext = &v1.SecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeUnconfined}}
		},
	} {
		c := base
		change(&c)
		if ContainerHash(&c) == ContainerHash(&base) {
			t.Errorf("a %s change did not change the hash", name)
		}
	}
	p := &v1.Pod{}
	p.Spec.Containers = []v1.Container{{Name: "app", Image: "i:1", Ports: []v1.ContainerPort{{ContainerPort: 80}}}}
	h := SandboxHash(p)
	p.Spec.Containers[0].Ports[0].HostPort = 8080
	if SandboxHash(p) == h {
		t.Error("a new host port did not change the sandbox hash")
	}
}
