package kubeapi

import (
	"reflect"
	"strings"

	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// servedKinds are the kinds whose schemas /openapi/v3/api/v1 carries, so
// kubectl explain can describe them.
var servedKinds = []runtime.Object{&v1.Pod{}, &v1.Node{}, &v1.Event{}}

// schemas returns the OpenAPI v3 component schemas of the served kinds and
// of every type they reach, named as the API server names them
// (io.k8s.api.core.v1.Pod), built from the k8s.io/api Go types that
// actorlet decodes: properties from the json tags (embedded inline
// structs merged, a field without omitempty required), descriptions from
// the types' SwaggerDoc (the same text as the API server's), and the
// strategic merge patch's x-kubernetes-patch-strategy and
// x-kubernetes-patch-merge-key from the struct tags; a kind carries
// x-kubernetes-group-version-kind.
func schemas() map[string]any {
	defs := map[string]any{}
	for _, obj := range servedKinds {
		t := reflect.TypeOf(obj).Elem()
		schemaOf(t, defs)
		defs[schemaName(t)].(map[string]any)["x-kubernetes-group-version-kind"] = []map[string]string{{"group": "", "version": "v1", "kind": t.Name()}}
	}
	return defs
}

// schemaName is the API server's name of a type's schema: the package
// path with its domain reversed, then the type's name.
func schemaName(t reflect.Type) string {
	parts := strings.Split(t.PkgPath(), "/")
	domain := strings.Split(parts[0], ".")
	for i, j := 0, len(domain)-1; i < j; i, j = i+1, j-1 {
		domain[i], domain[j] = domain[j], domain[i]
	}
	return strings.Join(append(domain, append(parts[1:], t.Name())...), ".")
}

// The types whose JSON is not their Go shape.
var (
	timeType     = reflect.TypeOf(metav1.Time{})
	microType    = reflect.TypeOf(metav1.MicroTime{})
	quantityType = reflect.TypeOf(apiresource.Quantity{})
	intstrType   = reflect.TypeOf(intstr.IntOrString{})
	rawType      = reflect.TypeOf(runtime.RawExtension{})
)

// schemaOf returns the schema of t: inline for basic types, a $ref to a
// component (added to defs) for structs.
func schemaOf(t reflect.Type, defs map[string]any) map[string]any {
	switch t {
	case timeType, microType:
		return map[string]any{"type": "string", "format": "date-time"}
	case quantityType:
		return map[string]any{"type": "string", "x-kubernetes-int-or-string": true}
	case intstrType:
		return map[string]any{"type": "string", "format": "int-or-string", "x-kubernetes-int-or-string": true}
	case rawType:
		return map[string]any{"type": "object"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return schemaOf(t.Elem(), defs)
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int32, reflect.Uint32, reflect.Int16, reflect.Uint16, reflect.Int8, reflect.Uint8:
		return map[string]any{"type": "integer", "format": "int32"}
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint64:
		return map[string]any{"type": "integer", "format": "int64"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number", "format": "double"}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "format": "byte"}
		}
		return map[string]any{"type": "array", "items": schemaOf(t.Elem(), defs)}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem(), defs)}
	case reflect.Struct:
		name := schemaName(t)
		if _, ok := defs[name]; !ok {
			s := map[string]any{"type": "object"}
			defs[name] = s // before the fields: a type that reaches itself ends here
			props, required := map[string]any{}, []string{}
			addFields(t, props, &required, defs)
			if d := doc(t)[""]; d != "" {
				s["description"] = d
			}
			s["properties"] = props
			if len(required) > 0 {
				s["required"] = required
			}
		}
		return map[string]any{"$ref": "#/components/schemas/" + name}
	}
	return map[string]any{}
}

// addFields adds t's JSON fields to props, those of inline embedded
// structs too.
func addFields(t reflect.Type, props map[string]any, required *[]string, defs map[string]any) {
	docs := doc(t)
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			addFields(f.Type, props, required, defs)
			continue
		}
		s := schemaOf(f.Type, defs)
		if ref, ok := s["$ref"]; ok {
			s = map[string]any{"allOf": []any{map[string]any{"$ref": ref}}} // as the API server: room for a description
		}
		if d := docs[name]; d != "" {
			s["description"] = d
		}
		if v := f.Tag.Get("patchStrategy"); v != "" {
			s["x-kubernetes-patch-strategy"] = v
		}
		if v := f.Tag.Get("patchMergeKey"); v != "" {
			s["x-kubernetes-patch-merge-key"] = v
		}
		props[name] = s
		if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
			*required = append(*required, name)
		}
	}
}

// doc is a type's SwaggerDoc: "" describes the type, a JSON name a field.
func doc(t reflect.Type) map[string]string {
	if d, ok := reflect.New(t).Elem().Interface().(interface{ SwaggerDoc() map[string]string }); ok {
		return d.SwaggerDoc()
	}
	return nil
}
