package manifest

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestSupportTableCoversAPI walks PodSpec and Container (and the structs
// inside them) and fails for any field that neither has a row in
// supportTable nor sits below one. A k8s.io/api upgrade that adds a field
// fails here until someone decides what actorlet does with it.
func TestSupportTableCoversAPI(t *testing.T) {
	rows := map[scope]map[string]bool{podScope: {}, containerScope: {}}
	for _, r := range supportTable {
		if rows[r.scope][r.path] {
			t.Errorf("duplicate row %q", r.path)
		}
		rows[r.scope][r.path] = true
	}
	var missing []string
	walkFields(reflect.TypeFor[v1.PodSpec](), "spec", rows[podScope], &missing)
	walkFields(reflect.TypeFor[v1.Container](), "", rows[containerScope], &missing)
	// The projected row is supported, which covers what is below it; but
	// each projection source is a kind of its own (podCertificate, added
	// in Kubernetes 1.34, was once dropped silently): each needs a row.
	walkFields(reflect.TypeFor[v1.VolumeProjection](), "spec.volumes[*].projected.sources[*]", rows[podScope], &missing)
	slices.Sort(missing)
	for _, m := range missing {
		t.Errorf("field %s has no row in supportTable", m)
	}
}

// TestSupportTableRowsExist catches typos: every row's path must name a
// real field.
func TestSupportTableRowsExist(t *testing.T) {
	known := map[scope]map[string]bool{podScope: {}, containerScope: {}}
	collect(reflect.TypeFor[v1.Pod](), "", known[podScope])
	collect(reflect.TypeFor[v1.Container](), "", known[containerScope])
	for _, r := range supportTable {
		if !known[r.scope][r.path] {
			t.Errorf("row %q (scope %d) names no field", r.path, r.scope)
		}
	}
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

// walkFields reports (in missing) every leaf field below path that no row
// covers. A struct field without a row of its own is covered when all of
// its fields are.
func walkFields(typ reflect.Type, path string, rows map[string]bool, missing *[]string) {
	for name, ft := range jsonFields(typ) {
		p := join(path, name)
		if rows[p] {
			continue
		}
		elem, list := structElem(ft)
		if elem == nil {
			*missing = append(*missing, p)
			continue
		}
		if list {
			p += "[*]"
			if rows[p] {
				continue
			}
		}
		walkFields(elem, p, rows, missing)
	}
}

// collect records every field path below typ, as rows spell them.
func collect(typ reflect.Type, path string, into map[string]bool) {
	for name, ft := range jsonFields(typ) {
		p := join(path, name)
		into[p] = true
		elem, list := structElem(ft)
		if elem == nil {
			continue
		}
		if list {
			p += "[*]"
			into[p] = true
		}
		collect(elem, p, into)
	}
}

// jsonFields maps the JSON names of typ's fields to their types, flattening
// inlined structs.
func jsonFields(typ reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range typ.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" && f.Anonymous {
			for n, t := range jsonFields(f.Type) {
				out[n] = t
			}
			continue
		}
		out[name] = f.Type
	}
	return out
}

// structElem returns the struct behind t (through a pointer or a list) and
// whether t is a list; nil when t is a leaf (scalar, map, or a type with its
// own JSON encoding such as resource.Quantity or intstr.IntOrString).
func structElem(t reflect.Type) (reflect.Type, bool) {
	list := false
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		if t.Kind() == reflect.Slice {
			list = true
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) {
		return nil, false
	}
	return t, list
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// TestSupportTableInREADME: the README's checklist names every field the
// table refuses or ignores, so a user reading it learns of each.
func TestSupportTableInREADME(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(data), "### Checklist: what a manifest may use")
	if start < 0 {
		t.Fatal("README.md has no checklist section")
	}
	checklist := string(data[start:])
	if end := strings.Index(checklist[1:], "\n## "); end >= 0 {
		checklist = checklist[:end+1]
	}
	for _, r := range supportTable {
		if r.support == supported {
			continue
		}
		segs := strings.Split(strings.ReplaceAll(r.path, "[*]", ""), ".")
		name := segs[len(segs)-1]
		// A generic last name is named with its parent: resources.limits.
		if len(segs) > 1 && slices.Contains([]string{"limits", "requests", "claims", "tcpSocket"}, name) {
			name = segs[len(segs)-2] + "." + name
		}
		if !strings.Contains(checklist, name+"`") && !strings.Contains(checklist, "`"+name) {
			t.Errorf("the README's checklist does not name %s (row %s)", name, r.path)
		}
	}
}
