package podsync

import (
	"io/fs"
	"reflect"
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
		{Path: pd, Mode: 0o750}, {Path: pd + "/volumes", Mode: 0o750}, {Path: pd + "/volumes/empty-dir", Mode: 0o750},
		{Path: pd + "/volumes/empty-dir/cache", Mode: 0o777},
		{Path: pd + "/volumes/empty-dir/plain", Mode: 0o777},
		{Path: pd + "/volumes/empty-dir/cache/a/b", Mode: 0o777},
	}
	if got := PodDirs(SpecOptions{RootDir: root}, pod); !reflect.DeepEqual(got, strict) {
		t.Errorf("PodDirs without hostPath:\n%v\nwant\n%v", got, strict)
	}
	withHost := append(slicesClone(strict[:5]),
		PodDir{Path: "/srv/h1", Mode: 0o755}, PodDir{Path: "/srv/h2", Mode: 0o755},
		PodDir{Path: pd + "/volumes/empty-dir/cache/a/b", Mode: 0o777},
		PodDir{Path: "/srv/h3/logs", Mode: 0o755},
	)
	if got := PodDirs(SpecOptions{RootDir: root, AllowHostPath: true}, pod); !reflect.DeepEqual(got, withHost) {
		t.Errorf("PodDirs with hostPath:\n%v\nwant\n%v", got, withHost)
	}
	if got := PodDirs(SpecOptions{RootDir: root}, testPod(v1.RestartPolicyAlways, "app")); got != nil {
		t.Errorf("PodDirs of a pod without volumes = %v", got)
	}
	// emptyDir.mode, sticky bit included, is the directory's mode.
	moded := testPod(v1.RestartPolicyAlways, "app")
	moded.Spec.Volumes = []v1.Volume{
		{Name: "tmp", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Mode: ptr.To(int32(0o1777))}}},
		{Name: "private", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Mode: ptr.To(int32(0o750))}}},
	}
	wantModed := []PodDir{
		{Path: pd, Mode: 0o750}, {Path: pd + "/volumes", Mode: 0o750}, {Path: pd + "/volumes/empty-dir", Mode: 0o750},
		{Path: pd + "/volumes/empty-dir/tmp", Mode: fs.ModeSticky | 0o777},
		{Path: pd + "/volumes/empty-dir/private", Mode: 0o750},
	}
	if got := PodDirs(SpecOptions{RootDir: root}, moded); !reflect.DeepEqual(got, wantModed) {
		t.Errorf("PodDirs with emptyDir.mode:\n%v\nwant\n%v", got, wantModed)
	}
	// fsGroup: an emptyDir directory is the group's, setgid, group rwx
	// (the kubelet's SetVolumeOwnership on 0777: 02777; on 0750: 02770).
	grouped := moded.DeepCopy()
	grouped.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: ptr.To(int64(2000))}
	g := ptr.To(int64(2000))
	wantGrouped := []PodDir{
		wantModed[0], wantModed[1], wantModed[2],
		{Path: pd + "/volumes/empty-dir/tmp", Mode: fs.ModeSetgid | fs.ModeSticky | 0o777, Group: g},
		{Path: pd + "/volumes/empty-dir/private", Mode: fs.ModeSetgid | 0o770, Group: g},
	}
	if got := PodDirs(SpecOptions{RootDir: root}, grouped); !reflect.DeepEqual(got, wantGrouped) {
		t.Errorf("PodDirs with fsGroup:\n%v\nwant\n%v", got, wantGrouped)
	}
	if PodDirPath(root, pod.UID) != pd || EmptyDirPath(root, pod.UID, "v") != pd+"/volumes/empty-dir/v" {
		t.Errorf("PodDirPath %q EmptyDirPath %q", PodDirPath(root, pod.UID), EmptyDirPath(root, pod.UID, "v"))
	}
}

func slicesClone(d []PodDir) []PodDir { return append([]PodDir(nil), d...) }
