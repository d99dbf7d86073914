package manifest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// minimalPod is the smallest valid manifest; the tests below append to it.
const minimalPod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: app\n    image: img:1\n"

// TestDecodeValueErrors: a value of the wrong type or format is a
// *ValueError naming its full path (list indices and map keys included),
// whether the decoder's own message names a field (type mismatch) or not
// (resource.Quantity, metav1.Time and intstr.IntOrString parse
// themselves and lose the path).
func TestDecodeValueErrors(t *testing.T) {
	second := minimalPod + "  - name: two\n    image: img:2\n"
	tests := []struct {
		name, data string
		field      string // ValueError.Field
		want       string // substring of the message
		is         error  // errors.Is target, if any
	}{
		{"quantity limit", second + "    resources:\n      limits:\n        cpu: 1x\n",
			"spec.containers[1].resources.limits[cpu]", `Invalid value: "1x": want a quantity (e.g. 500m, 64Mi): `, resource.ErrFormatWrong},
		{"quantity suffix", minimalPod + "    resources:\n      requests:\n        memory: 5i\n",
			"spec.containers[0].resources.requests[memory]", `Invalid value: "5i": want a quantity`, resource.ErrSuffix},
		{"quantity sizeLimit", minimalPod + "  volumes:\n  - name: v\n    emptyDir:\n      sizeLimit: lots\n",
			"spec.volumes[0].emptyDir.sizeLimit", `Invalid value: "lots"`, resource.ErrFormatWrong},
		{"time", strings.Replace(minimalPod, "  name: web\n", "  name: web\n  creationTimestamp: yesterday\n", 1),
			"metadata.creationTimestamp", `Invalid value: "yesterday": want an RFC 3339 time (e.g. 2006-01-02T15:04:05Z): parsing time`, nil},
		{"int or string", minimalPod + "    livenessProbe:\n      httpGet:\n        port: {}\n",
			"spec.containers[0].livenessProbe.httpGet.port", "Invalid value: {}: want an integer or a string", nil},
		{"string for int", minimalPod + "    ports:\n    - containerPort: 80\n    - containerPort: eighty\n",
			"spec.containers[0].ports[1].containerPort", `Invalid value: "eighty": want an integer (int32)`, nil},
		{"int overflow", minimalPod + "  terminationGracePeriodSeconds: 99999999999999999999\n",
			"spec.terminationGracePeriodSeconds", "want an integer (int64)", nil},
		{"scalar for list", minimalPod + "    ports: 5\n", "spec.containers[0].ports", "Invalid value: 5: want a list", nil},
		{"label value", strings.Replace(minimalPod, "  name: web\n", "  name: web\n  labels: {a: 1}\n", 1),
			"metadata.labels[a]", "Invalid value: 1: want a string", nil},
		{"kind", strings.Replace(minimalPod, "kind: Pod", "kind: [Pod]", 1), "kind", `Invalid value: ["Pod"]: want a string`, nil},
		{"json", `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": {"containers": [{"name": "a", "image": "i",
			"resources": {"requests": {"cpu": "1x"}}}]}}`, "spec.containers[0].resources.requests[cpu]", `Invalid value: "1x"`, resource.ErrFormatWrong},
		// The decoder stops at the first bad value, in document order;
		// the duplicated key's second value is that one.
		{"duplicated key json", `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "name": 5}}`,
			"metadata.name", "Invalid value: 5: want a string", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode("/m/web.yaml", []byte(tt.data))
			var ve *ValueError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v (%T), want a *ValueError", err, err)
			}
			if ve.Field != tt.field {
				t.Errorf("Field = %q, want %q (err %v)", ve.Field, tt.field, err)
			}
			if want := "manifest /m/web.yaml: " + tt.field + ": " + tt.want; !strings.HasPrefix(err.Error(), "manifest /m/web.yaml: "+tt.field+": ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want %q...", err, want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(err, %v) = false: the cause is not wrapped", tt.is)
			}
		})
	}
}

