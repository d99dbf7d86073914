package manifest

import (
	"errors"
	"strings"
	"testing"
)

const validYAML = `# a static pod
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
    app: web
spec:
  containers:
  - name: nginx
    image: nginx:1.25
    ports:
    - containerPort: 80
`

const validJSON = `{
	"apiVersion": "v1",
	"kind": "Pod",
	"metadata": {"name": "web", "labels": {"app": "web"}},
	"spec": {"containers": [{"name": "nginx", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}]}
}`

func TestDecode(t *testing.T) {
	tests := []struct {
		name string
		data string
		// wantErr: substrings of the error; empty means success.
		wantErr []string
		isEmpty bool // errors.Is(err, ErrEmpty)
	}{
		{name: "yaml", data: validYAML},
		{name: "json", data: validJSON},
		{name: "yaml with document markers", data: "---\n" + validYAML + "...\n"},
		{name: "yaml flow style", data: "# comment\n" + validJSON},
		{name: "trailing empty document", data: validYAML + "---\n# nothing here\n"},

		{name: "empty", data: "", wantErr: []string{"empty manifest"}, isEmpty: true},
		{name: "blank", data: " \n\t\n", wantErr: []string{"empty manifest"}, isEmpty: true},
		{name: "comments only", data: "# nothing\n---\n# still nothing\n", wantErr: []string{"empty manifest"}, isEmpty: true},
		{name: "json null", data: "null", wantErr: []string{"empty manifest"}, isEmpty: true},

		{name: "wrong kind yaml", data: strings.Replace(validYAML, "kind: Pod", "kind: Deployment", 1),
			wantErr: []string{`kind: Unsupported value: "Deployment"`}},
		{name: "wrong kind json", data: strings.Replace(validJSON, `"kind": "Pod"`, `"kind": "Service"`, 1),
			wantErr: []string{`kind: Unsupported value: "Service"`}},
		{name: "wrong apiVersion", data: strings.Replace(validYAML, "apiVersion: v1", "apiVersion: apps/v1", 1),
			wantErr: []string{`apiVersion: Unsupported value: "apps/v1"`}},
		{name: "wrong kind and apiVersion", data: "apiVersion: apps/v1\nkind: Deployment\n",
			wantErr: []string{`kind: Unsupported value: "Deployment"`, `apiVersion: Unsupported value: "apps/v1"`}},
		{name: "missing kind", data: strings.Replace(validYAML, "kind: Pod\n", "", 1), wantErr: []string{"kind: Required value"}},
		{name: "missing apiVersion", data: strings.Replace(validJSON, `"apiVersion": "v1",`, "", 1), wantErr: []string{"apiVersion: Required value"}},
		{name: "kind is case-sensitive", data: strings.Replace(validYAML, "kind: Pod", "Kind: Pod", 1), wantErr: []string{"kind: Required value"}},

		{name: "unknown field yaml", data: strings.Replace(validYAML, "image: nginx", "imagee: nginx", 1),
			wantErr: []string{`unknown field "spec.containers[0].imagee"`}},
		{name: "unknown field json", data: strings.Replace(validJSON, `"image":`, `"imagee":`, 1),
			wantErr: []string{`unknown field "spec.containers[0].imagee"`}},
		{name: "field names are case-sensitive", data: strings.Replace(validYAML, "image: nginx", "Image: nginx", 1),
			wantErr: []string{`unknown field "spec.containers[0].Image"`}},
		{name: "unknown top-level field", data: validYAML + "extra: 1\n", wantErr: []string{`unknown field "extra"`}},
		{name: "two unknown fields", data: strings.Replace(strings.Replace(validYAML, "image: nginx", "imagee: nginx", 1), "labels:", "labelz:", 1),
			wantErr: []string{`unknown field "metadata.labelz"`, `unknown field "spec.containers[0].imagee"`}},
		{name: "duplicate key yaml", data: validYAML + "kind: Pod\n", wantErr: []string{"invalid YAML", `"kind" already set`}},
		{name: "duplicate key json", data: strings.Replace(validJSON, `"kind": "Pod",`, `"kind": "Pod", "kind": "Pod",`, 1),
			wantErr: []string{`duplicate field "kind"`}},
		{name: "wrong type", data: strings.Replace(validYAML, "containerPort: 80", "containerPort: eighty", 1),
			wantErr: []string{`spec.containers[0].ports[0].containerPort: Invalid value: "eighty": want an integer (int32)`}},

		{name: "truncated json", data: validJSON[:len(validJSON)/2], wantErr: []string{"invalid manifest", "unexpected end of JSON input"}},
		{name: "truncated yaml", data: validYAML[:strings.Index(validYAML, "image:")] + "image: \"nginx:1.", wantErr: []string{"invalid YAML"}},
		{name: "bad indentation", data: "apiVersion: v1\nkind: Pod\n metadata: {}\n", wantErr: []string{"invalid YAML"}},
		{name: "two documents", data: validYAML + "---\n" + validYAML, wantErr: []string{"found 2 YAML documents"}},
		{name: "top-level list", data: "- a\n- b\n", wantErr: []string{"want one Pod object"}},
		{name: "top-level scalar", data: "hello\n", wantErr: []string{"want one Pod object"}},
	}
	const path = "/etc/actorlet/manifests/web.yaml"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod, err := Decode(path, []byte(tt.data))
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				if pod.Name != "web" || len(pod.Spec.Containers) != 1 || pod.Spec.Containers[0].Image != "nginx:1.25" ||
					pod.Spec.Containers[0].Ports[0].ContainerPort != 80 || pod.Labels["app"] != "web" {
					t.Errorf("decoded pod is wrong: %+v", pod)
				}
				if pod.Namespace != "" || pod.Spec.RestartPolicy != "" {
					t.Errorf("Decode applied defaults: %+v", pod)
				}
				return
			}
			if err == nil {
				t.Fatalf("Decode succeeded, want error %q", tt.wantErr)
			}
			if pod != nil {
				t.Errorf("Decode returned a pod with error %v", err)
			}
			var fe *FileError
			if !errors.As(err, &fe) || fe.Path != path {
				t.Errorf("err %v is not a *FileError for %s", err, path)
			}
			if !strings.HasPrefix(err.Error(), "manifest "+path+": ") {
				t.Errorf("err %q does not start with the file", err)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err %q does not contain %q", err, want)
				}
			}
			if got := errors.Is(err, ErrEmpty); got != tt.isEmpty {
				t.Errorf("errors.Is(err, ErrEmpty) = %v, want %v (err %v)", got, tt.isEmpty, err)
			}
		})
	}
}
