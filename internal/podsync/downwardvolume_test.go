package podsync

import (
	"io/fs"
	"maps"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

func fieldItem(p, fieldPath string) v1.DownwardAPIVolumeFile {
	return v1.DownwardAPIVolumeFile{Path: p, FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: fieldPath}}
}

func TestDownwardAPIFiles(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	pod.Labels = map[string]string{"tier": "front", "app": "web"}
	pod.Annotations = map[string]string{"note": "say \"hi\"\n"}
	pod.Spec.Containers[0].Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")}
	d := Downward{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4")}}
	dapi := func(mode *int32, items ...v1.DownwardAPIVolumeFile) *v1.Volume {
		return &v1.Volume{Name: "info", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{Items: items, DefaultMode: mode}}}
	}
	tests := []struct {
		name    string
		vol     *v1.Volume
		want    map[string]VolumeFile
		wantErr string
	}{
		{name: "metadata", vol: dapi(nil,
			fieldItem("labels", "metadata.labels"), fieldItem("annotations", "metadata.annotations"),
			fieldItem("name", "metadata.name"), fieldItem("ns", "metadata.namespace"), fieldItem("uid", "metadata.uid"),
			fieldItem("sub/tier", "metadata.labels['tier']"), fieldItem("missing", "metadata.labels['nope']"),
		), want: map[string]VolumeFile{
			"labels":      {Data: []byte("app=\"web\"\ntier=\"front\""), Mode: 0o644},
			"annotations": {Data: []byte(`note="say \"hi\"\n"`), Mode: 0o644},
			"name":        {Data: []byte(pod.Name), Mode: 0o644},
			"ns":          {Data: []byte(pod.Namespace), Mode: 0o644},
			"uid":         {Data: []byte(pod.UID), Mode: 0o644},
			"sub/tier":    {Data: []byte("front"), Mode: 0o644},
			"missing":     {Data: []byte(""), Mode: 0o644},
		}},
		{name: "modes", vol: dapi(ptr.To[int32](0o400), fieldItem("a", "metadata.name"),
			v1.DownwardAPIVolumeFile{Path: "b", Mode: ptr.To[int32](0o600), FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}),
			want: map[string]VolumeFile{"a": {Data: []byte(pod.Name), Mode: 0o400}, "b": {Data: []byte(pod.Name), Mode: 0o600}}},
		{name: "resources", vol: dapi(nil,
			v1.DownwardAPIVolumeFile{Path: "mem", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "app", Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}},
			v1.DownwardAPIVolumeFile{Path: "cpu", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "app", Resource: "limits.cpu", Divisor: resource.MustParse("1m")}}),
			want: map[string]VolumeFile{"mem": {Data: []byte("64"), Mode: 0o644}, "cpu": {Data: []byte("4000"), Mode: 0o644}}},
		{name: "projected downwardAPI sources", vol: &v1.Volume{Name: "p", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
			DefaultMode: ptr.To[int32](0o440),
			Sources: []v1.VolumeProjection{
				{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{fieldItem("name", "metadata.name")}}},
				{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{fieldItem("labels", "metadata.labels")}}},
			},
		}}}, want: map[string]VolumeFile{"name": {Data: []byte(pod.Name), Mode: 0o440}, "labels": {Data: []byte("app=\"web\"\ntier=\"front\""), Mode: 0o440}}},
		{name: "projected configMap without the object", vol: &v1.Volume{Name: "p", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
			Sources: []v1.VolumeProjection{{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "app"}}}},
		}}}, wantErr: `configmap "app" not found`},
		{name: "projected token", vol: &v1.Volume{Name: "p", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
			Sources: []v1.VolumeProjection{{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "t"}}},
		}}}, wantErr: `volume "p": sources[0]: serviceAccountToken projections are not supported by actorlet`},
		{name: "status field", vol: dapi(nil, fieldItem("ip", "status.podIP")), wantErr: `volume "info": items[0] (ip): fieldPath "status.podIP" is not supported in a downwardAPI volume`},
		{name: "escaping path", vol: dapi(nil, fieldItem("../x", "metadata.name")), wantErr: `volume "info": items[0]: path "../x": must not start with '..'`},
		{name: "no source", vol: dapi(nil, v1.DownwardAPIVolumeFile{Path: "x"}), wantErr: "one of fieldRef and resourceFieldRef is required"},
		{name: "unknown container", vol: dapi(nil, v1.DownwardAPIVolumeFile{Path: "x", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "db", Resource: "limits.cpu"}}),
			wantErr: `container "db" not found in the pod`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DownwardAPIFiles(d, pod, tt.vol)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("= %v, want an error containing %q", err, tt.wantErr)
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

func TestDownwardAPIMountAndSetup(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	pod.Spec.Volumes = []v1.Volume{{Name: "info", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{
		Items: []v1.DownwardAPIVolumeFile{fieldItem("name", "metadata.name")},
	}}}}
	c := &pod.Spec.Containers[0]
	c.VolumeMounts = []v1.VolumeMount{{Name: "info", MountPath: "/etc/podinfo"}}
	opts := SpecOptions{RootDir: "/r"}
	s, err := AppSpecWith(opts, node, pod, c, "sb", 0)
	if err != nil {
		t.Fatal(err)
	}
	dir := DownwardAPIPath("/r", pod.UID, "info")
	if len(s.Mounts) != 1 || s.Mounts[0].Source != dir || s.Mounts[0].Target != "/etc/podinfo" || !s.Mounts[0].ReadOnly {
		t.Errorf("mounts %+v, want %s read-only on /etc/podinfo", s.Mounts, dir)
	}
	setup, err := HostSetupOf(opts, pod)
	if err != nil {
		t.Fatal(err)
	}
	if len(setup.Written) != 1 || setup.Written[0].Dir != dir || string(setup.Written[0].Files["name"].Data) != pod.Name {
		t.Errorf("written %+v, want %s with name", setup.Written, dir)
	}
	if last := setup.Dirs[len(setup.Dirs)-1]; last.Path != dir || last.Mode != fs.FileMode(0o755) {
		t.Errorf("dirs %+v, want %s (0755) last", setup.Dirs, dir)
	}
	c.VolumeMounts[0].SubPath = "name"
	if s, err := AppSpecWith(opts, node, pod, c, "sb", 0); err != nil || s.Mounts[0].Source != dir+"/name" || !s.Mounts[0].ReadOnly {
		t.Errorf("subPath: %+v, %v, want the file through the volume's link, read-only", s.Mounts, err)
	}
	if _, err := HostSetupOf(SpecOptions{RootDir: "rel"}, pod); err == nil {
		t.Error("relative root directory: no error")
	}
}
