package manifest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// podDoc is a valid Pod document named name.
func podDoc(name string) string {
	return strings.Replace(minimalPod, "  name: web\n", "  name: "+name+"\n", 1)
}

// TestDecodeDocuments: a file holds one or several documents; each is
// decoded on its own, an error in one names the document (index and
// line) and spares the others; only a problem with the file as a whole
// is DecodeDocuments' error.
func TestDecodeDocumentsSplit(t *testing.T) {
	type want struct {
		name  string // the pod's name; "" when the document is refused
		line  int
		index int    // 0: its place in the list
		err   string // substring of the document's error
	}
	tests := []struct {
		name    string
		data    string
		docs    []want
		fileErr string // substring of DecodeDocuments' error
		is      error
	}{
		{name: "one pod", data: podDoc("a"), docs: []want{{name: "a", line: 1}}},
		{name: "json", data: validJSON, docs: []want{{name: "web", line: 1}}},
		{name: "two pods", data: podDoc("a") + "---\n" + podDoc("b"),
			docs: []want{{name: "a", line: 1}, {name: "b", line: 10}}},
		{name: "empty documents and comments skipped", data: "---\n# c\n---\n" + podDoc("a") + "...\n---\n~\n---\n" + podDoc("b") + "---\n",
			docs: []want{{name: "a", line: 4}, {name: "b", line: 16, index: 3}}}, // "~" counts
		{name: "bad field in the second", data: podDoc("a") + "---\n" + podDoc("b") + "    imagee: x\n" + "---\n" + podDoc("c"),
			docs: []want{{name: "a", line: 1}, {name: "b", line: 10}, {name: "c", line: 20}}},
		{name: "bad value in the first", data: podDoc("a") + "  terminationGracePeriodSeconds: soon\n---\n" + podDoc("b"),
			docs: []want{{line: 1, err: "manifest /m/all.yaml: document 1 (line 1): spec.terminationGracePeriodSeconds: Invalid value: \"soon\""}, {name: "b", line: 11}}},
		{name: "yaml syntax error spares the others", data: podDoc("a") + "---\n" + podDoc("b") + "  bad: [\n---\n" + podDoc("c"),
			docs: []want{{name: "a", line: 1}, {line: 10, err: "manifest /m/all.yaml: document 2 (line 10): invalid YAML: yaml: line 18: "}, {name: "c", line: 20}}},
		{name: "unclosed quote spares the next", data: podDoc("a") + "---\n" + "apiVersion: v1\nkind: Pod\nmetadata:\n  name: \"b\n---\n" + podDoc("c"),
			docs: []want{{name: "a", line: 1}, {line: 10, err: "document 2 (line 10): invalid YAML: yaml: line 1"}, {name: "c", line: 15}}},
		{name: "other kind named", data: podDoc("a") + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n",
			docs: []want{{name: "a", line: 1}, {line: 10, err: `document 2 (line 10): [kind: Unsupported value: "Deployment": supported values: "Pod", "ConfigMap", "Secret"`}}},
		{name: "a list document", data: podDoc("a") + "---\n- a\n",
			docs: []want{{name: "a", line: 1}, {line: 10, err: "document 2 (line 10): invalid manifest: want one Pod, ConfigMap or Secret object, not a list"}}},
		{name: "content after a separator", data: podDoc("a") + "--- {}\n" + "---\n" + podDoc("b"),
			docs: []want{{name: "a", line: 1}, {line: 9, err: "document 2 (line 9): invalid YAML: line 9: only a comment may follow a document separator"}, {name: "b", line: 11}}},
		{name: "duplicate key is an error", data: podDoc("a") + "    image: img:2\n---\n" + podDoc("b"),
			docs: []want{{line: 1, err: `document 1 (line 1): invalid YAML: yaml: unmarshal errors: line 9: key "image" already set in map`}, {name: "b", line: 11}}},
		{name: "single document errors read as Decode's", data: podDoc("a") + "  bad: [\n",
			docs: []want{{line: 1, err: "manifest /m/all.yaml: invalid YAML: yaml: line 9: "}}},

		{name: "empty", data: "", fileErr: "empty manifest", is: ErrEmpty},
		{name: "comments only", data: "# a\n---\n# b\n", fileErr: "empty manifest", is: ErrEmpty},
		{name: "null documents only", data: "~\n---\nnull\n", fileErr: "empty manifest", is: ErrEmpty},
		{name: "bad json", data: "{\n  \"kind\": Pod\n}", fileErr: "invalid character 'P' looking for beginning of value at line 2, column 11"},
		{name: "too many documents", data: strings.Repeat(podDoc("a")+"---\n", MaxDocuments+1),
			fileErr: fmt.Sprintf("found %d YAML documents, over the limit of %d per file", MaxDocuments+1, MaxDocuments), is: ErrNotOneObject},
		{name: "too large", data: minimalPod + "#" + strings.Repeat("x", MaxManifestBytes), fileErr: "over the 1048576-byte limit", is: ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := DecodeDocuments("/m/all.yaml", []byte(tt.data), DecodeOptions{})
			if tt.fileErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.fileErr) || !strings.HasPrefix(err.Error(), "manifest /m/all.yaml: ") {
					t.Fatalf("err = %v, want %q naming the file", err, tt.fileErr)
				}
				if tt.is != nil && !errors.Is(err, tt.is) {
					t.Errorf("errors.Is(%v) = false", tt.is)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if len(docs) != len(tt.docs) {
				t.Fatalf("%d documents, want %d: %+v", len(docs), len(tt.docs), docs)
			}
			for i, w := range tt.docs {
				d := docs[i]
				if w.index == 0 {
					w.index = i + 1
				}
				if d.Line != w.line || d.Index != w.index {
					t.Errorf("document %d: index %d line %d, want %d, %d", i+1, d.Index, d.Line, w.index, w.line)
				}
				switch {
				case w.err == "" && (d.Err != nil || d.Pod == nil || d.Pod.Name != w.name):
					t.Errorf("document %d: pod %v, err %v; want pod %s", i+1, d.Pod, d.Err, w.name)
				case w.err != "" && (d.Err == nil || d.Pod != nil || !strings.Contains(d.Err.Error(), w.err)):
					t.Errorf("document %d: pod %v, err %v; want error %q", i+1, d.Pod, d.Err, w.err)
				case w.err != "" && !strings.HasPrefix(d.Err.Error(), "manifest /m/all.yaml: "):
					t.Errorf("document %d: error %q does not name the file", i+1, d.Err)
				}
				var de *DocumentError
				if d.Err != nil && (len(docs) > 1) != errors.As(d.Err, &de) {
					t.Errorf("document %d: *DocumentError = %v in a file of %d documents", i+1, de, len(docs))
				}
			}
		})
	}
}

