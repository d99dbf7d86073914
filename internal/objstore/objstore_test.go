package objstore

import (
	"maps"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func cm(ns, name, val string) *v1.ConfigMap {
	return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"k": val}}
}

func secret(ns, name, val string) *v1.Secret {
	return &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{"k": []byte(val)}}
}

func podUsing(ns string, configMaps, secrets []string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	c := v1.Container{Name: "app"}
	for _, n := range configMaps {
		c.EnvFrom = append(c.EnvFrom, v1.EnvFromSource{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: n}}})
	}
	for _, n := range secrets {
		c.EnvFrom = append(c.EnvFrom, v1.EnvFromSource{SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: n}}})
	}
	p.Spec.Containers = []v1.Container{c}
	return p
}

func TestStore(t *testing.T) {
	type put struct {
		source string
		set    Set
		dups   []Duplicate // new duplicates this Put reports
		imm    []Immutable // new refused changes this Put reports
	}
	tests := []struct {
		name string
		puts []put
		pod  *v1.Pod
		// want: the pod's objects, name → value of key k
		wantCMs, wantSecrets map[string]string
	}{
		{name: "a pod sees its namespace's objects only, those it names",
			puts: []put{{source: "file:/a", set: Set{
				ConfigMaps: []*v1.ConfigMap{cm("default", "app", "1"), cm("other", "app", "x"), cm("default", "unused", "u")},
				Secrets:    []*v1.Secret{secret("default", "db", "pw"), secret("other", "db", "x")},
			}}},
			pod: podUsing("default", []string{"app", "missing"}, []string{"db"}), wantCMs: map[string]string{"app": "1"}, wantSecrets: map[string]string{"db": "pw"}},
		{name: "the first source by name wins; the duplicate is reported once",
			puts: []put{
				{source: "url:http://b", set: Set{ConfigMaps: []*v1.ConfigMap{cm("default", "app", "from-b")}}},
				{source: "file:/a", set: Set{ConfigMaps: []*v1.ConfigMap{cm("default", "app", "from-a")}},
					dups: []Duplicate{{Kind: "ConfigMap", Name: "default/app", IgnoredSource: "url:http://b"}}},
				{source: "file:/a", set: Set{ConfigMaps: []*v1.ConfigMap{cm("default", "app", "from-a2")}}}, // still a duplicate: not again
			},
			pod: podUsing("default", []string{"app"}, nil), wantCMs: map[string]string{"app": "from-a2"}},
		{name: "a ConfigMap and a Secret may share a name",
			puts: []put{{source: "file:/a", set: Set{ConfigMaps: []*v1.ConfigMap{cm("default", "x", "c")}, Secrets: []*v1.Secret{secret("default", "x", "s")}}}},
			pod:  podUsing("default", []string{"x"}, []string{"x"}), wantCMs: map[string]string{"x": "c"}, wantSecrets: map[string]string{"x": "s"}},
		{name: "a source's new set replaces its old one",
			puts: []put{
				{source: "file:/a", set: Set{ConfigMaps: []*v1.ConfigMap{cm("default", "app", "1")}}},
				{source: "file:/a", set: Set{}},
			},
			pod: podUsing("default", []string{"app"}, nil)},
		{name: "the loser takes over when the winner drops it",
			puts: []put{
				{source: "file:/a", set: Set{Secrets: []*v1.Secret{secret("default", "db", "a")}}},
				{source: "file:/b", set: Set{Secrets: []*v1.Secret{secret("default", "db", "b")}},
					dups: []Duplicate{{Kind: "Secret", Name: "default/db", IgnoredSource: "file:/b"}}},
				{source: "file:/a", set: Set{}},
			},
			pod: podUsing("default", nil, []string{"db"}), wantSecrets: map[string]string{"db": "b"}},
		{name: "an immutable object keeps its data until deleted",
			puts: []put{
				{source: "file:/a", set: Set{ConfigMaps: []*v1.ConfigMap{immutable(cm("default", "app", "1"))}, Secrets: []*v1.Secret{immutableSecret(secret("default", "db", "pw"))}}},
				{source: "file:/a", set: Set{ConfigMaps: []*v1.ConfigMap{immutable(cm("default", "app", "2"))}, Secrets: []*v1.Secret{immutableSecret(secret("default", "db", "other"))}},
					imm: []Immutable{{Kind: "ConfigMap", Name: "default/app"}, {Kind: "Secret", Name: "default/db"}}},
				{source: "file:/a", set: Set{ConfigMaps: []*v1.ConfigMap{immutable(cm("default", "app", "3"))}, Secrets: []*v1.Secret{immutableSecret(secret("default", "db", "other"))}}}, // reported once
			},
			pod: podUsing("default", []string{"app"}, []string{"db"}), wantCMs: map[string]string{"app": "1"}, wantSecrets: map[string]string{"db": "pw"}},
		{name: "a deleted immutable object may come back with new data",
			puts: []put{
				{source: "file:/a", set: Set{ConfigMaps: []*v1.ConfigMap{immutable(cm("default", "app", "1"))}}},
				{source: "file:/a", set: Set{}},
				{source: "file:/a", set: Set{ConfigMaps: []*v1.ConfigMap{immutable(cm("default", "app", "2"))}}},
			},
			pod: podUsing("default", []string{"app"}, nil), wantCMs: map[string]string{"app": "2"}},
		{name: "a mutable object follows its source",
			puts: []put{
				{source: "file:/a", set: Set{ConfigMaps: []*v1.ConfigMap{cm("default", "app", "1")}}},
				{source: "file:/a", set: Set{ConfigMaps: []*v1.ConfigMap{cm("default", "app", "2")}}},
			},
			pod: podUsing("default", []string{"app"}, nil), wantCMs: map[string]string{"app": "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New()
			for i, p := range tt.puts {
				got, imm := s.Put(p.source, p.set)
				if !slices.Equal(got, p.dups) || !slices.Equal(imm, p.imm) {
					t.Errorf("put %d: duplicates %v, immutable %v; want %v, %v", i, got, imm, p.dups, p.imm)
				}
			}
			got := s.ObjectsFor(tt.pod)
			cms := map[string]string{}
			for n, o := range got.ConfigMaps {
				cms[n] = o.Data["k"]
			}
			secrets := map[string]string{}
			for n, o := range got.Secrets {
				secrets[n] = string(o.Data["k"])
			}
			if !maps.Equal(cms, nilToEmpty(tt.wantCMs)) || !maps.Equal(secrets, nilToEmpty(tt.wantSecrets)) {
				t.Errorf("objects %v %v, want %v %v", cms, secrets, tt.wantCMs, tt.wantSecrets)
			}
		})
	}
}

func nilToEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func immutable(c *v1.ConfigMap) *v1.ConfigMap { t := true; c.Immutable = &t; return c }

func immutableSecret(s *v1.Secret) *v1.Secret { t := true; s.Immutable = &t; return s }