// TestDecodeValueErrorIsShort: the value in the message is cut.
func TestDecodeValueErrorIsShort(t *testing.T) {
	long := strings.Repeat("x", 100_000)
	_, err := Decode("/m/web.yaml", []byte(strings.Replace(minimalPod, "  name: web\n", "  name: web\n  creationTimestamp: "+long+"\n", 1)))
	var ve *ValueError
	if !errors.As(err, &ve) || ve.Field != "metadata.creationTimestamp" {
		t.Fatalf("err = %v, want a *ValueError for metadata.creationTimestamp", err)
	}
	if n := len(err.Error()); n > 2*maxErrorBytes {
		t.Errorf("message is %d bytes: %.200s...", n, err)
	}
}

func TestDecodeSyntaxErrors(t *testing.T) {
	tests := []struct {
		name, data   string
		format       string
		line, column int
		want         string
	}{
		{"truncated json", "{\"apiVersion\": \"v1\",\n \"kind\": \"Pod\",\n \"metadata\": {\"na", "JSON", 3, 18,
			"invalid manifest: want one Pod object: unexpected end of JSON input at line 3, column 18"},
		{"two json values", `{"kind": "Pod"} {"kind": "Pod"}`, "JSON", 1, 17, "invalid character '{' after top-level value at line 1, column 17"},
		{"bad json", "{\n  \"kind\": Pod\n}", "JSON", 2, 11, "invalid character 'P' looking for beginning of value at line 2, column 11"},
		{"yaml", minimalPod + "  bad: [\n", "YAML", 9, 0, "invalid YAML: yaml: line 9: "},
		{"yaml duplicate key", minimalPod + "    image: img:2\n", "YAML", 9, 0, `invalid YAML: yaml: unmarshal errors: line 9: key "image" already set in map`},
		// Documents before the one with content are blanked, not cut:
		// the line is still the file's.
		{"yaml after empty documents", "---\n# nothing\n---\n" + minimalPod + "  bad: [\n", "YAML", 12, 0, "invalid YAML: yaml: line 12: "},
		{"yaml separator", minimalPod + "--- {}\n", "YAML", 9, 0, "invalid YAML: line 9: only a comment may follow a document separator"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode("/m/web.yaml", []byte(tt.data))
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v (%T), want a *SyntaxError", err, err)
			}
			if se.Format != tt.format || se.Line != tt.line || se.Column != tt.column {
				t.Errorf("SyntaxError = %s line %d column %d, want %s %d %d", se.Format, se.Line, se.Column, tt.format, tt.line, tt.column)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want %q", err, tt.want)
			}
		})
	}
}

// TestDecodeDocuments: "---" and "..." split documents; only documents
// with content count, and the one with content is the one decoded.
func TestDecodeDocuments(t *testing.T) {
	ok := []string{
		"---\n---\n" + minimalPod,
		"---\n# nothing\n---\n" + minimalPod,
		"# c\n---\n" + minimalPod + "...\n# trailing\n",
		"---\n# c\n...\n" + minimalPod,
		minimalPod + "---\n",
	}
	for _, data := range ok {
		if pod, err := Decode("/m/web.yaml", []byte(data)); err != nil || pod.Name != "web" {
			t.Errorf("Decode(%q) = %v, %v; want the pod", data, pod, err)
		}
	}
	several := []string{
		minimalPod + "---\n" + minimalPod,
		// After a document end marker, content is another document (it
		// used to be dropped silently).
		minimalPod + "...\nspec: {}\n",
		"apiVersion: v1\nkind: Pod\n...\nmetadata:\n  name: web\n",
	}
	for _, data := range several {
		_, err := Decode("/m/web.yaml", []byte(data))
		if !errors.Is(err, ErrNotOneObject) || !strings.Contains(err.Error(), "found 2 YAML documents") {
			t.Errorf("Decode(%q) = %v, want 2 documents, ErrNotOneObject", data, err)
		}
	}
	for data, what := range map[string]string{"- a\n": "a list", "hello\n": "a string", "5\n": "a number", "true\n": "a boolean", "[1]": "a list"} {
		_, err := Decode("/m/web.yaml", []byte(data))
		if !errors.Is(err, ErrNotOneObject) || !strings.HasSuffix(err.Error(), "invalid manifest: want one Pod object, not "+what) {
			t.Errorf("Decode(%q) = %v, want ErrNotOneObject, not %s", data, err, what)
		}
	}
	for _, data := range []string{"%YAML 1.1\n", "---\n...\n---\n"} {
		if _, err := Decode("/m/web.yaml", []byte(data)); !errors.Is(err, ErrEmpty) {
			t.Errorf("Decode(%q) = %v, want ErrEmpty", data, err)
		}
	}
}

