package volumeprep

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/actorlet/actorlet/internal/podsync"
)

func objectsPod() *v1.Pod {
	pod := testPod(v1.RestartPolicyAlways, "app")
	pod.Spec.Volumes = []v1.Volume{
		{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "app"}}}},
		{Name: "creds", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "db"}}},
	}
	return pod
}

func objects(url string, withSecret bool) podsync.Objects {
	o := podsync.Objects{ConfigMaps: map[string]*v1.ConfigMap{"app": {Data: map[string]string{"url": url}}}}
	if withSecret {
		o.Secrets = map[string]*v1.Secret{"db": {Data: map[string][]byte{"password": []byte("pw")}}}
	}
	return o
}

// A volume whose object is missing and was never written is a
// MountError in the kubelet's words (the others are written); once
// written, a missing object leaves the files as they are; a change is
// swapped in whole.
func TestPrepareObjectVolumes(t *testing.T) {
	root := t.TempDir()
	pod := objectsPod()
	opts := podsync.SpecOptions{RootDir: root, SecretsOnDisk: true}
	cfgFile := filepath.Join(podsync.ConfigMapPath(root, pod.UID, "cfg"), "url")
	read := func() string { b, _ := os.ReadFile(cfgFile); return string(b) }

	err := PrepareWith(opts, objects("http://one", false), pod)
	var me *MountError
	if !errors.As(err, &me) || err.Error() != `MountVolume.SetUp failed for volume "creds" : secret "db" not found` {
		t.Fatalf("= %v, want the creds volume's MountError", err)
	}
	if got := read(); got != "http://one" {
		t.Errorf("the configMap volume was not written: %q", got)
	}
	if err := PrepareWith(opts, objects("http://one", true), pod); err != nil {
		t.Fatal(err)
	}
	if err := PrepareWith(opts, podsync.Objects{}, pod); err != nil {
		t.Fatalf("objects gone after the volumes were written: %v, want the files kept", err)
	}
	if got := read(); got != "http://one" {
		t.Errorf("url = %q after the ConfigMap went; want the last files", got)
	}
	if msgs := MissingObjects(opts, podsync.Objects{}, pod); len(msgs) != 2 || msgs[0] != `MountVolume.SetUp failed for volume "cfg" : configmap "app" not found` {
		t.Errorf("MissingObjects = %q", msgs)
	}
	if err := PrepareWith(opts, objects("http://two", true), pod); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != "http://two" {
		t.Errorf("url = %q after a change", got)
	}
	if err := RemovePodDir(root, pod.UID); err != nil {
		t.Fatal(err)
	}
}

// Secret volumes: on a tmpfs mounted on the volume's directory when the
// agent runs as root (and unmounted when the pod's directory is removed),
// on disk otherwise; under a 0700 parent either way.
func TestSecretVolumeTmpfs(t *testing.T) {
	root := t.TempDir()
	pod := objectsPod()
	pod.Spec.Containers[0].Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")}
	opts := podsync.SpecOptions{RootDir: root}
	t.Cleanup(func() { _ = unmountSecrets(podsync.SecretsDir(root, pod.UID)) }) // never leave a mount behind a failed test
	if err := PrepareWith(opts, objects("u", true), pod); err != nil {
		t.Fatal(err)
	}
	dir := podsync.SecretPath(root, pod.UID, "creds")
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	const tmpfsMagic = 0x01021994
	onTmpfs := st.Type == tmpfsMagic
	if root := os.Geteuid() == 0; onTmpfs != root {
		t.Errorf("secret volume on a tmpfs: %v, running as root: %v", onTmpfs, root)
	}
	if size := int64(st.Blocks) * st.Bsize; onTmpfs && size != 64<<20 {
		t.Errorf("secret tmpfs is %d bytes, want the pod's memory limit, %d", size, 64<<20)
	}
	if fi, err := os.Stat(filepath.Dir(dir)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("parent %v, %v; want 0700", fi, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "password")); err != nil || string(b) != "pw" {
		t.Errorf("password = %q, %v", b, err)
	}
	if err := PrepareWith(opts, objects("u", true), pod); err != nil { // mounted once, not twice
		t.Fatal(err)
	}
	if err := RemovePodDir(root, pod.UID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(podsync.PodDirPath(root, pod.UID)); !os.IsNotExist(err) {
		t.Errorf("pod directory still there: %v", err)
	}
}

// A secret tmpfs is sized as the kubelet sizes memory-backed volumes:
// the pod's memory limit (apps and sidecars added, or an init container
// with the sidecars before it if larger), else the node's memory.
func TestSecretTmpfsSize(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	c := func(limit string, restart *v1.ContainerRestartPolicy) v1.Container {
		ctr := v1.Container{Name: "c", RestartPolicy: restart}
		if limit != "" {
			ctr.Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse(limit)}
		}
		return ctr
	}
	const node = 8 << 30
	for _, tt := range []struct {
		name        string
		inits, apps []v1.Container
		want        int64
	}{
		{"no limit: the node's memory", nil, []v1.Container{c("", nil)}, node},
		{"apps added", nil, []v1.Container{c("64Mi", nil), c("32Mi", nil)}, 96 << 20},
		{"a container without a limit adds none", nil, []v1.Container{c("64Mi", nil), c("", nil)}, 64 << 20},
		{"sidecars added to the apps", []v1.Container{c("16Mi", &always)}, []v1.Container{c("64Mi", nil)}, 80 << 20},
		{"a larger init container", []v1.Container{c("16Mi", &always), c("1Gi", nil)}, []v1.Container{c("64Mi", nil)}, 1<<30 + 16<<20},
		{"a smaller init container", []v1.Container{c("8Mi", nil)}, []v1.Container{c("64Mi", nil)}, 64 << 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pod := &v1.Pod{Spec: v1.PodSpec{InitContainers: tt.inits, Containers: tt.apps}}
			if got := secretTmpfsSize(pod, node); got != tt.want {
				t.Errorf("secretTmpfsSize = %d, want %d", got, tt.want)
			}
		})
	}
}
