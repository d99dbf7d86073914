package manifest

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

const listPath = "https://example.com/pods"

const validListYAML = `apiVersion: v1
kind: PodList
metadata:
  resourceVersion: "7"
items:
- apiVersion: v1
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
- metadata:
    name: api
    namespace: prod
  spec:
    containers:
    - name: api
      image: api:2
`

const validListJSON = `{"apiVersion": "v1", "kind": "PodList", "items": [
	{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "labels": {"app": "web"}},
	 "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}]}},
	{"metadata": {"name": "api", "namespace": "prod"}, "spec": {"containers": [{"name": "api", "image": "api:2"}]}}
]}`

func TestDecodeListPodList(t *testing.T) {
	for name, data := range map[string]string{"yaml": validListYAML, "json": validListJSON} {
		t.Run(name, func(t *testing.T) {
			items, err := DecodeList(listPath, []byte(data))
			if err != nil {
				t.Fatalf("DecodeList: %v", err)
			}
			if len(items) != 2 {
				t.Fatalf("got %d items, want 2", len(items))
			}
			for i, want := range []struct{ field, ns, name, image string }{
				{"items[0]", "", "web", "nginx:1.25"},
				{"items[1]", "prod", "api", "api:2"},
			} {
				it := items[i]
				if it.Err != nil {
					t.Fatalf("item %d: %v", i, it.Err)
				}
				if it.Field.String() != want.field || it.Namespace != want.ns || it.Name != want.name {
					t.Errorf("item %d = {%s %s/%s}, want {%s %s/%s}", i, it.Field, it.Namespace, it.Name, want.field, want.ns, want.name)
				}
				p := it.Pod
				if p.Name != want.name || p.Namespace != want.ns || p.Spec.Containers[0].Image != want.image {
					t.Errorf("item %d pod = %+v", i, p)
				}
				if p.Kind != PodKind || p.APIVersion != PodAPIVersion {
					t.Errorf("item %d TypeMeta = %+v, want Pod v1", i, p.TypeMeta)
				}
				if p.Spec.RestartPolicy != "" {
					t.Errorf("item %d was defaulted", i)
				}
			}
		})
	}
}

// A pod's canonical form, and so its UID, does not depend on whether it
// came alone or as a PodList item, with or without kind and apiVersion.
func TestDecodeListItemMatchesDecode(t *testing.T) {
	single, err := Decode(listPath, []byte(validYAML))
	if err != nil {
		t.Fatal(err)
	}
	items, err := DecodeList(listPath, []byte(validListYAML))
	if err != nil {
		t.Fatal(err)
	}
	noKind, err := DecodeList(listPath, []byte(strings.Replace(validListYAML, "- apiVersion: v1\n  kind: Pod\n  metadata:", "- metadata:", 1)))
	if err != nil {
		t.Fatal(err)
	}
	want := StaticPodUID(uidNode, listPath, single)
	for name, it := range map[string]ListItem{"item": items[0], "item without kind": noKind[0]} {
		if it.Err != nil {
			t.Fatalf("%s: %v", name, it.Err)
		}
		if got := StaticPodUID(uidNode, listPath, it.Pod); got != want {
			t.Errorf("%s: UID %s, want the single pod's %s", name, got, want)
		}
	}
}

func TestDecodeListSinglePod(t *testing.T) {
	for name, data := range map[string]string{"yaml": validYAML, "json": validJSON} {
		t.Run(name, func(t *testing.T) {
			items, err := DecodeList(listPath, []byte(data))
			if err != nil {
				t.Fatalf("DecodeList: %v", err)
			}
			if len(items) != 1 || items[0].Err != nil || items[0].Field != nil || items[0].Name != "web" || items[0].Pod.Name != "web" {
				t.Fatalf("items = %+v, want the one pod web with no field", items)
			}
		})
	}
}

func TestDecodeListEmptyPodList(t *testing.T) {
	for _, data := range []string{
		"apiVersion: v1\nkind: PodList\nitems: []\n",
		"apiVersion: v1\nkind: PodList\n",
		`{"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": null}`,
	} {
		items, err := DecodeList(listPath, []byte(data))
		if err != nil || len(items) != 0 {
			t.Errorf("DecodeList(%q) = %v, %v; want no items, no error", data, items, err)
		}
	}
}

