package stats

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Fixture containers: idA is a real container's files copied from this
// project's cgroup v1 machine (usage and CPU edited to round numbers); idB
// has a memory limit (v1: its memory.stat's hierarchical_memory_limit) or
// none (v2).
const (
	idA = "c5d1c1759e79e76df62af483faace4a7d426b90e95c55b3924945cf2a1ad60de"
	idB = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
)

func detect(t *testing.T, version string) *Cgroups {
	t.Helper()
	c, err := DetectAt(filepath.Join("testdata", version))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCgroupsFixtures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tree    string
		version int
		id      string // "" = the node
		want    Usage
	}{
		{"v1 container, cgroupfs driver, no limit", "v1", 1, idA, Usage{CPUNanos: 93162657, Memory: MemUsage{
			Usage: 10485760, WorkingSet: 10485760 - 4694016, RSS: 970752, PageFaults: 1476, MajorPageFaults: 54}}},
		{"v1 container with a limit", "v1", 1, idB, Usage{CPUNanos: 2e9, Memory: MemUsage{
			Usage: 10485760, WorkingSet: 10485760 - 4694016, RSS: 970752, PageFaults: 1476, MajorPageFaults: 54, Limit: 268435456}}},
		{"v1 node: the root cgroup", "v1", 1, "", Usage{CPUNanos: 1696572757495, Memory: MemUsage{
			Usage: 3121156096, WorkingSet: 3121156096 - 899596288, RSS: 652881920, PageFaults: 30503487, MajorPageFaults: 1814}}},
		{"v2 container, systemd driver, with a limit", "v2", 2, idA, Usage{CPUNanos: 2500000 * 1000, Memory: MemUsage{
			Usage: 221249536, WorkingSet: 221249536 - 8388608, RSS: 209715200, PageFaults: 51300, MajorPageFaults: 12, Limit: 536870912}}},
		{"v2 container, cgroupfs driver, memory.max max", "v2", 2, idB, Usage{CPUNanos: 7e9, Memory: MemUsage{
			Usage: 1048576, WorkingSet: 0, RSS: 524288, PageFaults: 10}}},
		{"v2 node: root cpu.stat and /proc/meminfo", "v2", 2, "", Usage{CPUNanos: 1696572757 * 1000, Memory: MemUsage{
			Usage: (24683548 - 21303128) * 1024, WorkingSet: (24683548 - 21303128 - 878476) * 1024, RSS: 640572 * 1024}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := detect(t, tc.tree)
			if c.Version() != tc.version {
				t.Fatalf("version %d, want %d", c.Version(), tc.version)
			}
			var got Usage
			var err error
			if tc.id == "" {
				got, err = c.Node()
			} else {
				got, err = c.Container(tc.id)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestCgroupsMissingContainer(t *testing.T) {
	for _, v := range []string{"v1", "v2"} {
		_, err := detect(t, v).Container("feedfeed")
		if !errors.Is(err, ErrNoCgroup) || !strings.Contains(err.Error(), "container feedfeed") {
			t.Errorf("%s: error %v, want ErrNoCgroup naming the container", v, err)
		}
	}
}

// A malformed file is an error naming the container and the file, not a
// zero.
func TestCgroupsMalformedFile(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join("testdata", "v2"))); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(root, "sys/fs/cgroup/docker", idB, "memory.current")
	if err := os.WriteFile(bad, []byte("lots\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := DetectAt(root)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Container(idB)
	if err == nil || !strings.Contains(err.Error(), idB) || !strings.Contains(err.Error(), bad) {
		t.Fatalf("error %v, want one naming container %s and file %s", err, idB, bad)
	}
}

func TestDetectNoCgroups(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "proc/self"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "proc/self/mountinfo"), []byte("22 1 259:1 / / rw - ext4 /dev/root rw\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := DetectAt(root); err == nil || !strings.Contains(err.Error(), "mountinfo") {
		t.Fatalf("error %v, want one naming mountinfo", err)
	}
}

// The host this runs on: Detect finds its hierarchies and reads the root.
func TestDetectHost(t *testing.T) {
	c, err := Detect()
	if err != nil {
		t.Fatal(err)
	}
	u, err := c.Node()
	if err != nil {
		t.Fatal(err)
	}
	if u.CPUNanos == 0 || u.Memory.Usage == 0 {
		t.Fatalf("node usage %+v: zero CPU or memory", u)
	}
}

// A container's files stay open between reads (each read sees the file's
// content anew) until the cgroup goes or Retain drops it.
func TestCgroupsKeepFilesOpen(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join("testdata", "v2"))); err != nil {
		t.Fatal(err)
	}
	c, err := DetectAt(root)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "sys/fs/cgroup/docker", idB)
	if u, err := c.Container(idB); err != nil || u.CPUNanos != 7e9 {
		t.Fatalf("first read: %+v, %v", u, err)
	}
	if len(c.open) != 1 {
		t.Fatalf("%d cgroups open after a read, want 1", len(c.open))
	}
	// Rewritten in place (a cgroup file's content changes under an open
	// descriptor): the next read sees it.
	if err := os.WriteFile(filepath.Join(dir, "cpu.stat"), []byte("usage_usec 8000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if u, err := c.Container(idB); err != nil || u.CPUNanos != 8e9 {
		t.Fatalf("second read: %+v, %v", u, err)
	}
	// A file that goes bad: the open files are dropped, the error names it.
	if err := os.WriteFile(filepath.Join(dir, "memory.current"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Container(idB); err == nil || !strings.Contains(err.Error(), "memory.current") {
		t.Fatalf("bad file: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "memory.current"), []byte("5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Container(idB); err != nil {
		t.Fatal(err)
	}
	c.Retain(map[string]bool{"other": true})
	if len(c.open) != 0 {
		t.Fatalf("%d cgroups open after Retain, want 0", len(c.open))
	}
	// The container gone (on a real cgroupfs its open files would fail
	// with ENODEV and be dropped too): ErrNoCgroup.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Container(idB); !errors.Is(err, ErrNoCgroup) {
		t.Fatalf("removed cgroup: %v", err)
	}
	if err := c.Close(); err != nil || len(c.open) != 0 {
		t.Fatalf("close: %v, %d open", err, len(c.open))
	}
}
