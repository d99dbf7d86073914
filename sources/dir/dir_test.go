package dir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/actorlet/actorlet/sources"
)

// These tests run the Source with its file-system watch. The rescan period
// is an hour unless a test says otherwise, so what they see comes from the
// watch.

const (
	seenWithin = time.Second     // the design's bound for seeing a change
	slack      = 5 * time.Second // for steps without a latency promise
)

func hasPods(want ...string) func(sources.Update) bool {
	return func(u sources.Update) bool {
		return u.Err == nil && strings.Join(podNames(u), ",") == strings.Join(want, ",")
	}
}

func TestName(t *testing.T) {
	dir := t.TempDir()
	if got := New(dir, testNode).Name(); got != "file:"+dir {
		t.Errorf("Name = %q", got)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if got := New("manifests", testNode).Name(); got != "file:"+filepath.Join(wd, "manifests") {
		t.Errorf("Name of a relative dir = %q, want it absolute", got)
	}
}

func TestRunSeesNewFileWithinOneSecond(t *testing.T) {
	dir := t.TempDir()
	r := start(t, dir, WithDebounce(DefaultDebounce))
	r.waitFor(t, slack, "the first, empty set", hasPods())

	begin := time.Now()
	write(t, dir, "web.yaml", podYAML("web", "nginx"))
	r.waitFor(t, seenWithin, "the new pod", hasPods("default/web=nginx"))
	t.Logf("seen after %v", time.Since(begin))

	// A plain (non-atomic) write of a second file is seen too.
	if err := os.WriteFile(filepath.Join(dir, "api.yaml"), []byte(podYAML("api", "redis")), 0o644); err != nil {
		t.Fatal(err)
	}
	r.waitFor(t, seenWithin, "the second pod", hasPods("default/api=redis", "default/web=nginx"))
}

func TestRunIgnoresEditorFiles(t *testing.T) {
	dir := t.TempDir()
	r := start(t, dir)
	r.waitFor(t, slack, "the first, empty set", hasPods())
	for _, name := range []string{".web.yaml.swp", "web.yaml~", "4913", "#web.yaml#", "web.tmp"} {
		write(t, dir, name, podYAML("ignored", "nginx"))
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "sub"), "inner.yaml", podYAML("inner", "nginx"))
	// A real file afterwards: the first update with it must hold only it.
	write(t, dir, "web.yaml", podYAML("web", "nginx"))
	u := r.waitFor(t, slack, "a pod", func(u sources.Update) bool { return len(u.Pods) > 0 })
	if !hasPods("default/web=nginx")(u) {
		t.Errorf("update = %s, want only web", describe(u))
	}
}

// TestRunManifestAndBackup: a GCE-style *.manifest is run, and the .bak
// an operator leaves next to it is not run as a second pod, whether it is
// there from the start or appears later; the skip is logged once.
func TestRunManifestAndBackup(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "kube-apiserver.manifest", podYAML("kube-apiserver", "apiserver:2"))
	write(t, dir, "kube-apiserver.manifest.bak", podYAML("kube-apiserver-old", "apiserver:1"))
	r := start(t, dir)
	r.waitFor(t, slack, "the .manifest's pod alone", hasPods("default/kube-apiserver=apiserver:2"))

	write(t, dir, "etcd.yaml.bak", podYAML("etcd-old", "etcd:1"))
	write(t, dir, "etcd.manifest", podYAML("etcd", "etcd:2"))
	u := r.waitFor(t, seenWithin, "the second pod", func(u sources.Update) bool { return len(u.Pods) > 1 })
	if !hasPods("default/etcd=etcd:2", "default/kube-apiserver=apiserver:2")(u) || len(u.Problems) != 0 {
		t.Errorf("update = %s, want the two .manifest pods and no problem", describe(u))
	}
	skips := r.logs.FilterMessage("file in the manifest directory skipped")
	for _, name := range []string{"kube-apiserver.manifest.bak", "etcd.yaml.bak"} {
		if n := skips.FilterField(zap.String("file", filepath.Join(dir, name))).Len(); n != 1 {
			t.Errorf("%s: skip logged %d times, want 1", name, n)
		}
	}
}

// TestRunBrokenEditKeepsLastGoodPod, with --strict-manifests, so that an
// unknown field breaks the file as it did before lenient decoding.
func TestRunBrokenEditKeepsLastGoodPod(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "web.yaml", podYAML("web", "nginx:1.25"))
	r := start(t, dir, WithStrictManifests(true))
	first := r.waitFor(t, slack, "the pod", hasPods("default/web=nginx:1.25"))

	write(t, dir, "web.yaml", strings.Replace(podYAML("web", "nginx:1.26"), "kind: Pod", "kind: Pod\nspec2: {}", 1))
	u := r.waitFor(t, seenWithin, "a problem", func(u sources.Update) bool { return len(u.Problems) > 0 })
	if !hasPods("default/web=nginx:1.25")(u) || u.Pods[0].UID != first.Pods[0].UID {
		t.Errorf("update = %s, want the last good pod", describe(u))
	}
	path := filepath.Join(dir, "web.yaml")
	if len(u.Problems) != 1 || !strings.Contains(u.Problems[0].Error(), path) || !strings.Contains(u.Problems[0].Error(), `unknown field "spec2"`) {
		t.Errorf("problems = %v, want one naming %s and spec2", u.Problems, path)
	}
	if n := r.logs.FilterMessage("manifest rejected; its pod keeps its last good spec").Len(); n != 1 {
		t.Errorf("problem logged %d times, want 1", n)
	}

	write(t, dir, "web.yaml", podYAML("web", "nginx:1.26"))
	u = r.waitFor(t, seenWithin, "the fixed pod", hasPods("default/web=nginx:1.26"))
	if len(u.Problems) != 0 {
		t.Errorf("problems = %v after the fix", u.Problems)
	}
}

