package dir

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/actorlet/actorlet/sources/sourcetest"
)

// TestScanUnknownField: an unknown field (GCE's metadata.component) is a
// warning naming the field and the file, logged once, and the pod runs;
// with --strict-manifests it refuses the file as before.
func TestScanUnknownField(t *testing.T) {
	data := strings.Replace(podYAML("konnectivity-server", "konnectivity:1"), "metadata:\n", "metadata:\n  component: konnectivity-server\n", 1)
	for _, strict := range []bool{false, true} {
		dir := t.TempDir()
		write(t, dir, "konnectivity-server.yaml", data)
		s, logs := newTestScanner(dir)
		s.strict = strict
		u := mustScan(t, s, true)
		mustScan(t, s, false)
		path := filepath.Join(dir, "konnectivity-server.yaml")
		if strict {
			wantPods(t, u)
			if want := "manifest " + path + `: unknown field "metadata.component"`; len(u.Problems) != 1 || u.Problems[0].Error() != want {
				t.Errorf("strict: problems = %v, want %q", u.Problems, want)
			}
			continue
		}
		wantPods(t, u, "default/konnectivity-server=konnectivity:1")
		if len(u.Problems) != 0 {
			t.Errorf("problems = %v, want none", u.Problems)
		}
		warned := logs.FilterMessage("manifest field ignored").All()
		if len(warned) != 1 || warned[0].ContextMap()["file"] != path ||
			warned[0].ContextMap()["warning"] != `unknown field "metadata.component": ignored (--strict-manifests refuses it)` {
			t.Errorf("warnings logged = %v, want one naming the field and the file", warned)
		}
	}
}

// multiDoc joins documents with "---".
func multiDoc(docs ...string) string { return strings.Join(docs, "---\n") }

// TestScanSeveralDocuments: each Pod document of a file is a pod; a bad
// document is a problem naming the file and the document, keeps its last
// good pod, and spares the other documents; a document removed from the
// file removes its pod.
func TestScanSeveralDocuments(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "all.yaml")
	write(t, dir, "all.yaml", multiDoc(podYAML("a", "nginx:1"), podYAML("b", "redis:1"), podYAML("c", "etcd:1")))
	write(t, dir, "z.yaml", podYAML("z", "busybox"))
	s, logs := newTestScanner(dir)
	u := mustScan(t, s, true)
	wantPods(t, u, "default/a=nginx:1", "default/b=redis:1", "default/c=etcd:1", "default/z=busybox")
	uidB := u.Pods[1].UID

	// Document 2 invalid, document 3 edited: b keeps its last good spec,
	// c is updated.
	badB := strings.Replace(podYAML("b", "redis:2"), "    image: redis:2\n", "    image: \"\"\n", 1)
	write(t, dir, "all.yaml", multiDoc(podYAML("a", "nginx:1"), badB, podYAML("c", "etcd:2")))
	u = mustScan(t, s, true)
	wantPods(t, u, "default/a=nginx:1", "default/b=redis:1", "default/c=etcd:2", "default/z=busybox")
	if u.Pods[1].UID != uidB {
		t.Errorf("b's UID changed: its last good pod is not kept")
	}
	want := "manifest " + path + ": document 2 (line 10): spec.containers[0].image: Required value"
	if len(u.Problems) != 1 || u.Problems[0].Error() != want {
		t.Errorf("problems = %v, want %q", u.Problems, want)
	}
	if n := countLogs(logs, "manifest rejected; its pod keeps its last good spec"); n != 1 {
		t.Errorf("logged %d times, want 1", n)
	}

	// A YAML syntax error in document 2: its name cannot be read, so b
	// (defined by no good document) is kept; a and c are unaffected.
	write(t, dir, "all.yaml", multiDoc(podYAML("a", "nginx:1"), "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Name }}\n", podYAML("c", "etcd:2")))
	u = mustScan(t, s, true)
	wantPods(t, u, "default/a=nginx:1", "default/c=etcd:2", "default/b=redis:1", "default/z=busybox")
	if len(u.Problems) != 1 || !strings.HasPrefix(u.Problems[0].Error(), "manifest "+path+": document 2 (line 10): invalid YAML: yaml: line 13: a map key must be a string") {
		t.Errorf("problems = %v, want the template named by document and line", u.Problems)
	}

	// Document 2 removed (fixed by deleting it): b goes, the problem too.
	write(t, dir, "all.yaml", multiDoc(podYAML("a", "nginx:1"), podYAML("c", "etcd:2")))
	u = mustScan(t, s, true)
	wantPods(t, u, "default/a=nginx:1", "default/c=etcd:2", "default/z=busybox")
	if len(u.Problems) != 0 {
		t.Errorf("problems = %v, want none", u.Problems)
	}
	if n := countLogs(logs, "manifest fixed"); n != 1 {
		t.Errorf("fix logged %d times, want 1", n)
	}

	// Back to one document: c goes; a keeps its UID (the UID does not
	// depend on the other documents).
	uidA := u.Pods[0].UID
	write(t, dir, "all.yaml", podYAML("a", "nginx:1"))
	u = mustScan(t, s, true)
	wantPods(t, u, "default/a=nginx:1", "default/z=busybox")
	if u.Pods[0].UID != uidA {
		t.Errorf("a's UID changed when its file lost a document")
	}
}

