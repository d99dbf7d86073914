package podsync

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

const testSecretValue = "s3cr3t-value"

func testObjects() Objects {
	return Objects{
		ConfigMaps: map[string]*v1.ConfigMap{"app": {
			ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "default"},
			Data:       map[string]string{"url": "http://db", "mode": "fast", "bad-name=": "x"},
			BinaryData: map[string][]byte{"blob": {0, 1}},
		}},
		Secrets: map[string]*v1.Secret{"db": {
			ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"},
			Data:       map[string][]byte{"password": []byte(testSecretValue), "user": []byte("admin")},
		}},
	}
}

func cmRef(name, key string, optional bool) *v1.EnvVarSource {
	return &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: name}, Key: key, Optional: ptr.To(optional)}}
}

func secretRef(name, key string, optional bool) *v1.EnvVarSource {
	return &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: name}, Key: key, Optional: ptr.To(optional)}}
}

func TestContainerEnvObjects(t *testing.T) {
	cmFrom := func(name, prefix string, optional bool) v1.EnvFromSource {
		return v1.EnvFromSource{Prefix: prefix, ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: name}, Optional: ptr.To(optional)}}
	}
	secretFrom := func(name, prefix string, optional bool) v1.EnvFromSource {
		return v1.EnvFromSource{Prefix: prefix, SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: name}, Optional: ptr.To(optional)}}
	}
	tests := []struct {
		name    string
		env     []v1.EnvVar
		envFrom []v1.EnvFromSource
		want    []string
		wantErr string // the *ObjectError's message, the kubelet's
	}{
		{name: "key refs", env: []v1.EnvVar{{Name: "URL", ValueFrom: cmRef("app", "url", false)}, {Name: "PW", ValueFrom: secretRef("db", "password", false)}},
			want: []string{"URL=http://db", "PW=" + testSecretValue}},
		{name: "optional missing object and key are left out", env: []v1.EnvVar{
			{Name: "A", ValueFrom: cmRef("nope", "url", true)}, {Name: "B", ValueFrom: cmRef("app", "nope", true)},
			{Name: "C", ValueFrom: secretRef("nope", "k", true)}, {Name: "D", ValueFrom: secretRef("db", "nope", true)}, {Name: "E", Value: "e"}},
			want: []string{"E=e"}},
		{name: "missing configmap", env: []v1.EnvVar{{Name: "A", ValueFrom: cmRef("nope", "url", false)}}, wantErr: `configmap "nope" not found`},
		{name: "missing configmap key", env: []v1.EnvVar{{Name: "A", ValueFrom: cmRef("app", "nope", false)}}, wantErr: "couldn't find key nope in ConfigMap default/app"},
		{name: "missing secret", env: []v1.EnvVar{{Name: "A", ValueFrom: secretRef("nope", "k", false)}}, wantErr: `secret "nope" not found`},
		{name: "missing secret key", env: []v1.EnvVar{{Name: "A", ValueFrom: secretRef("db", "nope", false)}}, wantErr: "couldn't find key nope in Secret default/db"},
		{name: "envFrom with prefix, env overrides, expansion sees envFrom",
			envFrom: []v1.EnvFromSource{cmFrom("app", "", false), secretFrom("db", "DB_", false)},
			env:     []v1.EnvVar{{Name: "mode", Value: "slow"}, {Name: "LINK", Value: "$(url)/$(DB_user)"}},
			// "bad-name=" is no variable name (skipped); binaryData is not env.
			want: []string{"mode=slow", "url=http://db", "DB_password=" + testSecretValue, "DB_user=admin", "LINK=http://db/admin"}},
		{name: "envFrom later source wins", envFrom: []v1.EnvFromSource{cmFrom("app", "", false), cmFrom("app", "", false)},
			want: []string{"mode=fast", "url=http://db"}},
		{name: "envFrom optional missing", envFrom: []v1.EnvFromSource{cmFrom("nope", "", true), secretFrom("nope", "", true)}},
		{name: "envFrom missing", envFrom: []v1.EnvFromSource{secretFrom("nope", "", false)}, wantErr: `secret "nope" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := testPod(v1.RestartPolicyAlways, "app")
			c := &pod.Spec.Containers[0]
			c.Env, c.EnvFrom = tt.env, tt.envFrom
			d := Downward{NodeName: node, Objects: testObjects()}
			s, err := AppSpecFor(SpecOptions{RootDir: "/r"}, d, pod, c, "sb", 0)
			if tt.wantErr != "" {
				var oe *ObjectError
				if !errors.As(err, &oe) || oe.Msg != tt.wantErr {
					t.Fatalf("= %v, want an *ObjectError %q", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), `container "app"`) {
					t.Errorf("error %q does not name the container", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(s.Env, tt.want) {
				t.Errorf("env %q, want %q", s.Env, tt.want)
			}
		})
	}
}

func TestEnvFromSkipped(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	c := &pod.Spec.Containers[0]
	c.EnvFrom = []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "app"}}},
		{SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "db"}}}}
	got := EnvFromSkipped(testObjects(), pod, c)
	want := []string{"Keys [bad-name=] from the EnvFrom configMap default/app were skipped since they are considered invalid environment variable names."}
	if !slices.Equal(got, want) {
		t.Errorf("= %q, want %q", got, want)
	}
}

func TestObjectVolumeFiles(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	pod.Labels = map[string]string{"app": "web"}
	objs := testObjects()
	d := Downward{Objects: objs}
	cmVol := func(name string, optional bool, mode *int32, items ...v1.KeyToPath) *v1.Volume {
		return &v1.Volume{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
			LocalObjectReference: v1.LocalObjectReference{Name: name}, Items: items, Optional: ptr.To(optional), DefaultMode: mode}}}
	}
	secretVol := func(name string, optional bool, mode *int32, items ...v1.KeyToPath) *v1.Volume {
		return &v1.Volume{Name: "sec", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{
			SecretName: name, Items: items, Optional: ptr.To(optional), DefaultMode: mode}}}
	}
	f := func(data string, mode fs.FileMode) VolumeFile { return VolumeFile{Data: []byte(data), Mode: mode} }
	tests := []struct {
		name    string
		vol     *v1.Volume
		want    map[string]VolumeFile
		wantErr string
	}{
		{name: "configMap: every key", vol: cmVol("app", false, nil), want: map[string]VolumeFile{
			"url": f("http://db", 0o644), "mode": f("fast", 0o644), "bad-name=": f("x", 0o644), "blob": f("\x00\x01", 0o644)}},
		{name: "configMap: items and modes", vol: cmVol("app", false, ptr.To[int32](0o440),
			v1.KeyToPath{Key: "url", Path: "conf/url.txt", Mode: ptr.To[int32](0o600)}, v1.KeyToPath{Key: "mode", Path: "mode"}),
			want: map[string]VolumeFile{"conf/url.txt": f("http://db", 0o600), "mode": f("fast", 0o440)}},
		{name: "configMap missing", vol: cmVol("nope", false, nil), wantErr: `configmap "nope" not found`},
		{name: "configMap missing, optional: empty", vol: cmVol("nope", true, nil), want: map[string]VolumeFile{}},
		{name: "configMap key missing", vol: cmVol("app", false, nil, v1.KeyToPath{Key: "nope", Path: "x"}),
			wantErr: "configmap references non-existent config key: nope"},
		{name: "configMap key missing, optional", vol: cmVol("app", true, nil, v1.KeyToPath{Key: "nope", Path: "x"}, v1.KeyToPath{Key: "url", Path: "u"}),
			want: map[string]VolumeFile{"u": f("http://db", 0o644)}},
		{name: "secret: defaultMode", vol: secretVol("db", false, ptr.To[int32](0o400)), want: map[string]VolumeFile{
			"password": f(testSecretValue, 0o400), "user": f("admin", 0o400)}},
		{name: "secret missing", vol: secretVol("nope", false, nil), wantErr: `secret "nope" not found`},
		{name: "secret key missing", vol: secretVol("db", false, nil, v1.KeyToPath{Key: "nope", Path: "x"}),
			wantErr: "references non-existent secret key: nope"},
		{name: "projected: downwardAPI, configMap and secret", vol: &v1.Volume{Name: "all", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
			DefaultMode: ptr.To[int32](0o444),
			Sources: []v1.VolumeProjection{
				{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{fieldItem("labels", "metadata.labels")}}},
				{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "app"}, Items: []v1.KeyToPath{{Key: "url", Path: "url"}}}},
				{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "db"}, Items: []v1.KeyToPath{{Key: "user", Path: "creds/user", Mode: ptr.To[int32](0o400)}}}},
				{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "nope"}, Optional: ptr.To(true)}},
			}}}}, want: map[string]VolumeFile{"labels": f(`app="web"`, 0o444), "url": f("http://db", 0o444), "creds/user": f("admin", 0o400)}},
		{name: "projected secret missing", vol: &v1.Volume{Name: "p", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
			Sources: []v1.VolumeProjection{{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "nope"}}}}}}},
			wantErr: `secret "nope" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := VolumeFiles(d, pod, tt.vol)
			if tt.wantErr != "" {
				var oe *ObjectError
				if !errors.As(err, &oe) || oe.Msg != tt.wantErr {
					t.Fatalf("= %v, want an *ObjectError %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			eq := func(a, b VolumeFile) bool { return string(a.Data) == string(b.Data) && a.Mode == b.Mode }
			if !maps.EqualFunc(got, tt.want, eq) {
				t.Errorf("files\n%v\nwant\n%v", got, tt.want)
			}
		})
	}
}

// HostSetupWith puts configMap volumes under volumes/configmap, secret
// volumes (and projected ones with a secret source) under a 0700
// volumes/secret on a tmpfs (unless SecretsOnDisk), and marks a volume
// whose object is missing instead of failing.
func TestObjectVolumesSetup(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	pod.Spec.Volumes = []v1.Volume{
		{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "app"}}}},
		{Name: "sec", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "db"}}},
		{Name: "proj", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
			{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "db"}}}}}}},
		{Name: "gone", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "nope"}}}},
	}
	c := &pod.Spec.Containers[0]
	c.VolumeMounts = []v1.VolumeMount{{Name: "cfg", MountPath: "/cfg"}, {Name: "sec", MountPath: "/etc/pw", SubPath: "password"}}
	for _, onDisk := range []bool{false, true} {
		opts := SpecOptions{RootDir: "/r", SecretsOnDisk: onDisk}
		setup, err := HostSetupWith(opts, testObjects(), pod)
		if err != nil {
			t.Fatal(err)
		}
		podDir := "/r/pods/" + string(pod.UID)
		wantDirs := map[string]fs.FileMode{
			podDir + "/volumes/configmap/cfg": 0o755, podDir + "/volumes/configmap": 0o750,
			podDir + "/volumes/secret": 0o700, podDir + "/volumes/secret/sec": 0o755, podDir + "/volumes/secret/proj": 0o755,
		}
		for _, d := range setup.Dirs {
			if m, ok := wantDirs[d.Path]; ok && m != d.Mode {
				t.Errorf("dir %s mode %v, want %v", d.Path, d.Mode, m)
			}
			delete(wantDirs, d.Path)
		}
		if len(wantDirs) > 0 {
			t.Errorf("dirs %+v lack %v", setup.Dirs, wantDirs)
		}
		byName := map[string]WrittenVolume{}
		for _, wv := range setup.Written {
			byName[wv.Volume] = wv
		}
		if wv := byName["sec"]; wv.Tmpfs == onDisk || wv.Dir != podDir+"/volumes/secret/sec" || string(wv.Files["password"].Data) != testSecretValue {
			t.Errorf("onDisk %v: secret volume %+v", onDisk, wv)
		}
		if wv := byName["proj"]; wv.Tmpfs == onDisk || wv.Dir != podDir+"/volumes/secret/proj" {
			t.Errorf("onDisk %v: projected secret volume %+v", onDisk, wv)
		}
		if wv := byName["cfg"]; wv.Tmpfs || wv.Dir != podDir+"/volumes/configmap/cfg" || wv.Missing != nil {
			t.Errorf("configMap volume %+v", wv)
		}
		if wv := byName["gone"]; wv.Missing == nil || wv.Missing.Msg != `configmap "nope" not found` || wv.Files != nil {
			t.Errorf("missing configMap volume %+v", wv)
		}
		s, err := AppSpecWith(opts, node, pod, c, "sb", 0)
		if err != nil {
			t.Fatal(err)
		}
		if m := s.Mounts[1]; m.Source != podDir+"/volumes/secret/sec/password" || !m.ReadOnly || m.Target != "/etc/pw" {
			t.Errorf("subPath mount %+v", m)
		}
	}
}