// TestDecodeDocumentsUnknownFields: by default an unknown field is a
// warning naming it (and, in a file of several, the document) and the
// pod is decoded; Strict makes it an error as Decode does. A duplicated
// field is an error either way.
func TestDecodeDocumentsUnknownFields(t *testing.T) {
	// GCE's konnectivity-server.yaml has metadata.component.
	withComponent := strings.Replace(podDoc("konnectivity-server"), "metadata:\n", "metadata:\n  component: konnectivity-server\n", 1)
	newer := podDoc("b") + "    futureField: {a: 1}\n"
	data := withComponent + "---\n" + newer

	docs, err := DecodeDocuments("/m/all.yaml", []byte(data), DecodeOptions{})
	if err != nil || len(docs) != 2 || docs[0].Pod == nil || docs[1].Pod == nil {
		t.Fatalf("lenient: %+v, %v; want two pods", docs, err)
	}
	for i, want := range []string{
		`document 1 (line 1): unknown field "metadata.component": ignored (--strict-manifests refuses it)`,
		`document 2 (line 11): unknown field "spec.containers[0].futureField": ignored (--strict-manifests refuses it)`,
	} {
		if len(docs[i].Warnings) != 1 || docs[i].Warnings[0] != want {
			t.Errorf("document %d warnings = %q, want %q", i+1, docs[i].Warnings, want)
		}
	}
	if docs[0].Pod.Spec.Containers[0].Image != "img:1" {
		t.Errorf("pod = %+v", docs[0].Pod)
	}

	docs, err = DecodeDocuments("/m/all.yaml", []byte(data), DecodeOptions{Strict: true})
	if err != nil || len(docs) != 2 {
		t.Fatalf("strict: %+v, %v", docs, err)
	}
	for i, want := range []string{`document 1 (line 1): unknown field "metadata.component"`, `document 2 (line 11): unknown field "spec.containers[0].futureField"`} {
		if docs[i].Pod != nil || docs[i].Err == nil || docs[i].Err.Error() != "manifest /m/all.yaml: "+want {
			t.Errorf("strict document %d: %v, want %q", i+1, docs[i].Err, want)
		}
	}

	// One document: the warning reads without a document.
	docs, err = DecodeDocuments("/m/k.yaml", []byte(withComponent), DecodeOptions{})
	if err != nil || len(docs) != 1 || len(docs[0].Warnings) != 1 || docs[0].Warnings[0] != `unknown field "metadata.component": ignored (--strict-manifests refuses it)` {
		t.Errorf("one document: %+v, %v", docs, err)
	}
	// Decode stays strict.
	if _, err := Decode("/m/k.yaml", []byte(withComponent)); err == nil || !strings.Contains(err.Error(), `unknown field "metadata.component"`) {
		t.Errorf("Decode = %v, want the unknown field refused", err)
	}
	// Duplicates are errors in both modes.
	dup := `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": [{"name": "c", "image": "i", "image": "j"}]}}`
	for _, strict := range []bool{false, true} {
		docs, err := DecodeDocuments("/m/d.json", []byte(dup), DecodeOptions{Strict: strict})
		if err != nil || len(docs) != 1 || docs[0].Err == nil || !strings.Contains(docs[0].Err.Error(), `duplicate field "spec.containers[0].image"`) {
			t.Errorf("strict=%v: %+v, %v; want the duplicate refused", strict, docs, err)
		}
	}
}

