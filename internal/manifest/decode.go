package manifest

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"
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
	docs := splitYAML(data)
	for _, d := range docs {
		if d.err != nil {
			return nil, len(docs), d.err
		}
	}
	if len(docs) != 1 {
		return nil, len(docs), nil
	}
	jsonData, err = docs[0].toJSON()
	return jsonData, 1, err
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
	pod, _, err := decodeObject(jsonData, DecodeOptions{Strict: true})
	return pod, err
}

// decodeObject decodes one document, JSON that is not null, as a Pod:
// its kind and apiVersion checked, then its fields. With opts.Strict an
// unknown field is an error; otherwise it is a warning naming it, and
// ignored. A duplicated field is an error either way: which of its values
// counts would change what runs.
func decodeObject(jsonData []byte, opts DecodeOptions) (*v1.Pod, []string, error) {
	tm, err := decodeTypeMeta(jsonData, PodKind)
	if err != nil {
		return nil, nil, err
	}
	if err := checkTypeMeta(tm); err != nil {
		return nil, nil, err
	}
	return decodePod(jsonData, opts)
}

// decodeTypeMeta reads the kind and apiVersion of a document (JSON, not
// null) that should be an object of kind want.
func decodeTypeMeta(jsonData []byte, want string) (metav1.TypeMeta, error) {
	// A syntax error (JSON only: converted YAML is well-formed) is found
	// here, before the root is looked at.
	var tm metav1.TypeMeta
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(jsonData, &tm); err != nil {
		if isSyntax, _ := sigsjson.SyntaxErrorOffset(err); isSyntax || checkObject(jsonData, want) == nil {
			err := decodeError(jsonData, reflect.TypeFor[metav1.TypeMeta](), nil, err)
			if errIsSyntax(err) {
				err = fmt.Errorf("invalid manifest: want one %s object: %w", want, err)
			}
			return tm, err
		}
	}
	return tm, checkObject(jsonData, want)
}

// decodePod decodes a Pod's fields (see decodeObject).
func decodePod(jsonData []byte, opts DecodeOptions) (*v1.Pod, []string, error) {
	pod := &v1.Pod{}
	warnings, err := decodeInto(jsonData, pod, opts)
	if err != nil {
		return nil, nil, err
	}
	return pod, warnings, nil
}

// decodeInto decodes an object's fields into obj, a pointer to a zero
// value (see decodeObject).
func decodeInto[T any](jsonData []byte, obj *T, opts DecodeOptions) ([]string, error) {
	if opts.Strict {
		strictErrs, err := sigsjson.UnmarshalStrict(jsonData, obj)
		if err != nil {
			return nil, decodeError(jsonData, reflect.TypeFor[T](), nil, err)
		}
		if len(strictErrs) > 0 {
			return nil, aggregate(strictErrs)
		}
		return nil, nil
	}
	dupErrs, err := sigsjson.UnmarshalStrict(jsonData, obj, sigsjson.DisallowDuplicateFields)
	if err != nil {
		return nil, decodeError(jsonData, reflect.TypeFor[T](), nil, err)
	}
	if len(dupErrs) > 0 {
		return nil, aggregate(dupErrs)
	}
	unknown, _ := sigsjson.UnmarshalStrict(jsonData, new(T), sigsjson.DisallowUnknownFields) // decoded once already
	var warnings []string
	for _, e := range unknown {
		warnings = append(warnings, e.Error()+": ignored (--strict-manifests refuses it)")
	}
	return warnings, nil
}

// checkTypeMeta requires kind Pod and apiVersion v1.
func checkTypeMeta(tm metav1.TypeMeta) error {
	return checkTypeMetaOf(tm, PodKind)
}

// checkTypeMetaOf requires one of kinds and apiVersion v1 (the version
// of Pod, ConfigMap and Secret).
func checkTypeMetaOf(tm metav1.TypeMeta, kinds ...string) error {
	var errs field.ErrorList
	switch {
	case slices.Contains(kinds, tm.Kind):
	case tm.Kind == "":
		errs = append(errs, field.Required(field.NewPath("kind"), "want "+strings.Join(kinds, ", ")))
	default:
		errs = append(errs, field.NotSupported(field.NewPath("kind"), tm.Kind, kinds))
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
