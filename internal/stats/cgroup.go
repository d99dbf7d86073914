package stats

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
)

// ErrNoCgroup is returned (wrapped) when a container has no cgroup under
// any of the parents looked at: it has just stopped, or Docker runs it
// under a --cgroup-parent of its own.
var ErrNoCgroup = errors.New("no cgroup found")

// Usage is what one cgroup (a container, or the whole node) reads at one
// instant.
type Usage struct {
	// CPUNanos is the cumulative CPU time, in core-nanoseconds.
	CPUNanos uint64
	Memory   MemUsage
}

// MemUsage is a cgroup's memory, in bytes.
type MemUsage struct {
	// Usage is what the kernel charges the cgroup, page cache included.
	Usage uint64
	// WorkingSet is Usage less the inactive file pages (reclaimable
	// without I/O), as the kubelet (cAdvisor) computes it: what the OOM
	// killer and eviction look at.
	WorkingSet uint64
	// RSS is anonymous memory (v1 total_rss, v2 anon).
	RSS             uint64
	PageFaults      uint64
	MajorPageFaults uint64
	// Limit is the cgroup's memory limit, 0 when it has none.
	Limit uint64
}

// workingSet is usage less inactive file pages, never below 0, as cAdvisor.
func workingSet(usage, inactiveFile uint64) uint64 {
	if inactiveFile >= usage {
		return 0
	}
	return usage - inactiveFile
}

// noLimit: a v1 memory.limit_in_bytes at or above it means "no limit" (the
// kernel's unlimited value is PAGE_COUNTER_MAX pages, 2^63 rounded down to
// a page).
const noLimit = uint64(1) << 62

// Cgroups reads containers' and the node's usage from the cgroup
// filesystem.
type Cgroups struct {
	version int
	// root prefixes every path (a fixture tree in tests; "" on a host).
	root   string
	mounts cgroupMounts
	// parents are the cgroup paths, relative to a hierarchy, that may hold
	// a container's cgroup: Docker's cgroupfs driver puts it in docker/<id>,
	// its systemd driver in system.slice/docker-<id>.scope.
	parents []func(id string) string
	// preferred is the index in parents that found the last container,
	// tried first next time.
	preferred atomic.Int32
}

// DefaultParents are the places Docker puts a container's cgroup: its
// cgroupfs driver's, then its systemd driver's.
var DefaultParents = []func(id string) string{
	func(id string) string { return "docker/" + id },
	func(id string) string { return "system.slice/docker-" + id + ".scope" },
}

// Detect finds the host's cgroup hierarchies in /proc/self/mountinfo: the
// v1 cpuacct and memory hierarchies when both are mounted (also on a hybrid
// host, whose v2 mount then holds no controllers), else the v2 unified
// one.
func Detect() (*Cgroups, error) { return DetectAt("") }

// DetectAt is Detect with every path, /proc/self/mountinfo included, under
// root (a fixture tree).
func DetectAt(root string) (*Cgroups, error) {
	path := filepath.Join(root, "/proc/self/mountinfo")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cgroups: %w", err)
	}
	m, err := parseMountinfo(data)
	if err != nil {
		return nil, fmt.Errorf("cgroups: %s: %w", path, err)
	}
	c := &Cgroups{root: root, mounts: m, parents: DefaultParents}
	switch {
	case m.CPUAcct != "" && m.Memory != "":
		c.version = 1
	case m.Unified != "":
		c.version = 2
	default:
		return nil, fmt.Errorf("cgroups: %s names neither the v1 cpuacct and memory hierarchies nor a v2 one", path)
	}
	return c, nil
}

// Version is 1 or 2.
func (c *Cgroups) Version() int { return c.version }

// Container reads the container's cgroup: ErrNoCgroup (wrapped) when it
// has none under any parent.
func (c *Cgroups) Container(id string) (Usage, error) {
	first := int(c.preferred.Load())
	for i := range c.parents {
		k := (first + i) % len(c.parents)
		rel := c.parents[k](id)
		u, err := c.read(rel)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return Usage{}, fmt.Errorf("container %s: %w", id, err)
		}
		if k != first {
			c.preferred.Store(int32(k))
		}
		return u, nil
	}
	return Usage{}, fmt.Errorf("container %s: %w", id, ErrNoCgroup)
}

