package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
)

// PodListKind is the kind of a document that holds several pods, read by
// DecodeList.
const PodListKind = "PodList"

// ListItem is one pod of a document read by DecodeList.
type ListItem struct {
	// Field is the item's path in the document, items[i] in a PodList. It
	// is nil when the document is a single Pod.
	Field *field.Path
	// Namespace and Name are the item's metadata.namespace and
	// metadata.name as written (Namespace is "" when unset: SetDefaults
	// makes it "default"). They are read even when Err is set, so that a
	// source can keep the item's last good pod; both are "" when the
	// item's metadata cannot be read.
	Namespace, Name string
	// Pod is the item as written: no defaults, no validation. Its kind and
	// apiVersion are Pod and v1 even when a PodList item leaves them out.
	// It is nil when Err is set.
	Pod *v1.Pod
	// Err is why the item could not be decoded, a *FileError naming the
	// document's path and the field under Field, e.g.
	//
	//	manifest https://example.com/pods: unknown field "items[2].spec.containers[0].imagee"
	Err error
}

// DecodeList parses a document that holds one Pod or a PodList (kind
// PodList, apiVersion v1, the pods under items), as JSON (when its first
// non-space byte is '{') or YAML; path is used only in error messages.
//
// Decoding is as strict as Decode's. A problem with the document as a
// whole is DecodeList's error, a *FileError naming path, and no items: it
// is not JSON or YAML (*SyntaxError), is empty (errors.Is(err, ErrEmpty)),
// holds several YAML documents or is not an object (ErrNotOneObject), has
// another kind or apiVersion, a duplicated key in YAML, an unknown or
// duplicated field or a bad value (*ValueError) outside the items, or is a
// single Pod over MaxManifestBytes (ErrTooLarge; the size of a PodList is
// left to the caller). An empty PodList is no items and no error.
//
// A problem with one pod is that item's Err; the other items are
// unaffected. Each PodList item must be an object whose kind and
// apiVersion, if set, are Pod and v1, at most MaxManifestBytes of JSON;
// unknown and duplicated fields and bad values are named with the item's
// path, e.g. `unknown field "items[2].spec.containers[0].imagee"`. A
// single Pod is one item whose Field is nil, so its errors name fields as
// Decode's do.
//
// Items are returned in document order, unvalidated: call SetDefaults and
// ValidateAt (with the item's Field) on each Pod.
func DecodeList(path string, data []byte) ([]ListItem, error) {
	items, err := decodeList(data)
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	for i := range items {
		if items[i].Err != nil {
			items[i].Err = &FileError{Path: path, Err: items[i].Err}
		}
	}
	return items, nil
}

// podListDocument is a PodList whose items are decoded one by one, so that
// a bad item does not spoil the others.
type podListDocument struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []json.RawMessage `json:"items"`
}

func decodeList(data []byte) ([]ListItem, error) {
	jsonData, n, err := toJSON(data)
	switch {
	case err != nil:
		return nil, err
	case n == 0:
		return nil, emptyListError()
	case n > 1:
		return nil, &kindError{msg: fmt.Sprintf("found %d YAML documents: want one %s or %s", n, PodKind, PodListKind), kind: ErrNotOneObject}
	}
	if isNull(jsonData) {
		return nil, emptyListError()
	}

	want := PodKind + " or " + PodListKind
	var tm metav1.TypeMeta
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(jsonData, &tm); err != nil {
		if isSyntax, _ := sigsjson.SyntaxErrorOffset(err); isSyntax || checkObject(jsonData, want) == nil {
			err = decodeError(jsonData, reflect.TypeFor[metav1.TypeMeta](), nil, err)
			if errIsSyntax(err) {
				err = fmt.Errorf("invalid manifest: want one %s object: %w", want, err)
			}
			return nil, err
		}
	}
	if err := checkObject(jsonData, want); err != nil {
		return nil, err
	}
	if err := checkListTypeMeta(tm); err != nil {
		return nil, err
	}
	if tm.Kind == PodKind {
		// One pod: as long as Decode allows.
		if len(data) > MaxManifestBytes {
			return nil, tooLarge(len(data))
		}
		return []ListItem{decodeItem(jsonData, nil)}, nil
	}

	var doc podListDocument
	strictErrs, err := sigsjson.UnmarshalStrict(jsonData, &doc)
	if err != nil {
		return nil, decodeError(jsonData, reflect.TypeFor[podListDocument](), nil, err)
	}
	if len(strictErrs) > 0 {
		return nil, aggregate(strictErrs)
	}
	items := make([]ListItem, len(doc.Items))
	itemsPath := field.NewPath("items")
	for i, raw := range doc.Items {
		items[i] = decodeItem(raw, itemsPath.Index(i))
	}
	return items, nil
}

