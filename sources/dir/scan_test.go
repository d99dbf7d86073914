package dir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest/observer"

	"github.com/actorlet/actorlet/internal/manifest"
	"github.com/actorlet/actorlet/sources"
)

// These tests drive the scanner directly: one scan() per step, no timing.

func newTestScanner(dir string) (*scanner, *observer.ObservedLogs) {
	log, logs := observedLogger()
	return newScanner(dir, "file:"+dir, testNode, log), logs
}

func mustScan(t *testing.T, s *scanner, wantSend bool) sources.Update {
	t.Helper()
	u, send, _ := s.scan(false)
	if send != wantSend {
		t.Fatalf("scan sent = %v, want %v: %s", send, wantSend, describe(u))
	}
	return u
}

func wantPods(t *testing.T, u sources.Update, want ...string) {
	t.Helper()
	got := podNames(u)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("pods = %q, want %q (%s)", got, want, describe(u))
	}
}

func countLogs(logs *observer.ObservedLogs, msg string) int {
	return logs.FilterMessage(msg).Len()
}

func TestScanFirstAndUnchanged(t *testing.T) {
	dir := t.TempDir()
	s, _ := newTestScanner(dir)
	u := mustScan(t, s, true) // the first scan is sent, even empty
	if u.Err != nil || len(u.Pods) != 0 || len(u.Problems) != 0 || u.Source != "file:"+dir {
		t.Fatalf("first update = %+v", u)
	}
	mustScan(t, s, false)

	write(t, dir, "web.yaml", podYAML("web", "nginx:1.25"))
	u = mustScan(t, s, true)
	wantPods(t, u, "default/web=nginx:1.25")
	uid := u.Pods[0].UID
	mustScan(t, s, false)

	// A comment and key-order edit is no change.
	write(t, dir, "web.yaml", "# edited\n"+strings.Replace(podYAML("web", "nginx:1.25"), "apiVersion: v1\nkind: Pod\n", "kind: Pod\napiVersion: v1\n", 1))
	mustScan(t, s, false)

	// A real edit is a new pod (new UID).
	write(t, dir, "web.yaml", podYAML("web", "nginx:1.26"))
	u = mustScan(t, s, true)
	wantPods(t, u, "default/web=nginx:1.26")
	if u.Pods[0].UID == uid {
		t.Errorf("UID unchanged after an image edit")
	}
}

// TestScanIgnores: every regular file is read, whatever its extension
// (GCE's *.manifest), but dotfiles, the artefacts of editors, backups,
// package managers and atomic writers, and subdirectories; each skipped
// entry is logged once with why, not on every rescan, and again only
// after it went away and came back.
func TestScanIgnores(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "web.yaml", podYAML("web", "nginx"))
	write(t, dir, "kube-apiserver.manifest", podYAML("kube-apiserver", "apiserver"))
	write(t, dir, "etcd", podYAML("etcd", "etcd"))
	skippedNames := []string{".hidden.yaml", "web.yaml~", ".web.yaml.swp", "web.yaml.swp", "web.yaml.swx", "#web.yaml#", "4913",
		"web.yaml.tmp", "kube-apiserver.manifest.bak", "web.yaml.orig", "web.yaml.dpkg-old", "web.yaml.rpmnew", "web.yaml.rpmsave", "sedAb12Cd"}
	for i, name := range skippedNames {
		write(t, dir, name, podYAML("ignored"+string(rune('a'+i)), "nginx"))
	}
	for _, sub := range []string{"sub", "sub.yaml"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, sub), "inner.yaml", podYAML("inner-"+strings.TrimSuffix(sub, ".yaml"), "nginx"))
	}

	s, logs := newTestScanner(dir)
	u := mustScan(t, s, true)
	wantPods(t, u, "default/etcd=etcd", "default/kube-apiserver=apiserver", "default/web=nginx")
	if len(u.Problems) != 0 {
		t.Errorf("problems = %v, want none", u.Problems)
	}
	const msg = "file in the manifest directory skipped"
	logged := map[string]string{}
	for _, e := range logs.FilterMessage(msg).All() {
		file, _ := e.ContextMap()["file"].(string)
		why, _ := e.ContextMap()["why"].(string)
		if _, dup := logged[file]; dup {
			t.Errorf("%s logged twice", file)
		}
		logged[file] = why
	}
	for _, name := range append(skippedNames, "sub", "sub.yaml") {
		if logged[filepath.Join(dir, name)] == "" {
			t.Errorf("%s: skipped without a log saying why (logged: %v)", name, logged)
		}
	}
	if why := logged[filepath.Join(dir, "kube-apiserver.manifest.bak")]; why != "a backup (*.bak)" {
		t.Errorf("the .bak's reason = %q", why)
	}
	if why := logged[filepath.Join(dir, "sub")]; !strings.HasPrefix(why, "not a regular file") {
		t.Errorf("the subdirectory's reason = %q", why)
	}
	if n := len(logged); n != len(skippedNames)+2 {
		t.Errorf("%d skipped entries logged, want %d: %v", n, len(skippedNames)+2, logged)
	}

	// Rescans log nothing again; a skipped file that goes and comes back
	// is logged again.
	total := countLogs(logs, msg)
	mustScan(t, s, false)
	mustScan(t, s, false)
	if n := countLogs(logs, msg); n != total {
		t.Errorf("rescans logged %d more skips, want none", n-total)
	}
	remove(t, filepath.Join(dir, "web.yaml.orig"))
	mustScan(t, s, false)
	write(t, dir, "web.yaml.orig", podYAML("web", "nginx"))
	mustScan(t, s, false)
	if n := countLogs(logs, msg); n != total+1 {
		t.Errorf("a skipped file back: %d more logs, want 1", n-total)
	}
}

