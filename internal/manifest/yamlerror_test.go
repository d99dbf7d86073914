package manifest

import (
	"errors"
	"strings"
	"testing"
)

// TestYAMLErrorsNameALine: every error from YAML itself names the line
// (of the file, also in a later document) and never shows a Go type. The
// inputs are real mistakes: unfilled Helm/Go templates, a tab, a stray
// anchor, a bad explicit tag, a map as a key, invalid UTF-8.
func TestYAMLErrorsNameALine(t *testing.T) {
	const head = "apiVersion: v1\nkind: Pod\nmetadata:\n" // lines 1-3
	tests := []struct {
		name, data string
		line       int
		want       string // substring of the message
	}{
		{"unfilled template value", head + "  name: {{ .Values.name }}\n", 4,
			"invalid YAML: yaml: line 4: a map key must be a string, not a map or a list (an unfilled template, such as {{ .Name }}?)"},
		{"unfilled template in a list", minimalPod + "    args: [{{ .Values.x }}]\n", 9, "line 9: a map key must be a string"},
		{"unfilled template key", head + "  name: web\n  {{ .extra }}: 1\n", 5, "line 5: a map key must be a string"},
		{"template with spaces stripped", head + "  labels:\n    app: {{name}}\n", 5, "line 5: a map key must be a string"},
		{"flow list as key", head + "  [a, b]: 1\n", 4, "line 4: a map key must be a string"},
		{"complex key", head + "  ? {a: 1}\n  : x\n", 4, "line 4: a map key must be a string"},
		{"unknown anchor", head + "  name: web\n  labels: *common\n", 5, "invalid YAML: yaml: line 5: unknown anchor 'common' referenced"},
		{"bad int tag", head + "  name: web\nspec:\n  terminationGracePeriodSeconds: !!int soon\n", 6, "line 6: cannot decode !!str `soon` as a !!int"},
		{"bad base64", head + "  name: !!binary not*base64\n", 4, "line 4: !!binary value contains invalid base64 data"},
		{"invalid utf-8", head + "  name: web\n  labels:\n    app: caf\xe9\n", 6, "line 6: incomplete UTF-8 octet sequence"},
		{"invalid utf-8 lead byte", head + "  name: web\n  labels:\n    app: \xff\n", 6, "line 6: invalid leading UTF-8 octet"},
		{"tab", head + "\tname: web\n", 4, "line 4: found character that cannot start any token"},
		{"bad indentation", head + "  name: web\n labels: {}\n", 4, "line 4: did not find expected key"},
		{"unclosed quote", head + "  name: \"web\n", 5, "line 5: found unexpected end of stream"},
		{"in the second document", podDoc("a") + "---\n" + head + "  name: {{ .Name }}\n", 13, "line 13: a map key must be a string"},
		{"anchor in the second document", podDoc("a") + "---\n" + head + "  name: web\n  labels: *x\n", 14, "line 14: unknown anchor 'x'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := DecodeDocuments("/m/web.yaml", []byte(tt.data), DecodeOptions{})
			if err == nil {
				for _, d := range docs {
					if d.Err != nil {
						err = d.Err
					}
				}
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v (%T), want a *SyntaxError", err, err)
			}
			if se.Line != tt.line || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q (Line %d), want %q at line %d", err, se.Line, tt.want, tt.line)
			}
			for _, goType := range []string{"interface {}", "map[", "[]interface"} {
				if strings.Contains(err.Error(), goType) {
					t.Errorf("err = %q shows a Go type (%s)", err, goType)
				}
			}
			if strings.Count(tt.data, "---") == 0 {
				// One document: Decode says the same.
				if _, derr := Decode("/m/web.yaml", []byte(tt.data)); derr == nil || derr.Error() != err.Error() {
					t.Errorf("Decode = %v, want %v", derr, err)
				}
			}
		})
	}
}