func TestDecodeListDocumentErrors(t *testing.T) {
	tests := []struct {
		name, data string
		want       []string
		isEmpty    bool
	}{
		{"empty", "", []string{"empty manifest: want one Pod or PodList"}, true},
		{"comments only", "# nothing\n", []string{"empty manifest"}, true},
		{"json null", "null", []string{"empty manifest"}, true},
		{"not yaml", "apiVersion: v1\nkind: PodList\n items: []\n", []string{"invalid YAML"}, false},
		{"truncated json", validListJSON[:40], []string{"invalid manifest", "unexpected end of JSON input"}, false},
		{"html", "<html><body>Bad gateway</body></html>\n", []string{"want one Pod or PodList object"}, false},
		{"top-level list", "- a\n", []string{"want one Pod or PodList object"}, false},
		{"wrong kind", strings.Replace(validListYAML, "kind: PodList", "kind: List", 1), []string{`kind: Unsupported value: "List"`}, false},
		{"missing kind", strings.Replace(validListYAML, "kind: PodList\n", "", 1), []string{"kind: Required value: want Pod or PodList"}, false},
		{"wrong apiVersion", strings.Replace(validListYAML, "apiVersion: v1\nkind: PodList", "apiVersion: v2\nkind: PodList", 1), []string{`apiVersion: Unsupported value: "v2"`}, false},
		{"two documents", validYAML + "---\n" + validYAML, []string{"found 2 YAML documents: want one Pod or PodList"}, false},
		{"unknown list field", validListYAML + "itemz: []\n", []string{`unknown field "itemz"`}, false},
		{"items not a list", "apiVersion: v1\nkind: PodList\nitems: {}\n", []string{"items: Invalid value: {}: want a list"}, false},
		{"duplicate key yaml", validListYAML + "kind: PodList\n", []string{"invalid YAML", `"kind" already set`}, false},
		{"duplicate items json", `{"apiVersion": "v1", "kind": "PodList", "items": [], "items": []}`, []string{`duplicate field "items"`}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, err := DecodeList(listPath, []byte(tt.data))
			if err == nil {
				t.Fatalf("DecodeList = %+v, want error", items)
			}
			if items != nil {
				t.Errorf("items %+v with error", items)
			}
			var fe *FileError
			if !errors.As(err, &fe) || fe.Path != listPath {
				t.Errorf("err %v is not a *FileError for %s", err, listPath)
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err %q does not contain %q", err, want)
				}
			}
			if got := errors.Is(err, ErrEmpty); got != tt.isEmpty {
				t.Errorf("errors.Is(err, ErrEmpty) = %v, want %v", got, tt.isEmpty)
			}
		})
	}
}