// emptyListError is ErrEmpty, saying that a PodList would do as well.
func emptyListError() error {
	return fmt.Errorf("%w or %s", ErrEmpty, PodListKind)
}

// checkListTypeMeta requires kind Pod or PodList and apiVersion v1.
func checkListTypeMeta(tm metav1.TypeMeta) error {
	var errs field.ErrorList
	kinds := []string{PodKind, PodListKind}
	switch tm.Kind {
	case PodKind, PodListKind:
	case "":
		errs = append(errs, field.Required(field.NewPath("kind"), "want "+PodKind+" or "+PodListKind))
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
	return errs.ToAggregate()
}

// decodeItem decodes one pod, a PodList item at p or (p == nil) the whole
// document. Its Err is not yet wrapped in a *FileError.
func decodeItem(data []byte, p *field.Path) ListItem {
	item := ListItem{Field: p}
	item.Namespace, item.Name = peekName(data)
	if isNull(data) {
		item.Err = field.Required(p, "want a "+PodKind)
		return item
	}
	if p != nil && len(data) > MaxManifestBytes {
		item.Err = &kindError{
			msg:  fmt.Sprintf("%s: pod is %d bytes of JSON, over the %d-byte limit", p, len(data), MaxManifestBytes),
			kind: ErrTooLarge,
		}
		return item
	}
	if err := checkObject(data, PodKind); err != nil {
		item.Err = itemError(p, err)
		return item
	}
	var tm metav1.TypeMeta
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &tm); err != nil {
		item.Err = decodeError(data, reflect.TypeFor[metav1.TypeMeta](), p, err)
		return item
	}
	// A single Pod's kind and apiVersion were checked with the document's.
	if p != nil {
		var errs field.ErrorList
		if tm.Kind != "" && tm.Kind != PodKind {
			errs = append(errs, field.NotSupported(p.Child("kind"), tm.Kind, []string{PodKind}))
		}
		if tm.APIVersion != "" && tm.APIVersion != PodAPIVersion {
			errs = append(errs, field.NotSupported(p.Child("apiVersion"), tm.APIVersion, []string{PodAPIVersion}))
		}
		if len(errs) > 0 {
			item.Err = aggregateFields(errs)
			return item
		}
	}

	pod := &v1.Pod{}
	strictErrs, err := sigsjson.UnmarshalStrict(data, pod)
	if err != nil {
		item.Err = decodeError(data, reflect.TypeFor[v1.Pod](), p, err)
		return item
	}
	if len(strictErrs) > 0 {
		if p != nil {
			for _, e := range strictErrs {
				var fe sigsjson.FieldError
				if errors.As(e, &fe) {
					fe.SetFieldPath(p.String() + "." + fe.FieldPath())
				}
			}
		}
		item.Err = aggregate(strictErrs)
		return item
	}
	pod.Kind, pod.APIVersion = PodKind, PodAPIVersion
	item.Pod = pod
	return item
}

// itemError prefixes err with the item's path, if it has one.
func itemError(p *field.Path, err error) error {
	if p == nil {
		return err
	}
	return fmt.Errorf("%s: %w", p, err)
}

// peekName reads metadata.namespace and metadata.name leniently (other
// fields, known or not, are skipped). It returns "" for both when they
// cannot be read.
func peekName(data []byte) (namespace, name string) {
	var obj struct {
		Metadata struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"metadata"`
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &obj); err != nil {
		return "", ""
	}
	return obj.Metadata.Namespace, obj.Metadata.Name
}

func isNull(data []byte) bool {
	t := bytes.TrimSpace(data)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// ValidateAt is Validate for a pod found at path p of a document (e.g. a
// PodList item, see ListItem.Field): every error's field and every warning
// is prefixed with p, e.g. "items[2].spec.containers[0].image: Required
// value". With p nil it is Validate.
func ValidateAt(pod *v1.Pod, p *field.Path) (warnings []string, err error) {
	return ValidateAtWith(pod, p, ValidationOptions{})
}

// ValidateAtWith is ValidateAt validating with opts.
func ValidateAtWith(pod *v1.Pod, p *field.Path, opts ValidationOptions) (warnings []string, err error) {
	warnings, err = ValidateWith(pod, opts)
	if p == nil {
		return warnings, err
	}
	prefix := p.String() + "."
	for i, w := range warnings {
		warnings[i] = prefix + w
	}
	var agg utilerrors.Aggregate
	if err == nil || !errors.As(err, &agg) {
		return warnings, err
	}
	errs := make([]error, 0, len(agg.Errors()))
	for _, e := range agg.Errors() {
		var fe *field.Error
		if errors.As(e, &fe) {
			c := *fe
			c.Field = prefix + c.Field
			e = &c
		}
		errs = append(errs, e)
	}
	return warnings, aggregate(errs)
}
