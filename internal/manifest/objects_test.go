package manifest

import (
	"strings"
	"testing"
)

// DecodeObjects reads each shape a manifest URL may serve; a problem with
// one object is its own, a problem with the body is the error.
func TestDecodeObjects(t *testing.T) {
	const (
		pod    = `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}`
		cm     = `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "conf"}, "data": {"k": "v"}}`
		secret = `{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds"}, "data": {"password": "aHVudGVyMg=="}}`
	)
	list := func(items ...string) string {
		return `{"apiVersion": "v1", "kind": "List", "items": [` + strings.Join(items, ",") + `]}`
	}
	for _, tt := range []struct {
		name, body string
		want       []string // per document: its kind and name, or "error: <part of Err>"
		wantErr    string
	}{
		{"one pod", pod, []string{"Pod web"}, ""},
		{"a PodList", `{"apiVersion": "v1", "kind": "PodList", "items": [` + pod + `]}`, []string{"Pod web"}, ""},
		{"one ConfigMap", cm, []string{"ConfigMap conf"}, ""},
		{"documents", "kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: conf\n---\n" + "kind: Secret\napiVersion: v1\nmetadata:\n  name: creds\n", []string{"ConfigMap conf", "Secret creds"}, ""},
		{"a bad document", "kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: conf\n---\nkind: Secret\napiVersion: v1\nmetadata:\n  name: creds\ndata: 3\n",
			[]string{"ConfigMap conf", "error: document 2 (line 6): data"}, ""},
		{"a List", list(pod, cm, secret), []string{"Pod web", "ConfigMap conf", "Secret creds"}, ""},
		{"a List with a bad item", list(cm, `{"apiVersion": "v1", "kind": "Service"}`, "null", `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "dataa": {}}`),
			[]string{"ConfigMap conf", `error: items[1]: kind: Unsupported value: "Service"`, "error: items[2]: want a Pod, ConfigMap or Secret, not null", `error: items[3]: unknown field "dataa"`}, ""},
		{"an empty List", list(), nil, ""},
		{"a List of another version", `{"apiVersion": "v2", "kind": "List", "items": []}`, nil, `apiVersion: Unsupported value: "v2"`},
		{"a List with an unknown field", `{"apiVersion": "v1", "kind": "List", "itemz": []}`, nil, `unknown field "itemz"`},
		{"another kind", `{"apiVersion": "apps/v1", "kind": "Deployment"}`, nil, `supported values: "Pod", "PodList", "List", "ConfigMap", "Secret"`},
		{"empty", "", nil, "empty manifest"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := DecodeObjects(listPath, []byte(tt.body))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "manifest "+listPath+": ") {
					t.Fatalf("err = %v, want one naming the URL and containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			var got []string
			for _, d := range docs {
				switch {
				case d.Err != nil:
					if !strings.HasPrefix(d.Err.Error(), "manifest "+listPath+": ") {
						t.Errorf("document error %q does not name the URL", d.Err)
					}
					got = append(got, "error: "+strings.TrimPrefix(d.Err.Error(), "manifest "+listPath+": "))
				case d.Pod != nil:
					got = append(got, "Pod "+d.Pod.Name)
				case d.ConfigMap != nil:
					got = append(got, "ConfigMap "+d.ConfigMap.Name)
				case d.Secret != nil:
					got = append(got, "Secret "+d.Secret.Name)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("documents %q, want %q", got, tt.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("document %d = %q, want %q…", i, got[i], tt.want[i])
				}
			}
		})
	}
}
