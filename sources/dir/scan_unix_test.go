//go:build unix

package dir

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestScanSkipsFIFO: opening a FIFO for reading would block the scan.
func TestScanSkipsFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.yaml"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "target"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.Symlink("target", filepath.Join(dir, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "web.yaml", podYAML("web", "nginx"))
	s, _ := newTestScanner(dir)
	u := mustScan(t, s, true)
	wantPods(t, u, "default/web=nginx")
	if len(u.Problems) != 0 {
		t.Errorf("problems = %v", u.Problems)
	}
	// Read directly, a FIFO is refused without blocking.
	if _, err := readManifest(filepath.Join(dir, "fifo.yaml")); err == nil {
		t.Errorf("readManifest(FIFO) succeeded")
	}
}
