package dir

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestScanDelay(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	w := 100 * time.Millisecond
	for _, c := range []struct {
		name      string
		now, last time.Time
		want      time.Duration
	}{
		{"first event ever: at once", t0, time.Time{}, 0},
		{"after a quiet window: at once", t0.Add(time.Second), t0, 0},
		{"exactly at the window's end: at once", t0.Add(w), t0, 0},
		{"within the window: at its end", t0.Add(30 * time.Millisecond), t0, 70 * time.Millisecond},
		{"right after a read: the whole window", t0, t0, w},
	} {
		if got := scanDelay(c.now, c.last, w); got != c.want {
			t.Errorf("%s: scanDelay = %v, want %v", c.name, got, c.want)
		}
	}
	if got := scanDelay(t0, t0, 0); got != 0 {
		t.Errorf("no window: scanDelay = %v, want 0", got)
	}
}

// An eager scan (right after an event) leaves a file it finds empty as it
// was, and asks to be read again; the next scan reads it.
func TestEagerScanDefersEmptyFile(t *testing.T) {
	dir := t.TempDir()
	s, _ := newTestScanner(dir)
	write(t, dir, "web.yaml", podYAML("web", "nginx"))
	mustScan(t, s, true)

	// A writer that is not atomic: the new file first, empty.
	path := filepath.Join(dir, "api.yaml")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	u, send, deferred := s.scan(true)
	if send || !deferred {
		t.Fatalf("eager scan of a new empty file: sent %v (%s), deferred %v; want nothing sent, deferred", send, describe(u), deferred)
	}
	// The old file truncated in place: its pod stays meanwhile.
	if err := os.WriteFile(filepath.Join(dir, "web.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, send, deferred := s.scan(true); send || !deferred {
		t.Fatalf("eager scan of a truncated file: sent %v, deferred %v; want nothing sent, deferred", send, deferred)
	}
	if err := os.WriteFile(path, []byte(podYAML("api", "redis")), 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "web.yaml", podYAML("web", "nginx"))
	u, send, deferred = s.scan(true)
	if !send || deferred {
		t.Fatalf("eager scan of written files: sent %v, deferred %v; want sent, not deferred", send, deferred)
	}
	wantPods(t, u, "default/api=redis", "default/web=nginx")

	// A file that stays empty is a problem once a scan that is not eager
	// reads it.
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, deferred := s.scan(true); !deferred {
		t.Fatal("eager scan: want deferred")
	}
	u = mustScan(t, s, true)
	if len(u.Problems) != 1 {
		t.Errorf("problems = %v, want the empty api.yaml", u.Problems)
	}
}

// The first change after a quiet spell is read at once: a debounce window
// far longer than the test's patience does not delay it.
func TestRunReadsFirstEventAtOnce(t *testing.T) {
	dir := t.TempDir()
	r := start(t, dir, WithDebounce(time.Hour))
	r.waitFor(t, slack, "the first, empty set", hasPods())
	write(t, dir, "web.yaml", podYAML("web", "nginx"))
	r.waitFor(t, seenWithin, "the new pod, before the window ends", hasPods("default/web=nginx"))
}
