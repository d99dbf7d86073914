package stats

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
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

	mu      sync.Mutex
	open    map[string]*openCgroup // by container ID
	maxOpen int
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
	c := &Cgroups{root: root, mounts: m, parents: DefaultParents, open: map[string]*openCgroup{}, maxOpen: maxOpenFor()}
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
// has none under any parent. The cgroup's files stay open until Retain
// drops the container, so later reads cost one pread(2) per file.
func (c *Cgroups) Container(id string) (Usage, error) {
	if u, ok := c.readOpen(id); ok {
		return u, nil
	}
	first := int(c.preferred.Load())
	for i := range c.parents {
		k := (first + i) % len(c.parents)
		u, err := c.openAndRead(id, c.parents[k](id))
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

// openCgroup is a cgroup whose files are kept open: fds[i] is paths[i].
type openCgroup struct {
	mu     sync.RWMutex // read-held while reading; write-held to close
	closed bool
	paths  []string
	fds    []int
}

// get preads file i whole from offset 0 (a cgroup file's content is made
// anew by every read from its start).
func (o *openCgroup) get(i int) ([]byte, func(), error) {
	return readFD(o.fds[i], o.paths[i])
}

func (o *openCgroup) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	o.closed = true
	for _, fd := range o.fds {
		_ = syscall.Close(fd)
	}
}

// readOpen reads id's cgroup through its open files; ok is false when
// they are not open or the read failed (the cgroup is gone: the files are
// closed and forgotten).
func (c *Cgroups) readOpen(id string) (Usage, bool) {
	c.mu.Lock()
	o := c.open[id]
	c.mu.Unlock()
	if o == nil {
		return Usage{}, false
	}
	o.mu.RLock()
	if o.closed {
		o.mu.RUnlock()
		return Usage{}, false
	}
	u, err := c.parse(o)
	o.mu.RUnlock()
	if err != nil {
		c.forget(id, o)
		return Usage{}, false
	}
	return u, true
}

// openAndRead opens the cgroup at rel, reads it and keeps its files open
// under id (while fewer than maxOpen are).
func (c *Cgroups) openAndRead(id, rel string) (Usage, error) {
	o := &openCgroup{paths: c.paths(rel)}
	for _, p := range o.paths {
		fd, err := openFile(p)
		if err != nil {
			o.close()
			return Usage{}, err
		}
		o.fds = append(o.fds, fd)
	}
	u, err := c.parse(o)
	if err != nil {
		o.close()
		return Usage{}, err
	}
	c.mu.Lock()
	if old := c.open[id]; old == nil && len(c.open) < c.maxOpen {
		c.open[id] = o
		o = nil
	}
	c.mu.Unlock()
	if o != nil {
		o.close()
	}
	return u, nil
}

// forget closes o, id's open files, unless they were replaced.
func (c *Cgroups) forget(id string, o *openCgroup) {
	c.mu.Lock()
	if c.open[id] == o {
		delete(c.open, id)
	}
	c.mu.Unlock()
	o.close()
}

// Retain closes the files of every container not in keep (those stopped).
func (c *Cgroups) Retain(keep map[string]bool) {
	c.mu.Lock()
	var drop []*openCgroup
	for id, o := range c.open {
		if !keep[id] {
			drop = append(drop, o)
			delete(c.open, id)
		}
	}
	c.mu.Unlock()
	for _, o := range drop {
		o.close()
	}
}

// Close closes every open file.
func (c *Cgroups) Close() error {
	c.Retain(nil)
	return nil
}

// maxOpenFor is how many containers may keep their files open (4 each at
// most) within half of the process's open-file limit.
func maxOpenFor() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return int(min(rl.Cur/2/4, 4096))
}