// TestScanReadsAnyName: a file that is not a pod, whatever its name, is
// read and reported as the kubelet does, naming the file (it used to be
// skipped without a word when its extension was not .yaml, .yml or .json).
func TestScanReadsAnyName(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "README.md", "# Static pods\n\nPut pods here.\n")
	s, _ := newTestScanner(dir)
	u := mustScan(t, s, true)
	wantPods(t, u)
	if len(u.Problems) != 1 || !strings.HasPrefix(u.Problems[0].Error(), "manifest "+filepath.Join(dir, "README.md")+": ") {
		t.Errorf("problems = %v, want one naming README.md", u.Problems)
	}
}

func TestScanSymlinks(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	write(t, elsewhere, "web.yaml", podYAML("web", "nginx"))
	if err := os.Symlink(filepath.Join(elsewhere, "web.yaml"), filepath.Join(dir, "web.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("missing.yaml", filepath.Join(dir, "dangling.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(dir, "dir.yaml")); err != nil {
		t.Fatal(err)
	}
	s, _ := newTestScanner(dir)
	u := mustScan(t, s, true)
	wantPods(t, u, "default/web=nginx") // through the link; the others are skipped
	if got := sourceFile(u, 0); got != filepath.Join(dir, "web.yaml") {
		t.Errorf("source file = %s, want the link's path", got)
	}
	if len(u.Problems) != 0 {
		t.Errorf("problems = %v, want none", u.Problems)
	}
}

func TestScanBrokenEditKeepsLastGoodPod(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "web.yaml", podYAML("web", "nginx:1.25"))
	write(t, dir, "other.yaml", podYAML("other", "redis:7"))
	s, logs := newTestScanner(dir)
	u := mustScan(t, s, true)
	wantPods(t, u, "default/other=redis:7", "default/web=nginx:1.25")
	good := u.Pods[1]

	broken := strings.Replace(podYAML("web", "nginx:1.26"), "    image: nginx:1.26\n", "    image: \"\"\n", 1)
	write(t, dir, "web.yaml", broken)
	u = mustScan(t, s, true)
	wantPods(t, u, "default/other=redis:7", "default/web=nginx:1.25")
	if u.Pods[1] != good {
		t.Errorf("the broken file's pod is not its last good one")
	}
	if len(u.Problems) != 1 {
		t.Fatalf("problems = %v, want 1", u.Problems)
	}
	want := "manifest " + filepath.Join(dir, "web.yaml") + ": spec.containers[0].image: Required value"
	if got := u.Problems[0].Error(); got != want {
		t.Errorf("problem = %q, want %q", got, want)
	}

	// Rescans, and rewriting the same broken content, neither resend nor relog.
	mustScan(t, s, false)
	write(t, dir, "web.yaml", broken)
	mustScan(t, s, false)
	// Another file changing resends, with the problem still listed, but the
	// problem is not logged again.
	write(t, dir, "other.yaml", podYAML("other", "redis:7.2"))
	u = mustScan(t, s, true)
	wantPods(t, u, "default/other=redis:7.2", "default/web=nginx:1.25")
	if len(u.Problems) != 1 {
		t.Errorf("problems = %v, want 1", u.Problems)
	}
	if n := countLogs(logs, "manifest rejected; its pod keeps its last good spec"); n != 1 {
		t.Errorf("problem logged %d times, want 1", n)
	}

	// Fixing it applies the new spec and clears the problem.
	write(t, dir, "web.yaml", podYAML("web", "nginx:1.26"))
	u = mustScan(t, s, true)
	wantPods(t, u, "default/other=redis:7.2", "default/web=nginx:1.26")
	if len(u.Problems) != 0 {
		t.Errorf("problems = %v, want none", u.Problems)
	}
	if n := countLogs(logs, "manifest fixed"); n != 1 {
		t.Errorf("fix logged %d times, want 1", n)
	}
}

