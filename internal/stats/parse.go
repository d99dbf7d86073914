package stats

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// This file holds the pure parsers of the kernel's files: no I/O, each
// table-tested (parse_test.go) on fixtures of real files.

// parseUint reads a file holding one unsigned number (cpuacct.usage,
// memory.usage_in_bytes, memory.current, memory.limit_in_bytes). "max"
// (cgroup v2's memory.max without a limit) reads as 0 with ok false.
func parseUint(data []byte) (v uint64, limited bool, err error) {
	s := strings.TrimSpace(string(data))
	if s == "max" {
		return 0, false, nil
	}
	v, err = strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("not a number: %q", s)
	}
	return v, true, nil
}

// parseKeyed reads a flat keyed file, one "key value" pair a line
// (memory.stat of both versions, cgroup v2's cpu.stat), keeping the keys
// asked for. A line that is not "key number" is an error naming it; keys
// not asked for are skipped without parsing their values.
func parseKeyed(data []byte, keys ...string) (map[string]uint64, error) {
	out := make(map[string]uint64, len(keys))
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		k, v, ok := bytes.Cut(line, []byte{' '})
		if !ok {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			return nil, fmt.Errorf("line %q is not \"key value\"", line)
		}
		for _, want := range keys {
			if string(k) != want {
				continue
			}
			n, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("key %s: not a number: %q", want, v)
			}
			out[want] = n
			break
		}
	}
	return out, nil
}

// parseMeminfo reads /proc/meminfo's fields asked for, in bytes (the file
// gives kB).
func parseMeminfo(data []byte, keys ...string) (map[string]uint64, error) {
	out := make(map[string]uint64, len(keys))
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		name := strings.TrimSuffix(f[0], ":")
		for _, want := range keys {
			if name != want {
				continue
			}
			n, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("meminfo %s: not a number: %q", name, f[1])
			}
			if len(f) >= 3 && f[2] == "kB" {
				n *= 1024
			}
			out[name] = n
		}
	}
	return out, sc.Err()
}

// cgroupMounts is where the cgroup hierarchies this package reads are
// mounted.
type cgroupMounts struct {
	// Unified is cgroup v2's mount point ("" when none).
	Unified string
	// CPUAcct and Memory are the v1 hierarchies holding those controllers
	// ("" when none; both may be one mount, e.g. a "cpu,cpuacct" one only
	// holds CPUAcct).
	CPUAcct, Memory string
}

// parseMountinfo finds the cgroup mounts in a /proc/self/mountinfo
// (proc(5)): field 5 is the mount point, then optional fields up to "-",
// then the filesystem type and source, then the super options, which name
// a v1 hierarchy's controllers. The first mount of each kind wins.
func parseMountinfo(data []byte) (cgroupMounts, error) {
	var m cgroupMounts
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := -1
		for i, x := range f {
			if x == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || len(f) < sep+4 {
			continue
		}
		point, fstype, super := unescapeMount(f[4]), f[sep+1], f[sep+3]
		switch fstype {
		case "cgroup2":
			if m.Unified == "" {
				m.Unified = point
			}
		case "cgroup":
			for _, opt := range strings.Split(super, ",") {
				switch {
				case opt == "cpuacct" && m.CPUAcct == "":
					m.CPUAcct = point
				case opt == "memory" && m.Memory == "":
					m.Memory = point
				}
			}
		}
	}
	return m, sc.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space …).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// parseBootTime reads btime (seconds since the epoch) from /proc/stat.
func parseBootTime(data []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "btime" {
			return strconv.ParseInt(f[1], 10, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no btime line")
}