func TestDecodeListItemErrors(t *testing.T) {
	const good = `{"metadata": {"name": "good"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}`
	tests := []struct {
		name, item  string
		ns, podName string // what peekName should still find
		want        []string
	}{
		{"unknown field", `{"metadata": {"name": "bad", "namespace": "x"}, "spec": {"containers": [{"name": "c", "imagee": "i"}]}}`,
			"x", "bad", []string{`unknown field "items[1].spec.containers[0].imagee"`}},
		{"two unknown fields", `{"metadata": {"name": "bad"}, "extra": 1, "spec": {"bogus": 1}}`,
			"", "bad", []string{`unknown field "items[1].extra"`, `unknown field "items[1].spec.bogus"`}},
		{"duplicate field", `{"metadata": {"name": "bad"}, "metadata": {"name": "bad"}}`,
			"", "bad", []string{`duplicate field "items[1].metadata"`}},
		{"wrong kind", `{"kind": "Service", "metadata": {"name": "bad"}}`,
			"", "bad", []string{`items[1].kind: Unsupported value: "Service"`}},
		{"wrong apiVersion", `{"apiVersion": "v2", "metadata": {"name": "bad"}}`,
			"", "bad", []string{`items[1].apiVersion: Unsupported value: "v2"`}},
		{"wrong type", `{"metadata": {"name": "bad"}, "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": "eighty"}]}]}}`,
			"", "bad", []string{`items[1].spec.containers[0].ports[0].containerPort: Invalid value: "eighty": want an integer (int32)`}},
		{"null", `null`, "", "", []string{"items[1]: Required value"}},
		{"not an object", `"web"`, "", "", []string{"items[1]: invalid manifest: want one Pod object"}},
		{"bad name type", `{"metadata": {"name": 7}}`, "", "", []string{"items[1].metadata.name: Invalid value: 7: want a string"}},
		{"bad quantity", `{"metadata": {"name": "bad"}, "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "1x"}}}]}}`,
			"", "bad", []string{`items[1].spec.containers[0].resources.limits[cpu]: Invalid value: "1x": want a quantity`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := `{"apiVersion": "v1", "kind": "PodList", "items": [` + good + `, ` + tt.item + `, ` + good + `]}`
			items, err := DecodeList(listPath, []byte(data))
			if err != nil {
				t.Fatalf("DecodeList: %v", err)
			}
			if len(items) != 3 || items[0].Err != nil || items[2].Err != nil {
				t.Fatalf("items = %+v, want 3 with only the middle one bad", items)
			}
			it := items[1]
			if it.Err == nil || it.Pod != nil {
				t.Fatalf("item 1 = %+v, want an error and no pod", it)
			}
			if it.Namespace != tt.ns || it.Name != tt.podName {
				t.Errorf("item 1 name = %q/%q, want %q/%q", it.Namespace, it.Name, tt.ns, tt.podName)
			}
			if !strings.HasPrefix(it.Err.Error(), "manifest "+listPath+": ") {
				t.Errorf("err %q does not name %s", it.Err, listPath)
			}
			for _, want := range tt.want {
				if !strings.Contains(it.Err.Error(), want) {
					t.Errorf("err %q does not contain %q", it.Err, want)
				}
			}
		})
	}
}

func TestDecodeListSinglePodError(t *testing.T) {
	items, err := DecodeList(listPath, []byte(strings.Replace(validYAML, "image:", "imagee:", 1)))
	if err != nil {
		t.Fatalf("DecodeList: %v", err)
	}
	if len(items) != 1 || items[0].Err == nil || items[0].Name != "web" {
		t.Fatalf("items = %+v, want one bad item named web", items)
	}
	if want := `manifest ` + listPath + `: unknown field "spec.containers[0].imagee"`; items[0].Err.Error() != want {
		t.Errorf("err = %q, want %q", items[0].Err, want)
	}
}

func TestValidateAt(t *testing.T) {
	pod := bare()
	SetDefaults(pod)
	pod.Spec.Containers[0].Image = ""
	pod.Name = ""
	pod.Spec.NodeSelector = map[string]string{"a": "b"}

	plainWarns, plainErr := Validate(pod.DeepCopy())
	warns, err := ValidateAt(pod.DeepCopy(), nil)
	if err.Error() != plainErr.Error() || strings.Join(warns, ",") != strings.Join(plainWarns, ",") {
		t.Errorf("ValidateAt(nil) = %q, %v; want Validate's %q, %v", warns, err, plainWarns, plainErr)
	}

	warns, err = ValidateAt(pod, field.NewPath("items").Index(2))
	for _, want := range []string{"items[2].metadata.name: Required value", "items[2].spec.containers[0].image: Required value"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err %v does not contain %q", err, want)
		}
	}
	if len(warns) != 1 || !strings.HasPrefix(warns[0], "items[2].spec.nodeSelector: ignored") {
		t.Errorf("warnings = %q, want one for items[2].spec.nodeSelector", warns)
	}

	valid := bare()
	SetDefaults(valid)
	if warns, err := ValidateAt(valid, field.NewPath("items").Index(0)); err != nil || len(warns) != 0 {
		t.Errorf("ValidateAt(valid) = %q, %v", warns, err)
	}
}