func TestScanBrokenNewFile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "bad.json", `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": {"containerz": []}}`)
	s, logs := newTestScanner(dir)
	s.strict = true // --strict-manifests: the unknown field is the error (lenient, the missing containers are)
	u := mustScan(t, s, true)
	wantPods(t, u)
	if len(u.Problems) != 1 || !strings.Contains(u.Problems[0].Error(), filepath.Join(dir, "bad.json")) ||
		!strings.Contains(u.Problems[0].Error(), `unknown field "spec.containerz"`) {
		t.Errorf("problems = %v, want one naming bad.json and spec.containerz", u.Problems)
	}
	mustScan(t, s, false)
	if n := countLogs(logs, "manifest rejected"); n != 1 {
		t.Errorf("logged %d times, want 1", n)
	}
	// Deleting a broken file clears its problem.
	remove(t, filepath.Join(dir, "bad.json"))
	u = mustScan(t, s, true)
	if len(u.Problems) != 0 {
		t.Errorf("problems = %v after delete", u.Problems)
	}
}

func TestScanDeleteRemovesPod(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.yaml", podYAML("a", "nginx"))
	write(t, dir, "b.yaml", podYAML("b", "nginx"))
	s, _ := newTestScanner(dir)
	wantPods(t, mustScan(t, s, true), "default/a=nginx", "default/b=nginx")
	remove(t, filepath.Join(dir, "a.yaml"))
	wantPods(t, mustScan(t, s, true), "default/b=nginx")
	// A broken file keeps its last good pod only until it is deleted.
	write(t, dir, "b.yaml", "kind: Pod\n")
	wantPods(t, mustScan(t, s, true), "default/b=nginx")
	remove(t, filepath.Join(dir, "b.yaml"))
	wantPods(t, mustScan(t, s, true))
}

func TestScanSameNameConflict(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "b.yaml", podYAML("web", "nginx:b"))
	write(t, dir, "a.yaml", podYAML("web", "nginx:a"))
	write(t, dir, "c.yaml", podYAML("other", "redis"))
	s, logs := newTestScanner(dir)
	u := mustScan(t, s, true)
	wantPods(t, u, "default/web=nginx:a", "default/other=redis")
	if got := sourceFile(u, 0); got != filepath.Join(dir, "a.yaml") {
		t.Errorf("winner from %s, want a.yaml", got)
	}
	if len(u.Problems) != 1 || !strings.HasPrefix(u.Problems[0].Error(), "manifest "+filepath.Join(dir, "b.yaml")+": pod default/web is also defined by ") {
		t.Errorf("problems = %v, want one naming b.yaml", u.Problems)
	}
	mustScan(t, s, false)
	write(t, dir, "c.yaml", podYAML("other", "redis:7"))
	mustScan(t, s, true)
	if n := countLogs(logs, "two manifests define the same pod"); n != 1 {
		t.Errorf("conflict warned %d times, want 1", n)
	}

	// The winner going away lets the other file's pod in.
	remove(t, filepath.Join(dir, "a.yaml"))
	u = mustScan(t, s, true)
	wantPods(t, u, "default/web=nginx:b", "default/other=redis:7")
	if len(u.Problems) != 0 {
		t.Errorf("problems = %v, want none", u.Problems)
	}
}

