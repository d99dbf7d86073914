package kubeapi

import (
	"encoding/json"
	"testing"
)

// The schemas carry what kubectl reads: the kinds' group-version-kind,
// $refs that resolve, descriptions, required fields, and the strategic
// merge patch's strategies and merge keys.
func TestSchemas(t *testing.T) {
	defs := schemas()
	get := func(name string) map[string]any {
		t.Helper()
		s, ok := defs[name].(map[string]any)
		if !ok {
			t.Fatalf("no schema %s", name)
		}
		return s
	}
	prop := func(schema, field string) string {
		t.Helper()
		p := get(schema)["properties"].(map[string]any)[field]
		data, _ := json.Marshal(p)
		return string(data)
	}
	for _, kind := range []string{"Pod", "Node", "Event"} {
		gvk, _ := json.Marshal(get("io.k8s.api.core.v1." + kind)["x-kubernetes-group-version-kind"])
		if want := `[{"group":"","kind":"` + kind + `","version":"v1"}]`; string(gvk) != want {
			t.Errorf("%s: group-version-kind %s, want %s", kind, gvk, want)
		}
	}
	for _, c := range []struct{ schema, field, want string }{
		{"io.k8s.api.core.v1.Pod", "spec", `{"allOf":[{"$ref":"#/components/schemas/io.k8s.api.core.v1.PodSpec"}],"description":"Specification of the desired behavior of the pod. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status"}`},
		{"io.k8s.api.core.v1.Pod", "kind", `{"description":"Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds","type":"string"}`},
		{"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "creationTimestamp", `{"description":"CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata","format":"date-time","type":"string"}`},
	} {
		if got := prop(c.schema, c.field); got != c.want {
			t.Errorf("%s.%s = %s\nwant %s", c.schema, c.field, got, c.want)
		}
	}
	containers := get("io.k8s.api.core.v1.PodSpec")["properties"].(map[string]any)["containers"].(map[string]any)
	if containers["x-kubernetes-patch-strategy"] != "merge" || containers["x-kubernetes-patch-merge-key"] != "name" || containers["type"] != "array" {
		t.Errorf("PodSpec.containers = %v, want an array merged by name", containers)
	}
	if req, _ := json.Marshal(get("io.k8s.api.core.v1.Container")["required"]); string(req) != `["name"]` {
		t.Errorf("Container required %s, want [name]", req)
	}
	// Every $ref names a schema of the document.
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				if _, ok := defs[ref[len("#/components/schemas/"):]]; !ok {
					t.Errorf("dangling $ref %s", ref)
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(map[string]any(defs))
	if len(defs) < 50 {
		t.Errorf("%d schemas; the kinds reach more types than that", len(defs))
	}
}
