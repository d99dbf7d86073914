package volumeprep

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/podsync"
)

func testPod(policy v1.RestartPolicy, names ...string) *v1.Pod {
	p := &v1.Pod{}
	p.Name, p.Namespace, p.UID = "web", "default", "uid-1234567890"
	p.Spec.RestartPolicy = policy
	for _, n := range names {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: n, Image: "img:1"})
	}
	return p
}

func volumePod() *v1.Pod {
	pod := testPod(v1.RestartPolicyAlways, "app", "side")
	pod.Spec.Volumes = []v1.Volume{
		{Name: "cache", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		{Name: "shm", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}},
		{Name: "plain"}, // no source: an emptyDir
	}
	pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{
		{Name: "cache", MountPath: "/cache"},
		{Name: "cache", MountPath: "/sub", SubPath: "a/b"},
		{Name: "shm", MountPath: "/dev/shm"},
		{Name: "cache", MountPath: "/bad", SubPath: "../x"}, // invalid: not listed
	}
	pod.Spec.Containers[1].VolumeMounts = []v1.VolumeMount{
		{Name: "cache", MountPath: "/cache", SubPath: "a/b"}, // listed once
		{Name: "missing", MountPath: "/m", SubPath: "x"},
	}
	return pod
}

func TestPrepareMakesDirs(t *testing.T) {
	root := t.TempDir()
	pod := volumePod()
	opts := podsync.SpecOptions{RootDir: root}
	if err := Prepare(opts, pod); err != nil {
		t.Fatal(err)
	}
	for _, d := range podsync.PodDirs(opts, pod) {
		fi, err := os.Stat(d.Path)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.IsDir() || fi.Mode().Perm() != d.Mode {
			t.Errorf("%s: mode %v, want a directory with %v", d.Path, fi.Mode(), d.Mode)
		}
	}
	// Existing paths are left alone, and it is idempotent.
	cache := podsync.EmptyDirPath(root, pod.UID, "cache")
	if err := os.Chmod(cache, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := Prepare(opts, pod); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(cache); fi.Mode().Perm() != 0o700 {
		t.Errorf("existing dir mode changed to %v", fi.Mode().Perm())
	}
	if err := Prepare(podsync.SpecOptions{RootDir: "rel"}, pod); err == nil || !strings.Contains(err.Error(), "absolute root directory") {
		t.Errorf("relative root: %v", err)
	}
	if err := Prepare(podsync.SpecOptions{}, testPod(v1.RestartPolicyAlways, "app")); err != nil {
		t.Errorf("pod without volumes: %v", err)
	}
}

// TestPrepareEmptyDirMode: emptyDir.mode is the directory's mode, the
// sticky bit of 01777 included, whatever the umask.
func TestPrepareEmptyDirMode(t *testing.T) {
	root := t.TempDir()
	pod := testPod(v1.RestartPolicyAlways, "app")
	sticky, private := int32(0o1777), int32(0o750)
	pod.Spec.Volumes = []v1.Volume{
		{Name: "tmp", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Mode: &sticky}}},
		{Name: "private", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Mode: &private}}},
	}
	if err := Prepare(podsync.SpecOptions{RootDir: root}, pod); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{"tmp": os.ModeSticky | 0o777, "private": 0o750} {
		fi, err := os.Stat(podsync.EmptyDirPath(root, pod.UID, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode() & (os.ModePerm | os.ModeSticky | os.ModeSetgid | os.ModeSetuid); got != want {
			t.Errorf("emptyDir %s: mode %v, want %v", name, got, want)
		}
	}
}

func TestPrepareRefusesSymlinkedSubPath(t *testing.T) {
	root := t.TempDir()
	pod := testPod(v1.RestartPolicyAlways, "app")
	pod.Spec.Volumes = []v1.Volume{{Name: "cache", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
	opts := podsync.SpecOptions{RootDir: root}
	if err := Prepare(opts, pod); err != nil {
		t.Fatal(err)
	}
	// A container made "escape" a link to the host's root.
	if err := os.Symlink("/", filepath.Join(podsync.EmptyDirPath(root, pod.UID, "cache"), "escape")); err != nil {
		t.Fatal(err)
	}
	pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "cache", MountPath: "/x", SubPath: "escape/etc"}}
	err := Prepare(opts, pod)
	if err == nil || !strings.Contains(err.Error(), "is a symbolic link: refused") || !strings.Contains(err.Error(), `container "app"`) {
		t.Errorf("Prepare = %v, want a refused symlink naming the container", err)
	}
}

func TestPrepareHostPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	hp := func(path string, typ v1.HostPathType) v1.Volume {
		return v1.Volume{Name: "h", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: path, Type: &typ}}}
	}
	tests := []struct {
		name    string
		vol     v1.Volume
		wantErr string
		check   func(t *testing.T)
	}{
		{name: "Directory", vol: hp(dir, v1.HostPathDirectory)},
		{name: "Directory missing", vol: hp(filepath.Join(dir, "nope"), v1.HostPathDirectory), wantErr: "no such file"},
		{name: "Directory is a file", vol: hp(file, v1.HostPathDirectory), wantErr: "is not a Directory"},
		{name: "DirectoryOrCreate", vol: hp(filepath.Join(dir, "new/dir"), v1.HostPathDirectoryOrCreate), check: func(t *testing.T) {
			if fi, err := os.Stat(filepath.Join(dir, "new/dir")); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o755 {
				t.Errorf("DirectoryOrCreate made %v, %v", fi, err)
			}
		}},
		{name: "unset type creates a missing directory", vol: hp(filepath.Join(dir, "unset"), v1.HostPathUnset), check: func(t *testing.T) {
			if fi, err := os.Stat(filepath.Join(dir, "unset")); err != nil || !fi.IsDir() {
				t.Errorf("unset type made %v, %v", fi, err)
			}
		}},
		{name: "unset type leaves a file", vol: hp(file, v1.HostPathUnset)},
		{name: "File", vol: hp(file, v1.HostPathFile)},
		{name: "File is a directory", vol: hp(dir, v1.HostPathFile), wantErr: "is not a File"},
		{name: "FileOrCreate", vol: hp(filepath.Join(dir, "created"), v1.HostPathFileOrCreate), check: func(t *testing.T) {
			if fi, err := os.Stat(filepath.Join(dir, "created")); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("FileOrCreate made %v, %v", fi, err)
			}
		}},
		{name: "FileOrCreate without parent", vol: hp(filepath.Join(dir, "no/parent"), v1.HostPathFileOrCreate), wantErr: "no such file"},
		{name: "Socket", vol: hp(sock, v1.HostPathSocket)},
		{name: "Socket is a file", vol: hp(file, v1.HostPathSocket), wantErr: "is not a Socket"},
		{name: "CharDevice", vol: hp("/dev/null", v1.HostPathCharDev)},
		{name: "BlockDevice is a char device", vol: hp("/dev/null", v1.HostPathBlockDev), wantErr: "is not a BlockDevice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := testPod(v1.RestartPolicyAlways, "app")
			pod.Spec.Volumes = []v1.Volume{tt.vol}
			err := Prepare(podsync.SpecOptions{RootDir: t.TempDir(), AllowHostPath: true}, pod)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Prepare = %v, want error %q", err, tt.wantErr)
			}
			if err != nil && !strings.HasPrefix(err.Error(), `volume "h": `) {
				t.Errorf("error %q does not name the volume", err)
			}
			if tt.check != nil {
				tt.check(t)
			}
		})
	}
	// Without AllowHostPath nothing is created or checked.
	pod := testPod(v1.RestartPolicyAlways, "app")
	pod.Spec.Volumes = []v1.Volume{hp(filepath.Join(dir, "not-made"), v1.HostPathDirectoryOrCreate)}
	if err := Prepare(podsync.SpecOptions{RootDir: t.TempDir()}, pod); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "not-made")); !os.IsNotExist(err) {
		t.Errorf("a hostPath directory was made without AllowHostPath: %v", err)
	}
}

