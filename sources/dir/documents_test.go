package dir

import (
	"path/filepath"
	"strings"
	"testing"
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