// TestScanSameNameStableAcrossRescans: with three files defining one pod,
// the first in name order wins on every rescan, whatever happens to the
// files' times, inodes and contents short of a change of the pod; each
// loser is one problem, warned about once, not on every rescan; and no
// rescan sends an update, so nothing flip-flops.
func TestScanSameNameStableAcrossRescans(t *testing.T) {
	dir := t.TempDir()
	// Written in reverse name order: creation order, inode numbers and
	// modification times all disagree with name order.
	write(t, dir, "c.yaml", podYAML("web", "nginx:c"))
	write(t, dir, "b.yaml", podYAML("web", "nginx:b"))
	write(t, dir, "a.yaml", podYAML("web", "nginx:a"))
	s, logs := newTestScanner(dir)
	u := mustScan(t, s, true)
	wantPods(t, u, "default/web=nginx:a")
	winner := u.Pods[0]
	if got := sourceFile(u, 0); got != filepath.Join(dir, "a.yaml") {
		t.Fatalf("winner from %s, want a.yaml", got)
	}
	wantLosers := func(u sources.Update) {
		t.Helper()
		if len(u.Problems) != 2 {
			t.Fatalf("problems = %v, want b.yaml and c.yaml", u.Problems)
		}
		for i, loser := range []string{"b.yaml", "c.yaml"} {
			want := "manifest " + filepath.Join(dir, loser) + ": pod default/web is also defined by " + filepath.Join(dir, "a.yaml") +
				", which comes first in name order and wins; this file is ignored"
			if got := u.Problems[i].Error(); got != want {
				t.Errorf("problem %d = %q, want %q", i, got, want)
			}
		}
	}
	wantLosers(u)
	const warning = "two manifests define the same pod"
	wantWarnings := func(n int) {
		t.Helper()
		if got := countLogs(logs, warning); got != n {
			t.Errorf("%q logged %d times, want %d", warning, got, n)
		}
	}
	wantWarnings(2) // one per losing file

	later := time.Now().Add(time.Hour)
	for i := range 12 {
		// Disturb the files in every way that does not change the pod.
		switch i % 4 {
		case 0: // the losers rewritten, same content: new inodes and times
			write(t, dir, "b.yaml", podYAML("web", "nginx:b"))
			write(t, dir, "c.yaml", podYAML("web", "nginx:c"))
		case 1: // the winner rewritten, same content
			write(t, dir, "a.yaml", podYAML("web", "nginx:a"))
		case 2: // the losers newer than the winner, then older
			for j, name := range []string{"b.yaml", "c.yaml"} {
				at := later.Add(time.Duration(i*10+j) * time.Minute)
				if err := os.Chtimes(filepath.Join(dir, name), at, at); err != nil {
					t.Fatal(err)
				}
			}
		case 3: // nothing: a plain rescan
		}
		u, send, _ := s.scan(false)
		if send {
			t.Fatalf("rescan %d sent an update: %s", i, describe(u))
		}
		if len(u.Pods) != 1 || u.Pods[0] != winner {
			t.Fatalf("rescan %d: pods %s, want a.yaml's pod unchanged", i, describe(u))
		}
		wantLosers(u)
	}
	wantWarnings(2)

	// A loser edited, still defining the same pod: still ignored, nothing
	// to send (the node's set did not change), no new warning.
	write(t, dir, "b.yaml", podYAML("web", "nginx:b2"))
	u = mustScan(t, s, false)
	wantPods(t, u, "default/web=nginx:a")
	wantLosers(u)
	wantWarnings(2)

	// The winner edited: its new spec, still the winner, no new warning.
	write(t, dir, "a.yaml", podYAML("web", "nginx:a2"))
	u = mustScan(t, s, true)
	wantPods(t, u, "default/web=nginx:a2")
	wantLosers(u)
	mustScan(t, s, false)
	wantWarnings(2)

	// The winner broken: it keeps its last good pod and keeps winning; the
	// pod does not pass to b.yaml.
	write(t, dir, "a.yaml", "kind: Pod\n")
	u = mustScan(t, s, true)
	wantPods(t, u, "default/web=nginx:a2")
	if got := sourceFile(u, 0); got != filepath.Join(dir, "a.yaml") {
		t.Errorf("winner from %s after a broken edit, want a.yaml", got)
	}
	if len(u.Problems) != 3 || !strings.HasPrefix(u.Problems[0].Error(), "manifest "+filepath.Join(dir, "a.yaml")+": ") {
		t.Errorf("problems = %v, want a.yaml's, then the two losers'", u.Problems)
	} else {
		wantLosers(sources.Update{Problems: u.Problems[1:]})
	}
	for range 3 {
		mustScan(t, s, false)
	}
	wantWarnings(2)
}