func TestPrepareWritesDownwardAPIVolumes(t *testing.T) {
	root := t.TempDir()
	pod := testPod(v1.RestartPolicyAlways, "app")
	pod.Labels = map[string]string{"app": "web"}
	pod.Spec.Volumes = []v1.Volume{{Name: "info", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{
		Items: []v1.DownwardAPIVolumeFile{{Path: "labels", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}}},
	}}}}
	opts := podsync.SpecOptions{RootDir: root}
	if err := Prepare(opts, pod); err != nil {
		t.Fatal(err)
	}
	dir := podsync.DownwardAPIPath(root, pod.UID, "info")
	read := func() string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(dir, "labels"))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if got := read(); got != `app="web"` {
		t.Fatalf("labels = %q", got)
	}
	if target, err := os.Readlink(filepath.Join(dir, "labels")); err != nil || target != "..data/labels" {
		t.Fatalf("labels -> %q, %v; want a link through ..data", target, err)
	}
	first, _ := os.Readlink(filepath.Join(dir, "..data"))
	if err := Prepare(opts, pod); err != nil { // before each container: unchanged, left alone
		t.Fatal(err)
	}
	if again, _ := os.Readlink(filepath.Join(dir, "..data")); again != first {
		t.Errorf("an unchanged set was rewritten: ..data %q then %q", first, again)
	}
	pod.Labels["tier"] = "front"
	if err := Prepare(opts, pod); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != "app=\"web\"\ntier=\"front\"" {
		t.Fatalf("labels after a change = %q", got)
	}
}
