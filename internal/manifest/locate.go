package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
)

// This file turns a failed JSON decode into an error naming the field.
//
// encoding/json (and sigs.k8s.io/json, its fork) stops at the first value
// it cannot decode, and says where only for a plain type mismatch, and
// then without list indices ("Pod.spec.containers.ports"). Errors from a
// type's own UnmarshalJSON — resource.Quantity ("cpu: 1x"), metav1.Time,
// intstr.IntOrString — name no field at all. So when decoding fails,
// decodeError decodes the document again, one level at a time along the
// Go type: it splits each object or list into its members, decodes each
// member into its field's type, and goes down into the first that fails,
// until it reaches a value none of whose members fails. That value is the
// culprit, named by its full path (spec.containers[0].resources.limits[cpu]).
//
// The search runs only for a manifest that fails. Each level costs at
// most one decode of the document (its members, one by one), and the Go
// type bounds the depth (a value deeper than its type is not searched):
// linear time.

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// decodeError turns err, from decoding data into a value of type t, into
// the error to report: a *SyntaxError for malformed JSON (data is then
// the manifest as the user wrote it, JSON), else a *ValueError naming the
// value that fails (p is data's own path, nil at the document's root).
func decodeError(data []byte, t reflect.Type, p *field.Path, err error) error {
	if isSyntax, offset := sigsjson.SyntaxErrorOffset(err); isSyntax {
		// Offset is just after the offending byte, or at the end of data
		// when it ends too soon.
		if offset > 0 && !strings.Contains(err.Error(), "unexpected end") {
			offset--
		}
		line, col := position(data, offset)
		return &SyntaxError{Format: "JSON", Line: line, Column: col, Err: err}
	}
	return locate(data, t, p, err)
}

// locate returns the innermost value of data (of type t, at path p, which
// fails to decode with err) that fails to decode: data itself when none
// of its members does.
func locate(data []byte, t reflect.Type, p *field.Path, err error) *ValueError {
	for {
		childData, childType, childPath, childErr := failingMember(data, t, p)
		if childData == nil {
			return valueError(data, t, p, err)
		}
		data, t, p, err = childData, childType, childPath, childErr
	}
}

// failingMember returns the first member of data (a value of type t at
// p) that fails to decode into its own type, with that type, its path and
// its error; nil when there is none or data is not an object or list that
// t decodes member by member.
func failingMember(data []byte, t reflect.Type, p *field.Path) ([]byte, reflect.Type, *field.Path, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil, nil, nil, nil // decoded whole by its own method
	}
	var check func(key string, value []byte) (reflect.Type, *field.Path, bool)
	switch t.Kind() {
	case reflect.Struct:
		fields := jsonFieldTypes(t)
		check = func(key string, _ []byte) (reflect.Type, *field.Path, bool) {
			ft, ok := fields[key]
			return ft, childPath(p, key), ok // unknown fields are left to strict decoding
		}
	case reflect.Map:
		check = func(key string, _ []byte) (reflect.Type, *field.Path, bool) {
			return t.Elem(), keyPath(p, key), true
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, nil, nil, nil // []byte: one base64 string
		}
		items, ok := listItems(data)
		if !ok {
			return nil, nil, nil, nil
		}
		for i, item := range items {
			if err := decodeAs(item, t.Elem()); err != nil {
				return item, t.Elem(), indexPath(p, i), err
			}
		}
		return nil, nil, nil, nil
	default:
		return nil, nil, nil, nil
	}
	members, ok := objectMembers(data)
	if !ok {
		return nil, nil, nil, nil
	}
	for _, m := range members {
		mt, mp, ok := check(m.key, m.value)
		if !ok {
			continue
		}
		if err := decodeAs(m.value, mt); err != nil {
			return m.value, mt, mp, err
		}
	}
	return nil, nil, nil, nil
}

// decodeAs decodes data into a new value of type t as Decode does (case
// sensitive, without the strict checks, which never fail a decode).
func decodeAs(data []byte, t reflect.Type) error {
	return sigsjson.UnmarshalCaseSensitivePreserveInts(data, reflect.New(t).Interface())
}

// valueError is the error for data, a value of type t at p that fails to
// decode with err.
func valueError(data []byte, t reflect.Type, p *field.Path, err error) *ValueError {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return &ValueError{
		Field:  pathString(p),
		Value:  clip(string(compact(data)), maxValueBytes),
		Want:   describeType(t),
		Err:    err,
		custom: reflect.PointerTo(t).Implements(unmarshalerType),
	}
}

// describeType says what JSON a value of type t is.
func describeType(t reflect.Type) string {
	switch t {
	case reflect.TypeFor[resource.Quantity]():
		return "a quantity (e.g. 500m, 64Mi)"
	case reflect.TypeFor[metav1.Time](), reflect.TypeFor[metav1.MicroTime]():
		return "an RFC 3339 time (e.g. 2006-01-02T15:04:05Z)"
	case reflect.TypeFor[intstr.IntOrString]():
		return "an integer or a string"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean (true or false)"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer (" + t.Kind().String() + ")"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "a list"
	}
	return "a " + t.String()
}

// jsonFieldTypes maps the JSON names of t's fields (those of inlined embedded
// structs included, as encoding/json sees them) to their types. A field
// of t hides one of the same name in an embedded struct.
func jsonFieldTypes(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	var embedded []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				embedded = append(embedded, ft)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	for _, et := range embedded {
		for name, ft := range jsonFieldTypes(et) {
			if _, hidden := out[name]; !hidden {
				out[name] = ft
			}
		}
	}
	return out
}

type member struct {
	key   string
	value []byte
}

// objectMembers splits a JSON object into its members, in document order
// (duplicated keys included); ok is false when data is not an object.
func objectMembers(data []byte) (members []member, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, false
		}
		members = append(members, member{key, value})
	}
	return members, true
}

// listItems splits a JSON list into its items; ok is false when data is
// not a list.
func listItems(data []byte) (items []json.RawMessage, ok bool) {
	if err := json.Unmarshal(data, &items); err != nil || items == nil {
		return nil, false
	}
	return items, true
}

// compact is data without insignificant white space (data itself if that
// fails).
func compact(data []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		return data
	}
	return b.Bytes()
}

// position returns the 1-based line and column (in bytes) of offset in
// data; an offset at the end points just after the last byte.
func position(data []byte, offset int64) (line, col int) {
	if offset < 0 {
		offset = 0
	}
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line = 1 + bytes.Count(before, []byte{'\n'})
	col = 1 + len(before) - (bytes.LastIndexByte(before, '\n') + 1)
	return line, col
}

// keyPath and indexPath need a parent: a map or list is never the root.
func keyPath(p *field.Path, key string) *field.Path {
	if p == nil {
		return field.NewPath("").Key(key)
	}
	return p.Key(key)
}

func indexPath(p *field.Path, i int) *field.Path {
	if p == nil {
		return field.NewPath("").Index(i)
	}
	return p.Index(i)
}

func pathString(p *field.Path) string {
	if p == nil {
		return "<document>"
	}
	return p.String()
}

// errIsSyntax reports whether err is a JSON syntax error.
func errIsSyntax(err error) bool {
	var se *SyntaxError
	return errors.As(err, &se)
}