// Node reads the root cgroup. With v2, whose root has no memory.current,
// memory comes from /proc/meminfo (usage MemTotal - MemFree, working set
// less Inactive(file)), as runc's libcontainer does.
func (c *Cgroups) Node() (Usage, error) {
	if c.version == 1 {
		u, err := c.read("")
		if err != nil {
			return Usage{}, fmt.Errorf("node: %w", err)
		}
		return u, nil
	}
	cpu, err := c.v2CPU("")
	if err != nil {
		return Usage{}, fmt.Errorf("node: %w", err)
	}
	path := filepath.Join(c.root, "/proc/meminfo")
	data, err := os.ReadFile(path)
	if err != nil {
		return Usage{}, fmt.Errorf("node: %w", err)
	}
	mi, err := parseMeminfo(data, "MemTotal", "MemFree", "Inactive(file)", "AnonPages")
	if err != nil {
		return Usage{}, fmt.Errorf("node: %s: %w", path, err)
	}
	usage := mi["MemTotal"] - min(mi["MemFree"], mi["MemTotal"])
	return Usage{CPUNanos: cpu, Memory: MemUsage{
		Usage: usage, WorkingSet: workingSet(usage, mi["Inactive(file)"]), RSS: mi["AnonPages"],
	}}, nil
}

// read reads the cgroup at rel (relative to each hierarchy; "" the root).
func (c *Cgroups) read(rel string) (Usage, error) {
	if c.version == 1 {
		return c.readV1(rel)
	}
	return c.readV2(rel)
}

func (c *Cgroups) file(mount, rel, name string) string {
	return filepath.Join(c.root, mount, rel, name)
}

// readFile reads a cgroup file; a missing one wraps fs.ErrNotExist.
func readFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err // *PathError names the file
	}
	return data, nil
}

func readUint(path string) (uint64, bool, error) {
	data, err := readFile(path)
	if err != nil {
		return 0, false, err
	}
	v, limited, err := parseUint(data)
	if err != nil {
		return 0, false, fmt.Errorf("%s: %w", path, err)
	}
	return v, limited, nil
}

func readKeyed(path string, keys ...string) (map[string]uint64, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	m, err := parseKeyed(data, keys...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// readV1: cpuacct.usage (ns), memory.usage_in_bytes, memory.stat's
// hierarchical total_* counters, memory.limit_in_bytes.
func (c *Cgroups) readV1(rel string) (Usage, error) {
	var u Usage
	var err error
	if u.CPUNanos, _, err = readUint(c.file(c.mounts.CPUAcct, rel, "cpuacct.usage")); err != nil {
		return Usage{}, err
	}
	mem := c.mounts.Memory
	if u.Memory.Usage, _, err = readUint(c.file(mem, rel, "memory.usage_in_bytes")); err != nil {
		return Usage{}, err
	}
	st, err := readKeyed(c.file(mem, rel, "memory.stat"), "total_inactive_file", "total_rss", "total_pgfault", "total_pgmajfault")
	if err != nil {
		return Usage{}, err
	}
	u.Memory.WorkingSet = workingSet(u.Memory.Usage, st["total_inactive_file"])
	u.Memory.RSS, u.Memory.PageFaults, u.Memory.MajorPageFaults = st["total_rss"], st["total_pgfault"], st["total_pgmajfault"]
	if rel != "" { // the root has no limit file
		limit, _, err := readUint(c.file(mem, rel, "memory.limit_in_bytes"))
		if err != nil {
			return Usage{}, err
		}
		if limit < noLimit {
			u.Memory.Limit = limit
		}
	}
	return u, nil
}

// v2CPU reads cpu.stat's usage_usec, in nanoseconds.
func (c *Cgroups) v2CPU(rel string) (uint64, error) {
	path := c.file(c.mounts.Unified, rel, "cpu.stat")
	st, err := readKeyed(path, "usage_usec")
	if err != nil {
		return 0, err
	}
	usec, ok := st["usage_usec"]
	if !ok {
		return 0, fmt.Errorf("%s: no usage_usec", path)
	}
	return usec * 1000, nil
}

// readV2: cpu.stat usage_usec, memory.current, memory.stat (anon,
// inactive_file, pgfault, pgmajfault), memory.max.
func (c *Cgroups) readV2(rel string) (Usage, error) {
	var u Usage
	var err error
	if u.CPUNanos, err = c.v2CPU(rel); err != nil {
		return Usage{}, err
	}
	uni := c.mounts.Unified
	if u.Memory.Usage, _, err = readUint(c.file(uni, rel, "memory.current")); err != nil {
		return Usage{}, err
	}
	st, err := readKeyed(c.file(uni, rel, "memory.stat"), "inactive_file", "anon", "pgfault", "pgmajfault")
	if err != nil {
		return Usage{}, err
	}
	u.Memory.WorkingSet = workingSet(u.Memory.Usage, st["inactive_file"])
	u.Memory.RSS, u.Memory.PageFaults, u.Memory.MajorPageFaults = st["anon"], st["pgfault"], st["pgmajfault"]
	limit, limited, err := readUint(c.file(uni, rel, "memory.max"))
	if err != nil {
		return Usage{}, err
	}
	if limited {
		u.Memory.Limit = limit
	}
	return u, nil
}
