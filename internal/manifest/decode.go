package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Manifest kind and apiVersion: a manifest must be a core/v1 Pod.
const (
	PodKind       = "Pod"
	PodAPIVersion = "v1"
)

// MaxManifestBytes bounds the size of one pod's manifest: 1 MiB. A larger
// one is an error (errors.Is(err, ErrTooLarge)) before it is parsed.
//
// Why 1 MiB: no real pod comes near it (the kubeadm control-plane
// manifests, long flag lists included, are under 10 KiB), and a Kubernetes
// cluster could not store one that did (etcd refuses requests over 1.5 MiB
// by default, and the objects shipped with pods, ConfigMaps and Secrets,
// are capped at 1 MiB). Parsing takes several times the input in memory
// (YAML, then JSON, then the pod), so the bound keeps one bad file from
// costing the node much memory or time, and an error about it short.
const MaxManifestBytes = 1 << 20

// Decode parses one static-pod manifest. data is JSON (when its first
// non-space byte is '{') or YAML; path is used only in error messages.
//
// Decoding is strict, as the Kubernetes API server's is: field names are
// case-sensitive, and an unknown or duplicated field is an error naming its
// path (`unknown field "spec.containers[0].imagee"`). A value of the wrong
// type or format is a *ValueError naming its path
// (`spec.containers[0].resources.limits[cpu]: Invalid value: "1x": want a
// quantity ...`). Malformed YAML or JSON is a *SyntaxError naming a line.
// The document must have kind Pod and apiVersion v1 and be at most
// MaxManifestBytes long. One file holds one pod: an empty file (or only
// comments) returns ErrEmpty, and a YAML stream of several documents or a
// document that is not an object is ErrNotOneObject. The pod is returned
// as written: no defaults, no validation.
//
// Every error is a *FileError naming path.
func Decode(path string, data []byte) (*v1.Pod, error) {
	pod, err := decode(data)
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	return pod, nil
}

// tooLarge is the error for a manifest of n bytes over MaxManifestBytes.
func tooLarge(n int) error {
	return &kindError{
		msg:  fmt.Sprintf("manifest is %d bytes, over the %d-byte limit", n, MaxManifestBytes),
		kind: ErrTooLarge,
	}
}

// toJSON returns data as JSON: data itself when it is JSON, else its one
// YAML document converted. n is the number of YAML documents with content
// (1 for JSON); when it is not 1, jsonData is nil and err is nil.
func toJSON(data []byte) (jsonData []byte, n int, err error) {
	if utilyaml.IsJSONBuffer(data) {
		return data, 1, nil
	}
	doc, n, err := yamlDocument(data)
	if err != nil || n != 1 {
		return nil, n, err
	}
	// YAMLToJSONStrict rejects duplicate keys. It reads the first document
	// of its input, which yamlDocument made the one with content.
	if jsonData, err = yaml.YAMLToJSONStrict(doc); err != nil {
		return nil, n, yamlError(err)
	}
	return jsonData, 1, nil
}

// checkObject returns ErrNotOneObject, explained, unless jsonData (valid
// JSON) is an object; want is what it should be ("Pod").
func checkObject(jsonData []byte, want string) error {
	t := bytes.TrimSpace(jsonData)
	if len(t) > 0 && t[0] == '{' {
		return nil
	}
	what := "a scalar"
	switch {
	case len(t) > 0 && t[0] == '[':
		what = "a list"
	case len(t) > 0 && t[0] == '"':
		what = "a string"
	case bytes.Equal(t, []byte("true")) || bytes.Equal(t, []byte("false")):
		what = "a boolean"
	case len(t) > 0 && (t[0] == '-' || t[0] >= '0' && t[0] <= '9'):
		what = "a number"
	}
	return &kindError{msg: fmt.Sprintf("invalid manifest: want one %s object, not %s", want, what), kind: ErrNotOneObject}
}

func decode(data []byte) (*v1.Pod, error) {
	if len(data) > MaxManifestBytes {
		return nil, tooLarge(len(data))
	}
	jsonData, n, err := toJSON(data)
	switch {
	case err != nil:
		return nil, err
	case n == 0:
		return nil, ErrEmpty
	case n > 1:
		return nil, &kindError{msg: fmt.Sprintf("found %d YAML documents: want one Pod per file", n), kind: ErrNotOneObject}
	}
	if isNull(jsonData) {
		return nil, ErrEmpty
	}
	// A syntax error (JSON only: converted YAML is well-formed) is found
	// here, before the root is looked at.
	var tm metav1.TypeMeta
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(jsonData, &tm); err != nil {
		if isSyntax, _ := sigsjson.SyntaxErrorOffset(err); isSyntax || checkObject(jsonData, PodKind) == nil {
			return nil, wantPod(decodeError(jsonData, reflect.TypeFor[metav1.TypeMeta](), nil, err))
		}
	}
	if err := checkObject(jsonData, PodKind); err != nil {
		return nil, err
	}
	if err := checkTypeMeta(tm); err != nil {
		return nil, err
	}

	pod := &v1.Pod{}
	strictErrs, err := sigsjson.UnmarshalStrict(jsonData, pod)
	if err != nil {
		return nil, decodeError(jsonData, reflect.TypeFor[v1.Pod](), nil, err)
	}
	if len(strictErrs) > 0 {
		return nil, aggregate(strictErrs)
	}
	return pod, nil
}

