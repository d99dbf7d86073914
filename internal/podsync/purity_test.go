package podsync

import (
	"go/build"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// The plan is pure: the package imports nothing that does I/O or takes a
// lock. Whatever touches the disk (volumeprep, supervision.History) or
// the runtime lives on the shell's side.
func TestImportsNoIO(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkg.Imports) == 0 {
		t.Fatal("no imports read: the check would pass on anything")
	}
	for _, banned := range []string{"os", "os/exec", "io/ioutil", "sync", "sync/atomic", "net", "net/http", "syscall", "unsafe"} {
		if slices.Contains(pkg.Imports, banned) {
			t.Errorf("package podsync imports %q: keep I/O and locks out of the plan", banned)
		}
	}
}

func TestHostSetupOf(t *testing.T) {
	if s, err := HostSetupOf(SpecOptions{}, testPod(v1.RestartPolicyAlways, "app")); err != nil || len(s.Dirs)+len(s.HostPaths)+len(s.SubPaths) != 0 {
		t.Errorf("a pod without volumes needs %+v, %v; want nothing", s, err)
	}
	pod := volumePod()
	if _, err := HostSetupOf(SpecOptions{RootDir: "rel"}, pod); err == nil {
		t.Error("a relative root directory with an emptyDir: no error")
	}
	s, err := HostSetupOf(SpecOptions{RootDir: "/r"}, pod)
	if err != nil {
		t.Fatal(err)
	}
	want := []SubPathCheck{
		{Container: "app", Volume: "cache", Base: "/r/pods/uid-1234567890/volumes/empty-dir/cache", SubPath: "a/b"},
		{Container: "app", Volume: "cache", Base: "/r/pods/uid-1234567890/volumes/empty-dir/cache", SubPath: "../x"},
		{Container: "side", Volume: "cache", Base: "/r/pods/uid-1234567890/volumes/empty-dir/cache", SubPath: "a/b"},
	}
	if !slices.Equal(s.SubPaths, want) || len(s.Dirs) == 0 || len(s.HostPaths) != 0 {
		t.Errorf("HostSetupOf = %+v, want dirs, no hostPaths and subPaths %+v", s, want)
	}
}
