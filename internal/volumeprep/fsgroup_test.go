package volumeprep

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/actorlet/actorlet/internal/podsync"
)

// TestPrepareFSGroup: with fsGroup, a new disk emptyDir and a written
// volume (all of it: its directory, the ..<timestamp> set, each file, each
// link) belong to the group, directories setgid, files group-readable, as
// the kubelet's SetVolumeOwnership leaves them; a change of the volume is
// given to the group again. Not owned by the group without fsGroup.
func TestPrepareFSGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("chown to another group needs root, and CI=true")
		}
		t.Skip("chown to another group needs root")
	}
	const gid = 2345
	root := t.TempDir()
	pod := testPod(v1.RestartPolicyAlways, "app")
	pod.Labels = map[string]string{"app": "web"}
	pod.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: ptr.To(int64(gid))}
	pod.Spec.Volumes = []v1.Volume{
		{Name: "data", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		{Name: "info", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{
			Items: []v1.DownwardAPIVolumeFile{
				{Path: "labels", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}, Mode: ptr.To(int32(0o600))},
				{Path: "sub/name", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}},
			},
		}}},
	}
	opts := podsync.SpecOptions{RootDir: root}
	if err := Prepare(opts, pod); err != nil {
		t.Fatal(err)
	}
	check := func(p string, wantMode fs.FileMode) {
		t.Helper()
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if g := fi.Sys().(*syscall.Stat_t).Gid; g != gid {
			t.Errorf("%s: group %d, want %d", p, g, gid)
		}
		if wantMode != 0 && fi.Mode()&(fs.ModePerm|fs.ModeSetgid|fs.ModeSticky) != wantMode {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode(), wantMode)
		}
	}
	check(podsync.EmptyDirPath(root, pod.UID, "data"), fs.ModeSetgid|0o777)
	dir := podsync.DownwardAPIPath(root, pod.UID, "info")
	ts, err := os.Readlink(filepath.Join(dir, "..data"))
	if err != nil {
		t.Fatal(err)
	}
	check(dir, 0)
	check(filepath.Join(dir, ts), fs.ModeSetgid|0o755)
	check(filepath.Join(dir, ts, "sub"), fs.ModeSetgid|0o755)
	check(filepath.Join(dir, ts, "labels"), 0o640)      // 0600 + group read (the volume is read-only)
	check(filepath.Join(dir, ts, "sub", "name"), 0o644) // 0644 has it
	check(filepath.Join(dir, "labels"), 0)              // the link itself
	check(filepath.Join(dir, "..data"), 0)

	pod.Labels["tier"] = "front"
	if err := Prepare(opts, pod); err != nil {
		t.Fatal(err)
	}
	ts2, _ := os.Readlink(filepath.Join(dir, "..data"))
	if ts2 == ts {
		t.Fatal("the changed volume was not written again")
	}
	check(filepath.Join(dir, ts2, "labels"), 0o640)

	// Without fsGroup the volumes stay root's.
	plain := testPod(v1.RestartPolicyAlways, "app")
	plain.UID = "uid-plain"
	plain.Spec.Volumes = pod.Spec.Volumes
	if err := Prepare(opts, plain); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{podsync.EmptyDirPath(root, plain.UID, "data"), filepath.Join(podsync.DownwardAPIPath(root, plain.UID, "info"), "labels")} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if g := fi.Sys().(*syscall.Stat_t).Gid; g == gid || fi.Mode()&fs.ModeSetgid != 0 {
			t.Errorf("%s without fsGroup: group %d, mode %v", p, g, fi.Mode())
		}
	}
}