func TestReferencesAndObjectsFor(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	pod.Spec.InitContainers = []v1.Container{{Name: "init", EnvFrom: []v1.EnvFromSource{{SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "init-s"}}}}}}
	pod.Spec.Containers[0].Env = []v1.EnvVar{{Name: "A", ValueFrom: cmRef("env-cm", "k", false)}, {Name: "B", ValueFrom: secretRef("db", "k", false)}}
	pod.Spec.Containers[0].EnvFrom = []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "app"}}}}
	pod.Spec.Volumes = []v1.Volume{
		{Name: "c", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "vol-cm"}}}},
		{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "db"}}},
		{Name: "p", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
			{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "proj-cm"}}},
			{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "proj-s"}}}}}}},
	}
	cms, ss := References(pod)
	if want := []string{"app", "env-cm", "proj-cm", "vol-cm"}; !slices.Equal(cms, want) {
		t.Errorf("configMaps %q, want %q", cms, want)
	}
	if want := []string{"db", "init-s", "proj-s"}; !slices.Equal(ss, want) {
		t.Errorf("secrets %q, want %q", ss, want)
	}
	all := testObjects()
	all.ConfigMaps["unrelated"] = &v1.ConfigMap{}
	got := ObjectsFor(pod, all.ConfigMaps, all.Secrets)
	if !slices.Equal(slices.Sorted(maps.Keys(got.ConfigMaps)), []string{"app"}) || !slices.Equal(slices.Sorted(maps.Keys(got.Secrets)), []string{"db"}) {
		t.Errorf("ObjectsFor = %v", got)
	}
	if !got.Equal(ObjectsFor(pod, all.ConfigMaps, all.Secrets)) || got.Equal(Objects{}) {
		t.Error("Equal disagrees")
	}
	changed := testObjects()
	changed.Secrets["db"] = &v1.Secret{Data: map[string][]byte{"password": []byte("other")}}
	if got.Equal(ObjectsFor(pod, changed.ConfigMaps, changed.Secrets)) {
		t.Error("a changed secret is Equal")
	}
}

// An Objects value printed or marshalled (a log line, a dead letter)
// shows names, never a secret.
func TestObjectsNeverShowData(t *testing.T) {
	o := testObjects()
	js, err := json.Marshal(struct{ O Objects }{o})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{o.String(), fmt.Sprintf("%v", o), fmt.Sprintf("%+v", struct{ O Objects }{o}), string(js)} {
		if strings.Contains(s, testSecretValue) || strings.Contains(s, "admin") || !strings.Contains(s, "db") {
			t.Errorf("%q shows a secret or lacks its name", s)
		}
	}
}
