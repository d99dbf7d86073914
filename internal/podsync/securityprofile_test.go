package podsync

import (
	"os"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/actorlet/actorlet/runtimeadapter"
)

func TestAppSpecSecurityProfiles(t *testing.T) {
	root := t.TempDir()
	profiles := filepath.Join(root, SeccompDir)
	if err := os.MkdirAll(filepath.Join(profiles, "team"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"deny-mkdir.json":   "{\n  \"defaultAction\": \"SCMP_ACT_ALLOW\",\n  \"syscalls\": [{\"names\": [\"mkdir\"], \"action\": \"SCMP_ACT_ERRNO\"}]\n}\n",
		"team/allow.json":   `{"defaultAction": "SCMP_ACT_ALLOW"}`,
		"broken.json":       `{"defaultAction": `,
		"array.json":        `[1, 2]`,
		"unreadable.json/x": `{}`, // unreadable.json is a directory
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(profiles, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(profiles, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts := SpecOptions{RootDir: root, ReadFile: os.ReadFile}
	seccomp := func(typ v1.SeccompProfileType, local string) *v1.SeccompProfile {
		p := &v1.SeccompProfile{Type: typ}
		if local != "" {
			p.LocalhostProfile = ptr.To(local)
		}
		return p
	}
	apparmor := func(typ v1.AppArmorProfileType, local string) *v1.AppArmorProfile {
		p := &v1.AppArmorProfile{Type: typ}
		if local != "" {
			p.LocalhostProfile = ptr.To(local)
		}
		return p
	}
	containerSC := func(sc *v1.SecurityContext) func(*v1.Pod, *v1.Container) {
		return func(_ *v1.Pod, c *v1.Container) { c.SecurityContext = sc }
	}
	podSC := func(sc *v1.PodSecurityContext) func(*v1.Pod, *v1.Container) {
		return func(p *v1.Pod, _ *v1.Container) { p.Spec.SecurityContext = sc }
	}
	annotate := func(v string) func(*v1.Pod, *v1.Container) {
		return func(p *v1.Pod, c *v1.Container) {
			p.Annotations[v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix+c.Name] = v
		}
	}
	both := func(fs ...func(*v1.Pod, *v1.Container)) func(*v1.Pod, *v1.Container) {
		return func(p *v1.Pod, c *v1.Container) {
			for _, f := range fs {
				f(p, c)
			}
		}
	}
	want := func(seccomp, apparmor string) func(*testing.T, runtimeadapter.ContainerSpec) {
		return func(t *testing.T, s runtimeadapter.ContainerSpec) {
			if s.Seccomp != seccomp || s.AppArmor != apparmor {
				t.Errorf("seccomp %q, apparmor %q; want %q, %q", s.Seccomp, s.AppArmor, seccomp, apparmor)
			}
		}
	}
	const denyMkdir = `{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["mkdir"],"action":"SCMP_ACT_ERRNO"}]}`
	runSpecCases(t, []specCase{
		{name: "none: the runtime's defaults", opts: opts, mutate: containerSC(nil), check: want("", "")},
		{name: "seccomp RuntimeDefault", opts: opts, mutate: containerSC(&v1.SecurityContext{SeccompProfile: seccomp(v1.SeccompProfileTypeRuntimeDefault, "")}), check: want("", "")},
		{name: "seccomp Unconfined", opts: opts, mutate: containerSC(&v1.SecurityContext{SeccompProfile: seccomp(v1.SeccompProfileTypeUnconfined, "")}), check: want("unconfined", "")},
		{name: "seccomp Localhost: the profile's JSON, compacted", opts: opts,
			mutate: containerSC(&v1.SecurityContext{SeccompProfile: seccomp(v1.SeccompProfileTypeLocalhost, "deny-mkdir.json")}), check: want(denyMkdir, "")},
		{name: "seccomp Localhost in a subfolder", opts: opts,
			mutate: containerSC(&v1.SecurityContext{SeccompProfile: seccomp(v1.SeccompProfileTypeLocalhost, "team/allow.json")}), check: want(`{"defaultAction":"SCMP_ACT_ALLOW"}`, "")},
		{name: "seccomp from the pod", opts: opts, mutate: podSC(&v1.PodSecurityContext{SeccompProfile: seccomp(v1.SeccompProfileTypeUnconfined, "")}), check: want("unconfined", "")},
		{name: "seccomp: the container wins over the pod", opts: opts, mutate: both(
			podSC(&v1.PodSecurityContext{SeccompProfile: seccomp(v1.SeccompProfileTypeUnconfined, "")}),
			containerSC(&v1.SecurityContext{SeccompProfile: seccomp(v1.SeccompProfileTypeRuntimeDefault, "")})), check: want("", "")},
		{name: "seccomp Localhost missing", opts: opts,
			mutate:  containerSC(&v1.SecurityContext{SeccompProfile: seccomp(v1.SeccompProfileTypeLocalhost, "nope.json")}),
			wantErr: "seccompProfile: cannot read localhost profile " + filepath.Join(profiles, "nope.json")},
		{name: "seccomp Localhost unreadable", opts: opts,
			mutate:  containerSC(&v1.SecurityContext{SeccompProfile: seccomp(v1.SeccompProfileTypeLocalhost, "unreadable.json")}),
			wantErr: "seccompProfile: cannot read localhost profile " + filepath.Join(profiles, "unreadable.json")},
		{name: "seccomp Localhost not JSON", opts: opts,
			mutate:  containerSC(&v1.SecurityContext{SeccompProfile: seccomp(v1.SeccompProfileTypeLocalhost, "broken.json")}),
			wantErr: "seccompProfile: localhost profile " + filepath.Join(profiles, "broken.json") + " is not a seccomp profile"},
		{name: "seccomp Localhost not an object", opts: opts,
			mutate:  containerSC(&v1.SecurityContext{SeccompProfile: seccomp(v1.SeccompProfileTypeLocalhost, "array.json")}),
			wantErr: "is not a seccomp profile"},
		{name: "seccomp Localhost outside the folder", opts: opts,
			mutate:  containerSC(&v1.SecurityContext{SeccompProfile: seccomp(v1.SeccompProfileTypeLocalhost, "../etc/x.json")}),
			wantErr: `localhostProfile "../etc/x.json" must be a path below seccomp`},
		{name: "seccomp Localhost without a file reader", opts: SpecOptions{RootDir: root},
			mutate:  containerSC(&v1.SecurityContext{SeccompProfile: seccomp(v1.SeccompProfileTypeLocalhost, "deny-mkdir.json")}),
			wantErr: "no file reader configured"},
		{name: "seccomp Localhost without a name", opts: opts,
			mutate: containerSC(&v1.SecurityContext{SeccompProfile: seccomp(v1.SeccompProfileTypeLocalhost, "")}), wantErr: "needs a localhostProfile"},

		{name: "apparmor RuntimeDefault", mutate: containerSC(&v1.SecurityContext{AppArmorProfile: apparmor(v1.AppArmorProfileTypeRuntimeDefault, "")}), check: want("", "")},
		{name: "apparmor Unconfined", mutate: containerSC(&v1.SecurityContext{AppArmorProfile: apparmor(v1.AppArmorProfileTypeUnconfined, "")}), check: want("", "unconfined")},
		{name: "apparmor Localhost", mutate: containerSC(&v1.SecurityContext{AppArmorProfile: apparmor(v1.AppArmorProfileTypeLocalhost, "k8s-web")}), check: want("", "k8s-web")},
		{name: "apparmor from the pod", mutate: podSC(&v1.PodSecurityContext{AppArmorProfile: apparmor(v1.AppArmorProfileTypeUnconfined, "")}), check: want("", "unconfined")},
		{name: "apparmor annotation localhost/", mutate: annotate("localhost/k8s-web"), check: want("", "k8s-web")},
		{name: "apparmor annotation unconfined", mutate: annotate("unconfined"), check: want("", "unconfined")},
		{name: "apparmor annotation runtime/default", mutate: annotate("runtime/default"), check: want("", "")},
		{name: "apparmor annotation of another container", mutate: func(p *v1.Pod, _ *v1.Container) {
			p.Annotations[v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix+"other"] = "unconfined"
		}, check: want("", "")},
		{name: "apparmor: the annotation wins over the pod's field", mutate: both(
			podSC(&v1.PodSecurityContext{AppArmorProfile: apparmor(v1.AppArmorProfileTypeUnconfined, "")}), annotate("localhost/k8s-web")), check: want("", "k8s-web")},
		{name: "apparmor: the container's field wins over the annotation", mutate: both(
			annotate("unconfined"), containerSC(&v1.SecurityContext{AppArmorProfile: apparmor(v1.AppArmorProfileTypeRuntimeDefault, "")})), check: want("", "")},
		{name: "apparmor annotation unknown", mutate: annotate("bogus"), wantErr: `unknown AppArmor profile "bogus"`},
		{name: "apparmor Localhost without a name", mutate: containerSC(&v1.SecurityContext{AppArmorProfile: apparmor(v1.AppArmorProfileTypeLocalhost, "")}), wantErr: "needs a localhostProfile"},
	})
}