func TestDecodeTooLarge(t *testing.T) {
	// A valid pod padded with a comment to just the limit, then one byte
	// over.
	pad := func(n int) []byte {
		return []byte(minimalPod + "#" + strings.Repeat("x", n-len(minimalPod)-2) + "\n")
	}
	if data := pad(MaxManifestBytes); len(data) != MaxManifestBytes {
		t.Fatalf("padded to %d", len(data))
	} else if _, err := Decode("/m/web.yaml", data); err != nil {
		t.Errorf("Decode of exactly MaxManifestBytes: %v", err)
	}
	_, err := Decode("/m/web.yaml", pad(MaxManifestBytes+1))
	want := fmt.Sprintf("manifest /m/web.yaml: manifest is %d bytes, over the %d-byte limit", MaxManifestBytes+1, MaxManifestBytes)
	if !errors.Is(err, ErrTooLarge) || err.Error() != want {
		t.Errorf("err = %v, want %q (ErrTooLarge)", err, want)
	}
	// DecodeList: a single pod is bounded alike; a list item too.
	if _, err := DecodeList("u", pad(MaxManifestBytes+1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("DecodeList of a large pod: %v, want ErrTooLarge", err)
	}
	big := `{"metadata": {"name": "big", "annotations": {"a": "` + strings.Repeat("x", MaxManifestBytes) + `"}}}`
	items, err := DecodeList("u", []byte(`{"apiVersion": "v1", "kind": "PodList", "items": [{"metadata": {"name": "small"}}, `+big+`]}`))
	if err != nil || len(items) != 2 || items[0].Err != nil || !errors.Is(items[1].Err, ErrTooLarge) || items[1].Name != "big" {
		t.Fatalf("DecodeList = %+v, %v; want the second item ErrTooLarge", items, err)
	}
	if !strings.HasPrefix(items[1].Err.Error(), "manifest u: items[1]: pod is ") {
		t.Errorf("item error %q does not name the item", items[1].Err)
	}
}

// TestErrorListLinearAndBounded: tens of thousands of errors format in
// linear time (utilerrors' aggregate took seconds: quadratic), to a
// bounded message that says how many were left out.
func TestErrorListLinearAndBounded(t *testing.T) {
	var list field.ErrorList
	for i := range 50_000 {
		list = append(list, field.Invalid(field.NewPath("spec", "containers").Index(0).Child("ports").Index(i).Child("containerPort"), 0, "must be between 1 and 65535, inclusive"))
	}
	list = append(list, list[0]) // a repeat is dropped
	err := aggregateFields(list)
	start := time.Now()
	msg := err.Error()
	if d := time.Since(start); d > time.Second {
		t.Errorf("formatting took %s", d)
	}
	var agg utilerrors.Aggregate
	if !errors.As(err, &agg) || len(agg.Errors()) != 50_000 {
		t.Fatalf("not an Aggregate of 50000 errors: %T", err)
	}
	if !strings.HasPrefix(msg, "[spec.containers[0].ports[0].containerPort: Invalid value: 0: ") ||
		!strings.HasSuffix(msg, ", and 49950 more errors]") || len(msg) > maxShownErrors*(maxErrorBytes+2)+100 {
		t.Errorf("message (%d bytes) = %.300s ... %s", len(msg), msg, msg[max(0, len(msg)-100):])
	}
	var fe *field.Error
	if !errors.As(err, &fe) || fe.Field != "spec.containers[0].ports[0].containerPort" {
		t.Errorf("errors.As(*field.Error) = %v", fe)
	}
	if one := aggregateFields(list[:1]); one.Error() != list[0].Error() {
		t.Errorf("one error: %q, want %q", one, list[0])
	}
	if aggregateFields(nil) != nil {
		t.Error("no errors: want nil")
	}
}