// Node reads the root cgroup. With v2, whose root has no memory.current,
// memory comes from /proc/meminfo (usage MemTotal - MemFree, working set
// less Inactive(file)), as runc's libcontainer does.
func (c *Cgroups) Node() (Usage, error) {
	if c.version == 1 {
		u, err := readV1(pathSource(c.paths("")), true)
		if err != nil {
			return Usage{}, fmt.Errorf("node: %w", err)
		}
		return u, nil
	}
	cpu, err := v2CPU(pathSource(c.paths("")))
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

// parse reads a container's usage from its cgroup's files.
func (c *Cgroups) parse(src source) (Usage, error) {
	if c.version == 1 {
		return readV1(src, false)
	}
	return readV2(src)
}

// paths are the files of the cgroup at rel (relative to each hierarchy;
// "" the root) that parse reads, in the order of the v1Files or v2Files
// indexes.
func (c *Cgroups) paths(rel string) []string {
	if c.version == 1 {
		return []string{
			filepath.Join(c.root, c.mounts.CPUAcct, rel, "cpuacct.usage"),
			filepath.Join(c.root, c.mounts.Memory, rel, "memory.usage_in_bytes"),
			filepath.Join(c.root, c.mounts.Memory, rel, "memory.stat"),
		}
	}
	dir := filepath.Join(c.root, c.mounts.Unified, rel)
	return []string{
		filepath.Join(dir, "cpu.stat"),
		filepath.Join(dir, "memory.current"),
		filepath.Join(dir, "memory.stat"),
		filepath.Join(dir, "memory.max"),
	}
}

// Indexes of the files paths lists.
const (
	v1CPU, v1MemUsage, v1MemStat       = 0, 1, 2
	v2CPUStat, v2MemCurrent, v2MemStat = 0, 1, 2
	v2MemMax                           = 3
)

// source gives a cgroup's files by index.
type source interface {
	get(i int) (data []byte, done func(), err error)
}

// pathSource opens, reads and closes each file when asked.
type pathSource []string

func (p pathSource) get(i int) ([]byte, func(), error) {
	fd, err := openFile(p[i])
	if err != nil {
		return nil, nil, err
	}
	defer syscall.Close(fd)
	return readFD(fd, p[i])
}

// bufPool holds the buffers cgroup files are read into: they are small
// (a v1 memory.stat is about 1 KiB) and read by the thousand per answer.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 8<<10); return &b }}

// openFile opens a file for reading; a missing one's error wraps
// fs.ErrNotExist, and names the file.
func openFile(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}

// readFD reads a small file whole from offset 0 with pread(2) into a
// pooled buffer (done returns it): one system call for a cgroup file,
// where os.ReadFile makes five (open, fstat, fcntl, read, read, close).
func readFD(fd int, path string) (data []byte, done func(), err error) {
	bp := bufPool.Get().(*[]byte)
	buf := *bp
	n := 0
	for {
		if n == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
		}
		m, err := syscall.Pread(fd, buf[n:], int64(n))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			bufPool.Put(bp)
			return nil, nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		n += m
		// A read shorter than asked is the end of the file, for regular
		// files and for the kernel's cgroup files alike (their content
		// is made whole by a read from offset 0): this spares the read
		// that would return 0.
		if m == 0 || n < len(buf) {
			break
		}
	}
	*bp = buf
	return buf[:n], func() { bufPool.Put(bp) }, nil
}

func getUint(src source, i int) (uint64, bool, error) {
	data, done, err := src.get(i)
	if err != nil {
		return 0, false, err
	}
	defer done()
	v, limited, err := parseUint(data)
	if err != nil {
		return 0, false, fmt.Errorf("%s: %w", pathOf(src, i), err)
	}
	return v, limited, nil
}

func getKeyed(src source, i int, keys ...string) (map[string]uint64, error) {
	data, done, err := src.get(i)
	if err != nil {
		return nil, err
	}
	defer done()
	m, err := parseKeyed(data, keys...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pathOf(src, i), err)
	}
	return m, nil
}

func pathOf(src source, i int) string {
	switch s := src.(type) {
	case pathSource:
		return s[i]
	case *openCgroup:
		return s.paths[i]
	}
	return fmt.Sprint("file ", i)
}

// readV1: cpuacct.usage (ns), memory.usage_in_bytes and memory.stat: its
// hierarchical total_* counters, and hierarchical_memory_limit, the limit
// in force (the lowest of the cgroup's and its ancestors'), which spares
// reading memory.limit_in_bytes. The root has no limit.
func readV1(src source, root bool) (Usage, error) {
	var u Usage
	var err error
	if u.CPUNanos, _, err = getUint(src, v1CPU); err != nil {
		return Usage{}, err
	}
	if u.Memory.Usage, _, err = getUint(src, v1MemUsage); err != nil {
		return Usage{}, err
	}
	st, err := getKeyed(src, v1MemStat, "total_inactive_file", "total_rss", "total_pgfault",
		"total_pgmajfault", "hierarchical_memory_limit")
	if err != nil {
		return Usage{}, err
	}
	u.Memory.WorkingSet = workingSet(u.Memory.Usage, st["total_inactive_file"])
	u.Memory.RSS, u.Memory.PageFaults, u.Memory.MajorPageFaults = st["total_rss"], st["total_pgfault"], st["total_pgmajfault"]
	if limit, ok := st["hierarchical_memory_limit"]; ok && limit < noLimit && !root {
		u.Memory.Limit = limit
	}
	return u, nil
}

// v2CPU reads cpu.stat's usage_usec, in nanoseconds.
func v2CPU(src source) (uint64, error) {
	st, err := getKeyed(src, v2CPUStat, "usage_usec")
	if err != nil {
		return 0, err
	}
	usec, ok := st["usage_usec"]
	if !ok {
		return 0, fmt.Errorf("%s: no usage_usec", pathOf(src, v2CPUStat))
	}
	return usec * 1000, nil
}

// readV2: cpu.stat usage_usec, memory.current, memory.stat (anon,
// inactive_file, pgfault, pgmajfault), memory.max.
func readV2(src source) (Usage, error) {
	var u Usage
	var err error
	if u.CPUNanos, err = v2CPU(src); err != nil {
		return Usage{}, err
	}
	if u.Memory.Usage, _, err = getUint(src, v2MemCurrent); err != nil {
		return Usage{}, err
	}
	st, err := getKeyed(src, v2MemStat, "inactive_file", "anon", "pgfault", "pgmajfault")
	if err != nil {
		return Usage{}, err
	}
	u.Memory.WorkingSet = workingSet(u.Memory.Usage, st["inactive_file"])
	u.Memory.RSS, u.Memory.PageFaults, u.Memory.MajorPageFaults = st["anon"], st["pgfault"], st["pgmajfault"]
	limit, limited, err := getUint(src, v2MemMax)
	if err != nil {
		return Usage{}, err
	}
	if limited {
		u.Memory.Limit = limit
	}
	return u, nil
}
