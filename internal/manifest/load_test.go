package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestLoadFile(t *testing.T) {
	const path = "/etc/actorlet/manifests/web.yaml"
	pod, warnings, err := LoadFile(uidNode, path, []byte(validYAML))
	if err != nil {
		t.Fatalf("LoadFile: %v", err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings = %q, want none", warnings)
	}
	wantUID := uidOf(t, uidNode, path, validYAML)
	if pod.UID != wantUID {
		t.Errorf("UID = %q, want StaticPodUID %q", pod.UID, wantUID)
	}
	wantAnn := map[string]string{
		AnnotationConfigSource: "file",
		AnnotationConfigHash:   string(wantUID),
		AnnotationSourceFile:   path,
	}
	for k, v := range wantAnn {
		if pod.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, pod.Annotations[k], v)
		}
	}
	if pod.Namespace != "default" || pod.Spec.RestartPolicy != v1.RestartPolicyAlways || pod.Spec.Containers[0].Ports[0].Protocol != v1.ProtocolTCP {
		t.Errorf("pod not defaulted: %+v", pod)
	}
}

func TestLoadFileRelativePath(t *testing.T) {
	pod, _, err := LoadFile(uidNode, "web.yaml", []byte(validYAML))
	if err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(wd, "web.yaml")
	if got := pod.Annotations[AnnotationSourceFile]; got != abs {
		t.Errorf("source file = %q, want %q", got, abs)
	}
	if want := uidOf(t, uidNode, abs, validYAML); pod.UID != want {
		t.Errorf("UID = %q, want the UID of the absolute path %q", pod.UID, want)
	}
}

func TestLoadFileWarnings(t *testing.T) {
	data := strings.Replace(validYAML, "spec:\n", "spec:\n  nodeSelector:\n    disk: ssd\n", 1)
	pod, warnings, err := LoadFile(uidNode, "/m/web.yaml", []byte(data))
	if err != nil || pod == nil {
		t.Fatalf("LoadFile: %v", err)
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "spec.nodeSelector: ") {
		t.Errorf("warnings = %q, want one for spec.nodeSelector", warnings)
	}
}

func TestLoadFileHostPortUnderHostNetwork(t *testing.T) {
	data := strings.Replace(validYAML, "spec:\n", "spec:\n  hostNetwork: true\n", 1)
	data = strings.Replace(data, "- containerPort: 80\n", "- containerPort: 80\n      hostPort: 80\n", 1)
	pod, warnings, err := LoadFile(uidNode, "/m/web.yaml", []byte(data))
	if err != nil {
		t.Fatalf("LoadFile: %v", err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings = %q, want none", warnings)
	}
	if got := pod.Spec.Containers[0].Ports[0].HostPort; got != 80 {
		t.Errorf("hostPort = %d, want 80", got)
	}
}

func TestLoadFileErrors(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"invalid", strings.Replace(validYAML, "image: nginx:1.25", "image: ''", 1),
			"manifest /m/web.yaml: spec.containers[0].image: Required value"},
		{"unsupported", strings.Replace(validYAML, "spec:\n", "spec:\n  hostPID: true\n", 1),
			"manifest /m/web.yaml: spec.hostPID: Forbidden: not supported by actorlet"},
		{"hostPort mismatch under hostNetwork", strings.Replace(strings.Replace(validYAML, "- containerPort: 80\n", "- containerPort: 80\n      hostPort: 8080\n", 1), "spec:\n", "spec:\n  hostNetwork: true\n", 1),
			"manifest /m/web.yaml: spec.containers[0].ports[0].hostPort: Invalid value: 8080: must match containerPort when hostNetwork is true"},
		{"decode", "kind: Pod\napiVersion: v1\nspec: {bogus: 1}\n",
			`manifest /m/web.yaml: unknown field "spec.bogus"`},
		{"empty", "", "manifest /m/web.yaml: empty manifest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod, _, err := LoadFile(uidNode, "/m/web.yaml", []byte(tt.data))
			if err == nil || pod != nil {
				t.Fatalf("LoadFile = %v, %v; want error", pod, err)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("err = %q, want prefix %q", err, tt.want)
			}
			var fe *FileError
			if !errors.As(err, &fe) || fe.Path != "/m/web.yaml" {
				t.Errorf("err is not a *FileError for /m/web.yaml: %#v", err)
			}
		})
	}
}