func TestScanSameUIDConflict(t *testing.T) {
	dir := t.TempDir()
	withUID := func(name string) string {
		return strings.Replace(podYAML(name, "nginx"), "  name: "+name+"\n", "  name: "+name+"\n  uid: fixed-uid\n", 1)
	}
	write(t, dir, "a.yaml", withUID("a"))
	write(t, dir, "b.yaml", withUID("b"))
	s, _ := newTestScanner(dir)
	u := mustScan(t, s, true)
	wantPods(t, u, "default/a=nginx")
	if len(u.Problems) != 1 || !strings.Contains(u.Problems[0].Error(), "pod UID fixed-uid is also defined by") {
		t.Errorf("problems = %v", u.Problems)
	}
}

func TestScanMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "manifests")
	s, logs := newTestScanner(dir)
	u := mustScan(t, s, true)
	if u.Err == nil || !strings.Contains(u.Err.Error(), dir) || u.Pods != nil {
		t.Fatalf("update = %s, want an Err naming %s", describe(u), dir)
	}
	mustScan(t, s, false) // same error: not resent, not relogged
	if n := countLogs(logs, "cannot read manifest directory; keeping the last set of pods"); n != 1 {
		t.Errorf("logged %d times, want 1", n)
	}

	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "web.yaml", podYAML("web", "nginx"))
	u = mustScan(t, s, true)
	wantPods(t, u, "default/web=nginx")

	// The directory vanishing is an error, never an empty set; coming back
	// with the same content is sent again (the source recovered).
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	u = mustScan(t, s, true)
	if u.Err == nil {
		t.Fatalf("update = %s, want Err", describe(u))
	}
	if err := os.Rename(dir+".old", dir); err != nil {
		t.Fatal(err)
	}
	wantPods(t, mustScan(t, s, true), "default/web=nginx")
}

func TestScanUnreadableFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads files regardless of mode")
	}
	dir := t.TempDir()
	write(t, dir, "web.yaml", podYAML("web", "nginx"))
	s, _ := newTestScanner(dir)
	wantPods(t, mustScan(t, s, true), "default/web=nginx")
	if err := os.Chmod(filepath.Join(dir, "web.yaml"), 0); err != nil {
		t.Fatal(err)
	}
	u := mustScan(t, s, true)
	wantPods(t, u, "default/web=nginx")
	if len(u.Problems) != 1 || !strings.Contains(u.Problems[0].Error(), "permission denied") {
		t.Errorf("problems = %v", u.Problems)
	}
}

// TestScanTooLarge: a file over manifest.MaxManifestBytes is a problem
// naming it, and is not read; one of exactly the limit is read.
func TestScanTooLarge(t *testing.T) {
	dir := t.TempDir()
	pad := func(n int) string {
		pod := podYAML("web", "nginx")
		return pod + "#" + strings.Repeat("x", n-len(pod)-2) + "\n"
	}
	write(t, dir, "big.yaml", pad(manifest.MaxManifestBytes+1))
	write(t, dir, "web.yaml", pad(manifest.MaxManifestBytes))
	s, _ := newTestScanner(dir)
	u := mustScan(t, s, true)
	wantPods(t, u, "default/web=nginx")
	want := fmt.Sprintf("manifest %s: manifest too large: file is %d bytes, over the %d-byte limit",
		filepath.Join(dir, "big.yaml"), manifest.MaxManifestBytes+1, manifest.MaxManifestBytes)
	if len(u.Problems) != 1 || u.Problems[0].Error() != want || !errors.Is(u.Problems[0], manifest.ErrTooLarge) {
		t.Errorf("problems = %v, want %q", u.Problems, want)
	}
}

func TestScanProblemsAreFileErrors(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "x.yaml", "")
	s, _ := newTestScanner(dir)
	u := mustScan(t, s, true)
	if len(u.Problems) != 1 {
		t.Fatalf("problems = %v", u.Problems)
	}
	var fe *manifest.FileError
	if !errors.As(u.Problems[0], &fe) || fe.Path != filepath.Join(dir, "x.yaml") {
		t.Errorf("problem %v is not a *manifest.FileError for x.yaml", u.Problems[0])
	}
}
