package manifest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
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

// Decode parses one static-pod manifest. data is JSON (when its first
// non-space byte is '{') or YAML; path is used only in error messages.
//
// Decoding is strict, as the Kubernetes API server's is: field names are
// case-sensitive, and an unknown or duplicated field is an error naming its
// path (`unknown field "spec.containers[0].imagee"`). The document must have
// kind Pod and apiVersion v1. One file holds one pod: an empty file (or only
// comments) returns ErrEmpty, and a YAML stream of several documents is an
// error. The pod is returned as written: no defaults, no validation.
//
// Every error is a *FileError naming path.
func Decode(path string, data []byte) (*v1.Pod, error) {
	pod, err := decode(data)
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	return pod, nil
}

func decode(data []byte) (*v1.Pod, error) {
	jsonData := data
	if !utilyaml.IsJSONBuffer(data) {
		n, err := countYAMLDocuments(data)
		if err != nil {
			return nil, yamlError(err)
		}
		switch {
		case n == 0:
			return nil, ErrEmpty
		case n > 1:
			return nil, fmt.Errorf("found %d YAML documents: want one Pod per file", n)
		}
		// YAMLToJSONStrict rejects duplicate keys; it reads the first
		// (and, as checked above, only) document.
		if jsonData, err = yaml.YAMLToJSONStrict(data); err != nil {
			return nil, yamlError(err)
		}
	}
	if t := bytes.TrimSpace(jsonData); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, ErrEmpty
	}

	var tm metav1.TypeMeta
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(jsonData, &tm); err != nil {
		return nil, fmt.Errorf("invalid manifest: want one Pod object: %w", err)
	}
	if err := checkTypeMeta(tm); err != nil {
		return nil, err
	}

	pod := &v1.Pod{}
	strictErrs, err := sigsjson.UnmarshalStrict(jsonData, pod)
	if err != nil {
		return nil, fmt.Errorf("invalid manifest: %w", err)
	}
	if len(strictErrs) > 0 {
		return nil, utilerrors.NewAggregate(strictErrs)
	}
	return pod, nil
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
	return errs.ToAggregate()
}

// countYAMLDocuments counts the documents of a YAML stream that hold
// something other than blank lines and comments.
func countYAMLDocuments(data []byte) (int, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	n := 0
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
		if hasContent(doc) {
			n++
		}
	}
}

// hasContent reports whether a YAML document has a line that is neither
// blank, a comment, nor a document end marker ("...").
func hasContent(doc []byte) bool {
	for line := range bytes.Lines(doc) {
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == '#' || bytes.Equal(t, []byte("...")) {
			continue
		}
		return true
	}
	return false
}

// yamlError puts a YAML parser error on one line (the parser lists
// several problems on separate lines).
func yamlError(err error) error {
	var parts []string
	for line := range strings.Lines(err.Error()) {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	return fmt.Errorf("invalid YAML: %s", strings.Join(parts, " "))
}