// TestLoadFileDocuments: each document's pod is defaulted, validated and
// given a UID and annotations; an invalid one names its document and
// field; the UID of a file's only pod does not change when the file
// gains a second document.
func TestLoadFileDocuments(t *testing.T) {
	one, err := LoadFileDocuments(LoadOptions{}, "n1", "/m/all.yaml", []byte(podDoc("a")))
	if err != nil || len(one) != 1 || one[0].Pod == nil {
		t.Fatalf("one: %+v, %v", one, err)
	}
	single, _, err := LoadFile("n1", "/m/all.yaml", []byte(podDoc("a")))
	if err != nil || single.UID != one[0].Pod.UID {
		t.Fatalf("LoadFile UID %v, LoadFileDocuments UID %v (%v): want the same", single.UID, one[0].Pod.UID, err)
	}
	bad := strings.Replace(podDoc("bad"), "image: img:1", `image: ""`, 1)
	data := podDoc("a") + "---\n" + bad + "---\n" + strings.Replace(podDoc("c"), "  name: c\n", "  name: c\n  namespace: kube-system\n", 1) + "  tolerations: [{operator: Exists}]\n"
	docs, err := LoadFileDocuments(LoadOptions{}, "n1", "/m/all.yaml", []byte(data))
	if err != nil || len(docs) != 3 {
		t.Fatalf("%+v, %v", docs, err)
	}
	if docs[0].Pod == nil || docs[0].Pod.UID != one[0].Pod.UID || docs[0].Pod.Annotations[AnnotationSourceFile] != "/m/all.yaml" || docs[0].Namespace != "default" {
		t.Errorf("document 1 = %+v, want pod a with the UID it had alone", docs[0])
	}
	if want := "manifest /m/all.yaml: document 2 (line 10): spec.containers[0].image: Required value"; docs[1].Pod != nil || docs[1].Err == nil || docs[1].Err.Error() != want {
		t.Errorf("document 2 err = %v, want %q", docs[1].Err, want)
	}
	if docs[1].Namespace != "default" || docs[1].Name != "bad" {
		t.Errorf("document 2 is %s/%s, want default/bad (read despite the error)", docs[1].Namespace, docs[1].Name)
	}
	if docs[2].Pod == nil || docs[2].Pod.Namespace != "kube-system" || len(docs[2].Warnings) != 1 || !strings.HasPrefix(docs[2].Warnings[0], "document 3 (line 19): spec.tolerations") {
		t.Errorf("document 3 = %+v, want kube-system/c with a tolerations warning naming the document", docs[2])
	}
}
