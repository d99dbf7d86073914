package manifest

import (
	"strings"
	"testing"
)

// TestLoadFileDocumentsConfigData: ConfigMap and Secret documents are
// read beside pods, defaulted (namespace, Secret type, stringData merged
// into data) and validated; their errors name the document and field and
// never show a Secret's value; other kinds are refused by name.
func TestLoadFileDocumentsConfigData(t *testing.T) {
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: conf\n  namespace: kube-system\nimmutable: true\ndata:\n  app.conf: |\n    x = 1\nbinaryData:\n  blob: AAEC\n"
	const secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\ndata:\n  user: YWRtaW4=\n  password: b2xk\nstringData:\n  password: hunter2\n  token: t0k3n\n"
	docs, err := LoadFileDocuments(LoadOptions{}, "n1", "/m/all.yaml", []byte(podDoc("a")+"---\n"+cm+"---\n"+secret))
	if err != nil || len(docs) != 3 {
		t.Fatalf("%+v, %v", docs, err)
	}
	if docs[0].Pod == nil || docs[0].Kind != PodKind {
		t.Errorf("document 1 = %+v, want the pod", docs[0])
	}
	c := docs[1].ConfigMap
	if c == nil || docs[1].Kind != ConfigMapKind || c.Namespace != "kube-system" || c.Name != "conf" || c.Data["app.conf"] != "x = 1\n" ||
		string(c.BinaryData["blob"]) != "\x00\x01\x02" || c.Immutable == nil || !*c.Immutable || c.Annotations[AnnotationSourceFile] != "/m/all.yaml" {
		t.Errorf("document 2 = %+v / %+v, want the ConfigMap", docs[1], c)
	}
	s := docs[2].Secret
	if s == nil || s.Namespace != "default" || s.Type != "Opaque" || len(s.StringData) != 0 || len(s.Data) != 3 ||
		string(s.Data["user"]) != "admin" || string(s.Data["password"]) != "hunter2" || string(s.Data["token"]) != "t0k3n" {
		t.Errorf("document 3 = %+v, want the Secret with stringData merged (stringData wins)", s)
	}
	if docs[2].Namespace != "default" || docs[2].Name != "creds" {
		t.Errorf("document 3 is %s/%s", docs[2].Namespace, docs[2].Name)
	}

	tests := []struct {
		name, data string
		want       string // the document's error, after "manifest /m/x.yaml: "
		hidden     string // must not appear in it
	}{
		{"configmap key", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a/b: x\n", `data[a/b]: Invalid value: "a/b": a valid config key must consist of alphanumeric characters`, ""},
		{"configmap key in both", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: x\nbinaryData:\n  k: AA==\n", `binaryData[k]: Invalid value: "k": duplicate of key in data`, ""},
		{"configmap name", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n", `metadata.name: Invalid value: "Bad_Name"`, ""},
		{"configmap no name", "apiVersion: v1\nkind: ConfigMap\ndata: {}\n", `metadata.name: Required value`, ""},
		{"configmap value type", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: [1]\n", `data[k]: Invalid value: [1]: want a string`, ""},
		{"secret tls keys", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ntype: kubernetes.io/tls\ndata:\n  tls.crt: Y2VydA==\n",
			`data[tls.key]: Required value: a Secret of type kubernetes.io/tls needs it`, ""},
		{"secret bad base64 hidden", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  password: not*base64*hunter2\n",
			`data[password]: Invalid value: (hidden: a Secret's value): want a base64 string`, "hunter2"},
		{"secret yaml error hidden", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  password: !!int hunter2\n",
			"invalid YAML: yaml: line 6: cannot decode !!str (hidden: in a Secret) as a !!int", "hunter2"},
		{"secret separator hidden", "--- hunter2\nkind: Secret\n", "invalid YAML: line 1: only a comment may follow a document separator (---), not (hidden: in a Secret)", "hunter2"},
		{"other kind", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n",
			`[kind: Unsupported value: "Deployment": supported values: "Pod", "ConfigMap", "Secret", apiVersion: Unsupported value: "apps/v1": supported values: "v1"]`, ""},
		{"unknown field warned", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndatta: {}\n", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := LoadFileDocuments(LoadOptions{}, "n1", "/m/x.yaml", []byte(tt.data))
			if err != nil || len(docs) != 1 {
				t.Fatalf("%+v, %v", docs, err)
			}
			d := docs[0]
			if tt.want == "" {
				if d.Err != nil || d.ConfigMap == nil || len(d.Warnings) != 1 || !strings.HasPrefix(d.Warnings[0], `unknown field "datta"`) {
					t.Errorf("document = %+v, want the ConfigMap and a warning naming datta", d)
				}
				return
			}
			if d.Err == nil || d.Pod != nil || d.ConfigMap != nil || d.Secret != nil {
				t.Fatalf("document = %+v, want only an error", d)
			}
			if got := strings.TrimPrefix(d.Err.Error(), "manifest /m/x.yaml: "); !strings.HasPrefix(got, tt.want) {
				t.Errorf("err = %q, want %q...", got, tt.want)
			}
			if tt.hidden != "" && strings.Contains(d.Err.Error(), tt.hidden) {
				t.Errorf("err = %q shows the Secret's value", d.Err)
			}
		})
	}
}
