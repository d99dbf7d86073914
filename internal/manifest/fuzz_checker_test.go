package manifest_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/actorlet/actorlet/internal/manifest"
)

// TestFuzzCheckerFails shows that each check of the fuzz tests fails on a
// result that breaks it: none holds whatever LoadFile or DecodeList do.
func TestFuzzCheckerFails(t *testing.T) {
	const quantity = minimal + "    resources:\n      limits:\n        cpu: 1x\n"
	fileErr := func(err error) error { return &manifest.FileError{Path: fuzzPath, Err: err} }
	errResult := func(err error) loadResult { return loadResult{err: err, msg: err.Error()} }
	loaded := func(data string) loadResult {
		r := load([]byte(data))
		if r.err != nil {
			t.Fatalf("load: %v", r.err)
		}
		return r
	}
	noUID := loaded(minimal)
	noUID.pod.UID = ""
	unsetWarning := loaded(minimal)
	unsetWarning.warnings = []string{"spec.nodeSelector: ignored by actorlet: static pods are not scheduled"}
	huge := field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), "web", "bad")}.ToAggregate()

	tests := []struct {
		name string
		data string
		r    loadResult
		want string // in one of the problems
	}{
		{"not a FileError", minimal, errResult(errors.New("boom")), "not a *manifest.FileError"},
		{"other file", minimal, errResult(&manifest.FileError{Path: "/other.yaml", Err: manifest.ErrEmpty}), "FileError.Path"},
		{"pod and error", "", loadResult{pod: &v1.Pod{}, err: fileErr(manifest.ErrEmpty), msg: fileErr(manifest.ErrEmpty).Error()}, "a pod and an error"},
		{"message too long", minimal, loadResult{err: fileErr(huge), msg: "manifest " + fuzzPath + ": " + strings.Repeat("x", maxMessage)}, "error message of"},
		{"names no field", quantity, errResult(fileErr(fmt.Errorf("invalid manifest: %w", errors.New("quantities must match")))), "names no field"},
		{"value error: wrong path", quantity, errResult(fileErr(&manifest.ValueError{Field: "spec.containers[1].resources.limits[cpu]", Value: `"1x"`, Want: "a quantity"})),
			"which is not in the input"},
		{"value error: not a path", quantity, errResult(fileErr(&manifest.ValueError{Field: "<document>", Want: "a quantity"})), "not a field path"},
		{"strict error: message without its field", minimal, errResult(fileErr(fakeStrict{"metadata.name"})), "does not say its field"},
		{"strict error: not in the input", minimal, errResult(fileErr(fakeStrict{"spec.bogus"})), "which is not in the input"},
		{"validation error: not in the pod", minimal, errResult(fileErr(field.ErrorList{field.Invalid(field.NewPath("spec", "containers").Index(3).Child("image"), "x", "bad")}.ToAggregate())),
			"which is not in the defaulted pod"},
		{"required: parent not in the pod", minimal, errResult(fileErr(field.ErrorList{field.Required(field.NewPath("spec", "nope", "field"), "")}.ToAggregate())),
			"which is not in the defaulted pod"},
		{"ErrEmpty with content", minimal, errResult(fileErr(manifest.ErrEmpty)), "ErrEmpty for a manifest with content"},
		{"ErrTooLarge when small", minimal, errResult(fileErr(fmt.Errorf("big: %w", manifest.ErrTooLarge))), "ErrTooLarge for"},
		{"not an object: an object", minimal, errResult(fileErr(fmt.Errorf("invalid manifest: want one Pod object, not a list: %w", manifest.ErrNotOneObject))), "for an object"},
		{"several documents: one", minimal, errResult(fileErr(fmt.Errorf("found 2 YAML documents: %w", manifest.ErrNotOneObject))), "document markers"},
		{"JSON syntax error: valid JSON", seedPodJSON, errResult(fileErr(&manifest.SyntaxError{Format: "JSON", Line: 1, Column: 1, Err: errors.New("bad")})), "is valid JSON"},
		{"JSON syntax error: position", `{"a":`, errResult(fileErr(&manifest.SyntaxError{Format: "JSON", Line: 9, Column: 1, Err: errors.New("unexpected end")})), "not in the input"},
		{"YAML syntax error: JSON", `{"a":`, errResult(fileErr(&manifest.SyntaxError{Format: "YAML", Err: errors.New("bad")})), "YAML syntax error for JSON input"},
		{"YAML syntax error: position", "a: [\n", errResult(fileErr(&manifest.SyntaxError{Format: "YAML", Line: 7, Err: errors.New("line 7: bad")})), "not in the input"},
		{"no UID", minimal, noUID, "pod without a UID"},
		{"a document dropped", minimal + "...\nspec: {}\n", loaded(minimal), "accepted 2 YAML documents"},
		{"warning for an unset field", minimal, unsetWarning, "does not start with the path of a field that is set"},
		{"neither pod nor error", minimal, loadResult{}, "neither a pod nor an error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probs := checkLoad([]byte(tt.data), tt.r)
			if !strings.Contains(strings.Join(probs, "\n"), tt.want) {
				t.Errorf("problems %q, want one saying %q", probs, tt.want)
			}
		})
	}

	t.Run("list", func(t *testing.T) {
		good := decodeList([]byte(minimal))
		if probs := checkList([]byte(minimal), good); len(probs) != 0 {
			t.Fatalf("a good result has problems: %q", probs)
		}
		lost := good
		lost.items = nil
		renamed := decodeList([]byte(minimal))
		renamed.items[0].Name = "other"
		list := `{"apiVersion": "v1", "kind": "PodList", "items": [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}]}`
		misplaced := decodeList([]byte(list))
		misplaced.items[1].Field = field.NewPath("items").Index(0)
		for _, c := range []struct {
			name string
			data string
			r    listResult
			want string
		}{
			{"Decode accepts, DecodeList loses it", minimal, lost, "Decode accepts the document"},
			{"item name", minimal, renamed, "is named"},
			{"item field", list, misplaced, "has Field items[0], want items[1]"},
		} {
			if probs := checkList([]byte(c.data), c.r); !strings.Contains(strings.Join(probs, "\n"), c.want) {
				t.Errorf("%s: problems %q, want one saying %q", c.name, probs, c.want)
			}
		}
	})

	t.Run("time limit", func(t *testing.T) {
		if _, ok := timed(10*time.Millisecond, func() int { time.Sleep(200 * time.Millisecond); return 0 }); ok {
			t.Error("timed: a 200ms call returned within 10ms")
		}
		if r, ok := timed(time.Second, func() int { return 7 }); !ok || r != 7 {
			t.Errorf("timed = %d, %v", r, ok)
		}
		time.Sleep(250 * time.Millisecond) // the sleeping goroutine ends
	})
}

// fakeStrict is an unknown-field error (sigs.k8s.io/json's FieldError)
// whose message does not name its field.
type fakeStrict struct{ path string }

func (e fakeStrict) Error() string         { return "unknown field" }
func (e fakeStrict) FieldPath() string     { return e.path }
func (e fakeStrict) SetFieldPath(p string) {}
