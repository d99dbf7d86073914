package manifest

import (
	"fmt"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// MaxDocuments bounds the YAML documents (with content) of one manifest
// file: a file with more is one error, none of its documents read. No
// hand-written file comes near it; the bound keeps one bad file from
// making thousands of problems.
const MaxDocuments = 256

// DecodeOptions say how DecodeDocuments decodes.
type DecodeOptions struct {
	// Strict makes an unknown field an error naming it, as Decode (and
	// the API server) does: --strict-manifests. By default an unknown
	// field is a warning naming it and is ignored, as the kubelet ignores
	// it (a newer Kubernetes' field in an older actorlet, or GCE's
	// metadata.component).
	Strict bool
}

// LoadOptions say how LoadFileDocuments reads a file.
type LoadOptions struct {
	// Validation is what the operator allows (privileged, hostPath).
	Validation ValidationOptions
	// Strict: see DecodeOptions.
	Strict bool
}

// Document is one YAML document of a manifest file (a JSON file is one
// document).
type Document struct {
	// Index is the document's number (1-based) among the file's
	// documents with content; Line is the file's line (1-based) where its
	// content starts.
	Index, Line int
	// Namespace and Name are metadata.namespace and metadata.name, read
	// even when Err is set (both "" when they cannot be read), so that a
	// source can keep the document's last good pod. LoadFileDocuments
	// makes an empty Namespace "default" when Name is set.
	Namespace, Name string
	// Kind is the document's kind as written ("" when it cannot be read).
	Kind string
	// Pod, ConfigMap or Secret is the document's object, by its kind;
	// all are nil when Err is set. A Secret's stringData is merged into
	// its data by LoadFileDocuments (SetSecretDefaults).
	Pod       *v1.Pod
	ConfigMap *v1.ConfigMap
	Secret    *v1.Secret
	// Warnings name the fields ignored: unknown fields (unless Strict),
	// and, from LoadFileDocuments, the fields Validate warns about.
	Warnings []string
	// Item is the document's path in a List (items[i], see
	// DecodeObjects), which its errors and warnings name instead of its
	// number and line; nil otherwise.
	Item *field.Path
	// Err is why the document is refused: a *FileError naming the file
	// and, in a file of several documents, wrapping a *DocumentError
	// naming the document, then the field or line.
	Err error
}

// DocumentError is an error about one document of a file that holds
// several. Its message is "document <index> (line <line>): <cause>".
type DocumentError struct {
	Index, Line int
	Err         error
}

func (e *DocumentError) Error() string {
	return fmt.Sprintf("document %d (line %d): %v", e.Index, e.Line, e.Err)
}

// Unwrap returns the cause.
func (e *DocumentError) Unwrap() error { return e.Err }

// DecodeDocuments parses a manifest file that holds one or several
// documents, YAML separated by "---" (or "..." lines), or one JSON value;
// path is used only in messages. Each document must be a Pod (kind Pod,
// apiVersion v1) and is decoded as Decode does, but for unknown fields
// (see DecodeOptions). An error in one document is that document's Err;
// the others are unaffected: documents are split on their separator lines
// before they are parsed, so even a YAML syntax error spoils only its own
// document. The file as a whole fails (an error, a *FileError naming
// path, and no documents) only when it is over MaxManifestBytes, holds no
// document (ErrEmpty: empty, comments only, or only null documents),
// holds more than MaxDocuments, or is JSON that does not parse.
//
// In a file of one document, errors and warnings read as Decode's; in a
// file of several, each names its document: "manifest /m/all.yaml:
// document 2 (line 14): spec.containers[0].image: Required value".
// Documents are returned in file order, unvalidated.
func DecodeDocuments(path string, data []byte, opts DecodeOptions) ([]Document, error) {
	docs, err := decodeDocuments(data, opts)
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	multi := len(docs) > 1
	for i := range docs {
		d := &docs[i]
		for j, w := range d.Warnings {
			d.Warnings[j] = d.label(multi) + w
		}
		if d.Err != nil {
			d.Err = d.wrap(path, multi, d.Err)
		}
	}
	return docs, nil
}

// Refuse drops d's object and makes err, about it, its Err, naming path
// and, in a body of several documents (multi), d (see Label).
func (d *Document) Refuse(path string, multi bool, err error) {
	d.Pod, d.ConfigMap, d.Secret, d.Err = nil, nil, nil, d.wrap(path, multi, err)
}

// Label names d in a body of several documents (multi) or in a List,
// followed by ": ", e.g. "document 2 (line 14): "; "" otherwise.
func (d *Document) Label(multi bool) string { return d.label(multi) }

// label prefixes a warning about d in a file of several documents.
func (d *Document) label(multi bool) string {
	if d.Item != nil {
		return d.Item.String() + ": "
	}
	if !multi {
		return ""
	}
	return fmt.Sprintf("document %d (line %d): ", d.Index, d.Line)
}

// wrap makes err an error about d in the file at path.
func (d *Document) wrap(path string, multi bool, err error) error {
	if d.Item != nil {
		return &FileError{Path: path, Err: itemError(d.Item, err)}
	}
	if multi {
		err = &DocumentError{Index: d.Index, Line: d.Line, Err: err}
	}
	return &FileError{Path: path, Err: err}
}

func decodeDocuments(data []byte, opts DecodeOptions) ([]Document, error) {
	if len(data) > MaxManifestBytes {
		return nil, tooLarge(len(data))
	}
	if utilyaml.IsJSONBuffer(data) {
		if isNull(data) {
			return nil, ErrEmpty
		}
		d := Document{Index: 1, Line: 1}
		decodeDocument(&d, data, opts)
		if errIsSyntax(d.Err) {
			return nil, d.Err // nothing to name the document by
		}
		return []Document{d}, nil
	}
	ydocs := splitYAML(data)
	if len(ydocs) > MaxDocuments {
		return nil, &kindError{msg: fmt.Sprintf("found %d YAML documents, over the limit of %d per file", len(ydocs), MaxDocuments), kind: ErrNotOneObject}
	}
	docs := make([]Document, 0, len(ydocs))
	for i, yd := range ydocs {
		d := Document{Index: i + 1, Line: yd.line}
		jsonData, err := []byte(nil), yd.err
		if err == nil {
			jsonData, err = yd.toJSON()
		}
		switch {
		case err != nil && secretTextRE.Match(yd.data):
			d.Err = hideQuoted(err)
		case err != nil:
			d.Err = err
		case isNull(jsonData):
			continue // "~" or "null": an empty document
		default:
			decodeDocument(&d, jsonData, opts)
		}
		docs = append(docs, d)
	}
	if len(docs) == 0 {
		return nil, ErrEmpty
	}
	return docs, nil
}

// decodeDocument decodes one document, JSON that is not null, into d: a
// Pod, ConfigMap or Secret.
func decodeDocument(d *Document, jsonData []byte, opts DecodeOptions) {
	d.Namespace, d.Name = peekName(jsonData)
	tm, err := decodeTypeMeta(jsonData, documentKinds[0]+", "+documentKinds[1]+" or "+documentKinds[2])
	d.Kind = tm.Kind
	if err == nil {
		err = checkTypeMetaOf(tm, documentKinds...)
	}
	if err != nil {
		if tm.Kind == SecretKind {
			err = redactValues(err)
		}
		d.Err = err
		return
	}
	switch tm.Kind {
	case ConfigMapKind:
		d.ConfigMap, d.Warnings, d.Err = decodeConfigMap(jsonData, opts)
	case SecretKind:
		d.Secret, d.Warnings, d.Err = decodeSecret(jsonData, opts)
	default:
		d.Pod, d.Warnings, d.Err = decodePod(jsonData, opts)
	}
}

// LoadFileDocuments is LoadFile for a file of one or several documents
// (see DecodeDocuments), decoded with opts.Strict and validated with
// opts.Validation: each Pod is defaulted, validated, and given its UID
// (StaticPodUID of the file's absolute path: a pod keeps its UID when
// its file gains or loses other documents) and LoadFile's annotations. A
// document whose pod is invalid gets Err, naming the file, the document
// (in a file of several) and the fields, and no Pod. The error is
// DecodeDocuments' (a problem with the file as a whole).
func LoadFileDocuments(opts LoadOptions, nodeName, path string, data []byte) ([]Document, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &FileError{Path: path, Err: fmt.Errorf("absolute path: %w", err)}
	}
	docs, err := DecodeDocuments(abs, data, DecodeOptions{Strict: opts.Strict})
	if err != nil {
		return nil, err
	}
	multi := len(docs) > 1
	for i := range docs {
		d := &docs[i]
		if d.Namespace == "" && d.Name != "" {
			d.Namespace = DefaultNamespace
		}
		if d.LoadConfigData(abs, multi, AnnotationSourceFile, abs) || d.Pod == nil {
			continue
		}
		pod := d.Pod
		SetDefaults(pod)
		warnings, err := ValidateWith(pod, opts.Validation)
		for _, w := range warnings {
			d.Warnings = append(d.Warnings, d.label(multi)+w)
		}
		if err != nil {
			d.Pod, d.Err = nil, d.wrap(abs, multi, err)
			continue
		}
		pod.UID = StaticPodUID(nodeName, abs, pod)
		if pod.Annotations == nil {
			pod.Annotations = make(map[string]string, 3)
		}
		pod.Annotations[AnnotationConfigSource] = ConfigSourceFile
		pod.Annotations[AnnotationConfigHash] = string(pod.UID)
		pod.Annotations[AnnotationSourceFile] = abs
	}
	return docs, nil
}

// LoadConfigData defaults and validates d's ConfigMap or Secret, if it
// holds one, and records where it came from: the annotation (e.g.
// AnnotationSourceFile) set to from. An invalid one is dropped and d gets
// Err, naming path, the document (when multi) and the fields, never a
// Secret's value. It reports whether d held a ConfigMap or Secret. Every
// source reads ConfigMaps and Secrets through it.
func (d *Document) LoadConfigData(path string, multi bool, annotation, from string) bool {
	var meta *metav1.ObjectMeta
	var err error
	switch {
	case d.ConfigMap != nil:
		SetConfigMapDefaults(d.ConfigMap)
		meta, err = &d.ConfigMap.ObjectMeta, ValidateConfigMap(d.ConfigMap)
	case d.Secret != nil:
		SetSecretDefaults(d.Secret)
		meta, err = &d.Secret.ObjectMeta, ValidateSecret(d.Secret)
	default:
		return false
	}
	d.Namespace = meta.Namespace
	if err != nil {
		d.ConfigMap, d.Secret, d.Err = nil, nil, d.wrap(path, multi, err)
		return true
	}
	if meta.Annotations == nil {
		meta.Annotations = make(map[string]string, 1)
	}
	meta.Annotations[annotation] = from
	return true
}