// TestScanSeveralDocumentsConflicts: the one-winner rule runs over files
// in name order and documents in file order; a loser is a problem naming
// its document and the winner's, warned about once.
func TestScanSeveralDocumentsConflicts(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.yaml", multiDoc(podYAML("web", "nginx:a1"), podYAML("web", "nginx:a2")))
	write(t, dir, "b.yaml", multiDoc(podYAML("api", "api:b"), podYAML("web", "nginx:b")))
	s, logs := newTestScanner(dir)
	u := mustScan(t, s, true)
	wantPods(t, u, "default/web=nginx:a1", "default/api=api:b")
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	want := []string{
		"manifest " + a + ": document 2 (line 10): pod default/web is also defined by " + a + " (document 1 (line 1)), which comes first in name and document order and wins; this document is ignored",
		"manifest " + b + ": document 2 (line 10): pod default/web is also defined by " + a + " (document 1 (line 1)), which comes first in name and document order and wins; this document is ignored",
	}
	if len(u.Problems) != 2 || u.Problems[0].Error() != want[0] || u.Problems[1].Error() != want[1] {
		t.Errorf("problems =\n%v\nwant\n%v", u.Problems, want)
	}
	mustScan(t, s, false)
	mustScan(t, s, false)
	if n := countLogs(logs, "two manifests define the same pod"); n != 2 {
		t.Errorf("conflicts warned %d times, want 2", n)
	}
}

// TestScanConfigMapsAndSecrets: ConfigMap and Secret documents go into
// the update beside the pods, one per kind and namespace/name (the first
// in file-name and document order wins, the other is a problem); a
// broken one keeps its last good version; a Secret's value appears in no
// log and no problem.
func TestScanConfigMapsAndSecrets(t *testing.T) {
	const (
		cm     = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: conf\ndata:\n  k: v1\n"
		secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: kube-system\nimmutable: true\nstringData:\n  password: hunter2\n"
	)
	dir := t.TempDir()
	// A pod and a ConfigMap both named conf: different kinds, no conflict.
	write(t, dir, "a.yaml", multiDoc(podYAML("conf", "nginx"), cm, secret))
	write(t, dir, "b.yaml", multiDoc(strings.Replace(cm, "k: v1", "k: other", 1), strings.Replace(secret, "hunter2", "hunter3", 1)))
	s, logs := newTestScanner(dir)
	u := mustScan(t, s, true)
	wantPods(t, u, "default/conf=nginx")
	if len(u.ConfigMaps) != 1 || u.ConfigMaps[0].Namespace != "default" || u.ConfigMaps[0].Data["k"] != "v1" {
		t.Fatalf("configmaps = %+v, want a.yaml's", u.ConfigMaps)
	}
	if len(u.Secrets) != 1 || u.Secrets[0].Namespace != "kube-system" || string(u.Secrets[0].Data["password"]) != "hunter2" ||
		u.Secrets[0].Immutable == nil || !*u.Secrets[0].Immutable {
		t.Fatalf("secrets = %+v, want a.yaml's, stringData merged, immutable", u.Secrets)
	}
	b := filepath.Join(dir, "b.yaml")
	want := []string{
		"manifest " + b + ": document 1 (line 1): ConfigMap default/conf is also defined by " + filepath.Join(dir, "a.yaml") + " (document 2 (line 10))",
		"manifest " + b + ": document 2 (line 8): Secret kube-system/creds is also defined by " + filepath.Join(dir, "a.yaml") + " (document 3 (line 17))",
	}
	if len(u.Problems) != 2 || !strings.HasPrefix(u.Problems[0].Error(), want[0]) || !strings.HasPrefix(u.Problems[1].Error(), want[1]) {
		t.Errorf("problems =\n%v\nwant\n%v", u.Problems, want)
	}
	if n := countLogs(logs, "two manifests define the same Secret"); n != 1 {
		t.Errorf("secret conflict warned %d times, want 1", n)
	}

	// The ConfigMap edited: sent; the Secret broken: its last good
	// version stays, and the error shows none of its values.
	write(t, dir, "a.yaml", multiDoc(podYAML("conf", "nginx"), strings.Replace(cm, "k: v1", "k: v2", 1),
		strings.Replace(secret, "stringData:\n  password: hunter2\n", "data:\n  password: hunter4-not-base64\n", 1)))
	u = mustScan(t, s, true)
	if len(u.ConfigMaps) != 1 || u.ConfigMaps[0].Data["k"] != "v2" {
		t.Errorf("configmaps = %+v, want the edit", u.ConfigMaps)
	}
	if len(u.Secrets) != 1 || string(u.Secrets[0].Data["password"]) != "hunter2" {
		t.Errorf("secrets = %+v, want the last good one", u.Secrets)
	}
	if len(u.Problems) != 3 || !strings.Contains(u.Problems[0].Error(), "document 3 (line 17): data[password]: Invalid value: (hidden: a Secret's value)") {
		t.Errorf("problems = %v, want the broken Secret first", u.Problems)
	}
	mustScan(t, s, false)
	sourcetest.NoSecretShown(t, logs, u.Problems, "hunter")

	// Both files gone: nothing left.
	remove(t, filepath.Join(dir, "a.yaml"))
	remove(t, b)
	u = mustScan(t, s, true)
	if len(u.Pods)+len(u.ConfigMaps)+len(u.Secrets)+len(u.Problems) != 0 {
		t.Errorf("update = %+v, want empty", u)
	}
}