// wantPod puts a syntax error in context; other errors name their field.
func wantPod(err error) error {
	if errIsSyntax(err) {
		return fmt.Errorf("invalid manifest: want one Pod object: %w", err)
	}
	return err
}

// checkTypeMeta requires kind Pod and apiVersion v1.
func checkTypeMeta(tm metav1.TypeMeta) error {
	var errs field.ErrorList
	switch tm.Kind {
	case PodKind:
	case "":
		errs = append(errs, field.Required(field.NewPath("kind"), "want "+PodKind))
	default:
		errs = append(errs, field.NotSupported(field.NewPath("kind"), tm.Kind, []string{PodKind}))
	}
	switch tm.APIVersion {
	case PodAPIVersion:
	case "":
		errs = append(errs, field.Required(field.NewPath("apiVersion"), "want "+PodAPIVersion))
	default:
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), tm.APIVersion, []string{PodAPIVersion}))
	}
	return aggregateFields(errs)
}

// yamlDocument splits a YAML stream into documents, as kubectl does: a
// line starting with "---" (followed by nothing but a comment) separates
// them, and so does a document end marker ("..."), after which YAML starts
// a new document too. n is the number of documents with content (see
// hasContent). When n is 1, doc is data with the other documents and the
// separators before the one with content blanked out (line breaks kept, so
// that the parser's line numbers are data's; the separator just before it
// and any directive such as "%YAML 1.2" are kept, for the parser to judge).
func yamlDocument(data []byte) (doc []byte, n int, err error) {
	// A document's lines, by byte offsets, and the offset of the "---"
	// line that opened it (-1: the stream's start or a "...").
	type span struct{ start, end, sep int }
	var (
		content, cur = span{sep: -1}, span{sep: -1}
		curHas       bool
		off, lineNo  int
	)
	closeDoc := func(end int) {
		cur.end = end
		if curHas {
			n++
			content = cur
		}
		curHas = false
	}
	for line := range bytes.Lines(data) {
		lineNo++
		start := off
		off += len(line)
		switch {
		case bytes.HasPrefix(line, []byte("---")):
			if rest := bytes.TrimSpace(line[3:]); len(rest) > 0 && rest[0] != '#' {
				return nil, 0, &SyntaxError{Format: "YAML", Line: lineNo, Err: fmt.Errorf(
					"invalid YAML: line %d: only a comment may follow a document separator (---), not %q", lineNo, clip(string(rest), 40))}
			}
			closeDoc(start)
			cur = span{start: off, sep: start}
		case isDocumentEnd(line):
			closeDoc(start)
			cur = span{start: off, sep: -1}
		case !curHas && hasContent(line):
			curHas = true
		}
	}
	closeDoc(off)
	if n != 1 {
		return nil, n, nil
	}
	from := content.start
	if content.sep >= 0 {
		from = content.sep
		// Directives belong to the document after the separator.
		for from > 0 {
			prev := bytes.LastIndexByte(data[:from-1], '\n') + 1
			if data[prev] != '%' {
				break
			}
			from = prev
		}
	}
	doc = make([]byte, 0, content.end)
	doc = append(doc, bytes.Repeat([]byte{'\n'}, bytes.Count(data[:from], []byte{'\n'}))...)
	return append(doc, data[from:content.end]...), 1, nil
}

// isDocumentEnd reports whether line is a document end marker: "..."
// followed by the line's end or a blank, then nothing but a comment
// ("...#" and "...:" are plain scalars).
func isDocumentEnd(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("..."))
	if !ok {
		return false
	}
	if len(rest) > 0 && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '\r' && rest[0] != '\n' {
		return false
	}
	rest = bytes.TrimSpace(rest)
	return len(rest) == 0 || rest[0] == '#'
}

// hasContent reports whether a line of a YAML document is neither blank,
// a comment, nor a directive ("%YAML 1.2", which belongs to the document
// after the next "---").
func hasContent(line []byte) bool {
	if len(line) > 0 && line[0] == '%' {
		return false
	}
	t := bytes.TrimSpace(line)
	return len(t) > 0 && t[0] != '#'
}

// yamlError is the *SyntaxError for a YAML parser error (nil for nil),
// its message on one line (the parser lists several problems on separate
// lines) and cut to maxErrorBytes. Its Line is the first line the message
// names ("yaml: line 3: ..."), 0 if none.
func yamlError(err error) error {
	if err == nil {
		return nil
	}
	var parts []string
	for line := range strings.Lines(err.Error()) {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	msg := clip("invalid YAML: "+strings.Join(parts, " "), maxErrorBytes)
	line := 0
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
	}
	return &SyntaxError{Format: "YAML", Line: line, Err: errors.New(msg)}
}

var yamlLineRE = regexp.MustCompile(`\bline (\d+)\b`)
