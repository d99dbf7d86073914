package manifest

import (
	"encoding/json"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"
)

// ListKind is the kind of a document holding objects of several kinds
// (kubectl's "kind: List"), read by DecodeObjects.
const ListKind = "List"

// DecodeObjects parses a body that holds pods, ConfigMaps and Secrets,
// as a manifest URL serves them; path is used only in messages. The body
// is one of:
//
//   - one Pod or a PodList: read as DecodeList, each item a Document of
//     kind Pod whose Item is its path (nil for a single Pod);
//   - a List (kind List, apiVersion v1) whose items are each a Pod, a
//     ConfigMap or a Secret with kind and apiVersion: each item a
//     Document whose Item is items[i];
//   - one ConfigMap or Secret, or several YAML documents each a Pod,
//     ConfigMap or Secret: read as DecodeDocuments (within its
//     MaxManifestBytes bound), strictly.
//
// Decoding is strict: an unknown field is an error naming it. The error
// is a problem with the body as a whole (a *FileError naming path); a
// problem with one object is its Document's Err and spoils no other.
// Documents are returned in order, unvalidated: call SetDefaults and
// ValidateAtWith (with the Document's Item) on each Pod and
// LoadConfigData on each other Document.
func DecodeObjects(path string, data []byte) ([]Document, error) {
	strict := DecodeOptions{Strict: true}
	if !utilyaml.IsJSONBuffer(data) && len(splitYAML(data)) > 1 {
		return DecodeDocuments(path, data, strict)
	}
	if jsonData, n, err := toJSON(data); err == nil && n == 1 && !isNull(jsonData) {
		var tm metav1.TypeMeta
		_ = sigsjson.UnmarshalCaseSensitivePreserveInts(jsonData, &tm) // DecodeList explains a bad one
		switch tm.Kind {
		case ConfigMapKind, SecretKind:
			return DecodeDocuments(path, data, strict)
		case ListKind:
			return decodeObjectList(path, jsonData, tm)
		case "", PodKind, PodListKind: // DecodeList's
		default:
			return nil, &FileError{Path: path, Err: checkTypeMetaOf(tm, objectKinds...)}
		}
	}
	items, err := DecodeList(path, data)
	if err != nil {
		return nil, err
	}
	docs := make([]Document, len(items))
	for i, it := range items {
		docs[i] = Document{Index: i + 1, Kind: PodKind, Namespace: it.Namespace, Name: it.Name, Pod: it.Pod, Item: it.Field, Err: it.Err}
	}
	return docs, nil
}

// objectKinds are the kinds DecodeObjects reads.
var objectKinds = []string{PodKind, PodListKind, ListKind, ConfigMapKind, SecretKind}

// objectListDocument is a List whose items are decoded one by one, so
// that a bad item does not spoil the others.
type objectListDocument struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []json.RawMessage `json:"items"`
}

// decodeObjectList reads a List (see DecodeObjects) of kind tm.Kind.
func decodeObjectList(path string, jsonData []byte, tm metav1.TypeMeta) ([]Document, error) {
	fail := func(err error) ([]Document, error) { return nil, &FileError{Path: path, Err: err} }
	if tm.APIVersion != PodAPIVersion {
		return fail(checkTypeMetaOf(tm, ListKind))
	}
	var list objectListDocument
	strictErrs, err := sigsjson.UnmarshalStrict(jsonData, &list)
	if err != nil {
		return fail(decodeError(jsonData, reflect.TypeFor[objectListDocument](), nil, err))
	}
	if len(strictErrs) > 0 {
		return fail(aggregate(strictErrs))
	}
	docs := make([]Document, len(list.Items))
	items := field.NewPath("items")
	for i, raw := range list.Items {
		d := &docs[i]
		d.Index, d.Item = i+1, items.Index(i)
		if isNull(raw) {
			d.Err = &kindError{msg: "want a " + PodKind + ", " + ConfigMapKind + " or " + SecretKind + ", not null", kind: ErrNotOneObject}
		} else {
			decodeDocument(d, raw, DecodeOptions{Strict: true})
		}
		if d.Err != nil {
			d.Err = d.wrap(path, false, d.Err)
		}
	}
	return docs, nil
}