func TestRunDeleteRemovesPod(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.yaml", podYAML("a", "nginx"))
	write(t, dir, "b.json", `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}`)
	r := start(t, dir)
	r.waitFor(t, slack, "both pods", hasPods("default/a=nginx", "default/b=nginx"))
	remove(t, filepath.Join(dir, "a.yaml"))
	r.waitFor(t, seenWithin, "only b", hasPods("default/b=nginx"))
}

func TestRunSameNameConflict(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "20-web.yaml", podYAML("web", "nginx:second"))
	write(t, dir, "10-web.yaml", podYAML("web", "nginx:first"))
	r := start(t, dir)
	u := r.waitFor(t, slack, "the winner", hasPods("default/web=nginx:first"))
	if len(u.Problems) != 1 || !strings.Contains(u.Problems[0].Error(), filepath.Join(dir, "20-web.yaml")) {
		t.Errorf("problems = %v, want one naming 20-web.yaml", u.Problems)
	}
	if n := r.logs.FilterMessage("two manifests define the same pod").Len(); n != 1 {
		t.Errorf("warned %d times, want 1", n)
	}
}

// TestRunSameNameConflictStable runs the source with a rescan every 10 ms
// and the files rewritten again and again: the same file wins throughout,
// so no update is sent (an update would mean the pod flipped), and the
// conflict is warned about once.
func TestRunSameNameConflictStable(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "20-web.yaml", podYAML("web", "nginx:second"))
	write(t, dir, "10-web.yaml", podYAML("web", "nginx:first"))
	r := start(t, dir, WithRescanPeriod(10*time.Millisecond))
	first := r.waitFor(t, slack, "the winner", hasPods("default/web=nginx:first"))

	for range 10 {
		write(t, dir, "20-web.yaml", podYAML("web", "nginx:second"))
		write(t, dir, "10-web.yaml", podYAML("web", "nginx:first"))
		time.Sleep(30 * time.Millisecond) // a debounced scan and rescans
	}
	select {
	case u := <-r.updates:
		t.Fatalf("update %s while nothing changed, want none", describe(u))
	default:
	}

	// A real change is sent, and the winner is still the first file.
	write(t, dir, "30-other.yaml", podYAML("other", "redis"))
	u := r.waitFor(t, seenWithin, "the new pod", func(u sources.Update) bool { return len(u.Pods) == 2 })
	if !hasPods("default/web=nginx:first", "default/other=redis")(u) || u.Pods[0].UID != first.Pods[0].UID {
		t.Errorf("update = %s, want the same winner and the new pod", describe(u))
	}
	if n := r.logs.FilterMessage("two manifests define the same pod").Len(); n != 1 {
		t.Errorf("conflict warned %d times, want 1", n)
	}
}

func TestRunDirectoryAppearsLater(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "manifests")
	r := start(t, dir)
	u := r.waitFor(t, slack, "an error", func(u sources.Update) bool { return u.Err != nil })
	if !strings.Contains(u.Err.Error(), dir) {
		t.Errorf("Err = %v, want it to name %s", u.Err, dir)
	}

	// The parent is watched while the directory is missing.
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "web.yaml", podYAML("web", "nginx"))
	r.waitFor(t, seenWithin, "the pod", hasPods("default/web=nginx"))
}

func TestRunDirectoryMovedAndRecreated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "manifests")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "web.yaml", podYAML("web", "nginx"))
	r := start(t, dir)
	r.waitFor(t, slack, "the pod", hasPods("default/web=nginx"))

	// Moved away in one step (removing it file by file would first, rightly,
	// send the set without those files).
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	u := r.waitFor(t, seenWithin, "an error or a change", func(u sources.Update) bool { return true })
	if u.Err == nil {
		t.Fatalf("update = %s, want Err (never an empty set)", describe(u))
	}

	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "api.yaml", podYAML("api", "redis"))
	r.waitFor(t, seenWithin, "the new pod", hasPods("default/api=redis"))
}

// TestRunRescanSafetyNet: with neither the directory nor its parent there
// to watch, only the rescan can notice the directory appearing.
func TestRunRescanSafetyNet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b", "manifests")
	r := start(t, dir, WithRescanPeriod(20*time.Millisecond))
	r.waitFor(t, slack, "an error", func(u sources.Update) bool { return u.Err != nil })
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "web.yaml", podYAML("web", "nginx"))
	r.waitFor(t, slack, "the pod", hasPods("default/web=nginx"))
}
