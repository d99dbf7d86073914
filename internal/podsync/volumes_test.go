package podsync

import (
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

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

func TestPodDirs(t *testing.T) {
	pod := volumePod()
	pod.Spec.Volumes = append(pod.Spec.Volumes,
		v1.Volume{Name: "h1", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/srv/h1/"}}},
		v1.Volume{Name: "h2", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/srv/h2", Type: ptr.To(v1.HostPathDirectoryOrCreate)}}},
		v1.Volume{Name: "h3", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/srv/h3", Type: ptr.To(v1.HostPathDirectory)}}},
		v1.Volume{Name: "h4", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/srv/h4", Type: ptr.To(v1.HostPathFile)}}},
	)
	pod.Spec.Containers[1].VolumeMounts = append(pod.Spec.Containers[1].VolumeMounts,
		v1.VolumeMount{Name: "h3", MountPath: "/h3", SubPath: "logs"},
		v1.VolumeMount{Name: "h4", MountPath: "/h4", SubPath: "nope"}, // a file: no subPath dir
	)
	root := "/r"
	pd := "/r/pods/uid-1234567890"
	strict := []PodDir{
		{pd, 0o750}, {pd + "/volumes", 0o750}, {pd + "/volumes/empty-dir", 0o750},
		{pd + "/volumes/empty-dir/cache", 0o777},
		{pd + "/volumes/empty-dir/plain", 0o777},
		{pd + "/volumes/empty-dir/cache/a/b", 0o777},
	}
	if got := PodDirs(SpecOptions{RootDir: root}, pod); !reflect.DeepEqual(got, strict) {
		t.Errorf("PodDirs without hostPath:\n%v\nwant\n%v", got, strict)
	}
	withHost := append(slicesClone(strict[:5]),
		PodDir{"/srv/h1", 0o755}, PodDir{"/srv/h2", 0o755},
		PodDir{pd + "/volumes/empty-dir/cache/a/b", 0o777},
		PodDir{"/srv/h3/logs", 0o755},
	)
	if got := PodDirs(SpecOptions{RootDir: root, AllowHostPath: true}, pod); !reflect.DeepEqual(got, withHost) {
		t.Errorf("PodDirs with hostPath:\n%v\nwant\n%v", got, withHost)
	}
	if got := PodDirs(SpecOptions{RootDir: root}, testPod(v1.RestartPolicyAlways, "app")); got != nil {
		t.Errorf("PodDirs of a pod without volumes = %v", got)
	}
	if PodDirPath(root, pod.UID) != pd || EmptyDirPath(root, pod.UID, "v") != pd+"/volumes/empty-dir/v" {
		t.Errorf("PodDirPath %q EmptyDirPath %q", PodDirPath(root, pod.UID), EmptyDirPath(root, pod.UID, "v"))
	}
}

func slicesClone(d []PodDir) []PodDir { return append([]PodDir(nil), d...) }

func TestPrepareVolumesMakesDirs(t *testing.T) {
	root := t.TempDir()
	pod := volumePod()
	opts := SpecOptions{RootDir: root}
	if err := PrepareVolumes(opts, pod); err != nil {
		t.Fatal(err)
	}
	for _, d := range PodDirs(opts, pod) {
		fi, err := os.Stat(d.Path)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.IsDir() || fi.Mode().Perm() != d.Mode {
			t.Errorf("%s: mode %v, want a directory with %v", d.Path, fi.Mode(), d.Mode)
		}
	}
	// Existing paths are left alone, and it is idempotent.
	cache := EmptyDirPath(root, pod.UID, "cache")
	if err := os.Chmod(cache, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := PrepareVolumes(opts, pod); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(cache); fi.Mode().Perm() != 0o700 {
		t.Errorf("existing dir mode changed to %v", fi.Mode().Perm())
	}
	if err := PrepareVolumes(SpecOptions{RootDir: "rel"}, pod); err == nil || !strings.Contains(err.Error(), "absolute root directory") {
		t.Errorf("relative root: %v", err)
	}
	if err := PrepareVolumes(SpecOptions{}, testPod(v1.RestartPolicyAlways, "app")); err != nil {
		t.Errorf("pod without volumes: %v", err)
	}
}

func TestPrepareVolumesRefusesSymlinkedSubPath(t *testing.T) {
	root := t.TempDir()
	pod := testPod(v1.RestartPolicyAlways, "app")
	pod.Spec.Volumes = []v1.Volume{{Name: "cache", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
	opts := SpecOptions{RootDir: root}
	if err := PrepareVolumes(opts, pod); err != nil {
		t.Fatal(err)
	}
	// A container made "escape" a link to the host's root.
	if err := os.Symlink("/", filepath.Join(EmptyDirPath(root, pod.UID, "cache"), "escape")); err != nil {
		t.Fatal(err)
	}
	pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "cache", MountPath: "/x", SubPath: "escape/etc"}}
	err := PrepareVolumes(opts, pod)
	if err == nil || !strings.Contains(err.Error(), "is a symbolic link: refused") || !strings.Contains(err.Error(), `container "app"`) {
		t.Errorf("PrepareVolumes = %v, want a refused symlink naming the container", err)
	}
}

func TestPrepareVolumesHostPath(t *testing.T) {
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
			err := PrepareVolumes(SpecOptions{RootDir: t.TempDir(), AllowHostPath: true}, pod)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("PrepareVolumes = %v, want error %q", err, tt.wantErr)
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
	if err := PrepareVolumes(SpecOptions{RootDir: t.TempDir()}, pod); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "not-made")); !os.IsNotExist(err) {
		t.Errorf("a hostPath directory was made without AllowHostPath: %v", err)
	}
}
