package stats

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseUint(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    uint64
		limited bool
		err     bool
	}{
		{"93162657\n", 93162657, true, false},
		{"9223372036854771712\n", 9223372036854771712, true, false}, // v1 "no limit"
		{"max\n", 0, false, false},                                  // v2 "no limit"
		{"0", 0, true, false},
		{"", 0, false, true},
		{"-1\n", 0, false, true},
		{"12 34\n", 0, false, true},
	} {
		got, limited, err := parseUint([]byte(tc.in))
		if (err != nil) != tc.err || got != tc.want || limited != tc.limited {
			t.Errorf("parseUint(%q) = %d, %v, %v; want %d, %v, error %v", tc.in, got, limited, err, tc.want, tc.limited, tc.err)
		}
	}
}

func TestParseKeyed(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		keys []string
		want map[string]uint64
		err  string
	}{
		{"v1 memory.stat", "cache 4694016\nrss 970752\ntotal_rss 970752\ntotal_inactive_file 4694016\n",
			[]string{"total_rss", "total_inactive_file", "total_pgfault"},
			map[string]uint64{"total_rss": 970752, "total_inactive_file": 4694016}, ""},
		{"v2 cpu.stat", "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n",
			[]string{"usage_usec"}, map[string]uint64{"usage_usec": 2500000}, ""},
		{"no trailing newline, blank line", "a 1\n\nb 2", []string{"a", "b"}, map[string]uint64{"a": 1, "b": 2}, ""},
		{"bad value of a wanted key", "usage_usec lots\n", []string{"usage_usec"}, nil, "key usage_usec: not a number"},
		{"bad value of another key is skipped", "weird x\nusage_usec 5\n", []string{"usage_usec"}, map[string]uint64{"usage_usec": 5}, ""},
		{"not key value", "garbage\n", []string{"a"}, nil, `line "garbage"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseKeyed([]byte(tc.in), tc.keys...)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestParseMeminfo(t *testing.T) {
	in := "MemTotal:       24683548 kB\nMemFree:        21303128 kB\nInactive(file):   878476 kB\nHugePages_Total:       0\n"
	got, err := parseMeminfo([]byte(in), "MemTotal", "Inactive(file)", "HugePages_Total", "Absent")
	want := map[string]uint64{"MemTotal": 24683548 * 1024, "Inactive(file)": 878476 * 1024, "HugePages_Total": 0}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, %v; want %v", got, err, want)
	}
	if _, err := parseMeminfo([]byte("MemTotal: x kB\n"), "MemTotal"); err == nil {
		t.Fatal("a bad number parsed")
	}
}

func TestParseMountinfo(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want cgroupMounts
	}{
		{"hybrid (this project's CI machine)", `30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
32 30 0:29 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`, cgroupMounts{Unified: "/sys/fs/cgroup/unified", CPUAcct: "/sys/fs/cgroup/cpuacct", Memory: "/sys/fs/cgroup/memory"}},
		{"v1 with cpu,cpuacct together and optional fields", `25 24 0:22 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:9 - cgroup cgroup rw,cpu,cpuacct
26 24 0:23 / /sys/fs/cgroup/memory rw,nosuid shared:10 master:3 - cgroup cgroup rw,memory
`, cgroupMounts{CPUAcct: "/sys/fs/cgroup/cpu,cpuacct", Memory: "/sys/fs/cgroup/memory"}},
		{"unified only", `26 25 0:24 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:8 - cgroup2 cgroup2 rw,nsdelegate
`, cgroupMounts{Unified: "/sys/fs/cgroup"}},
		{"escaped mount point; the first of each kind wins", `26 25 0:24 / /mnt/my\040cgroup rw - cgroup2 cgroup2 rw
27 25 0:25 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw
`, cgroupMounts{Unified: "/mnt/my cgroup"}},
		{"no cgroup; short and malformed lines skipped", "22 1 259:1 / / rw - ext4 /dev/root rw\nshort line\n", cgroupMounts{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseMountinfo([]byte(tc.in))
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestParseBootTime(t *testing.T) {
	got, err := parseBootTime([]byte("cpu  1 2 3\nbtime 1796162702\nprocesses 5\n"))
	if err != nil || got != 1796162702 {
		t.Fatalf("got %d, %v", got, err)
	}
	if _, err := parseBootTime([]byte("cpu 1\n")); err == nil {
		t.Fatal("no btime parsed")
	}
}

func TestWorkingSet(t *testing.T) {
	for _, tc := range []struct{ usage, inactive, want uint64 }{
		{10485760, 4694016, 5791744},
		{100, 100, 0},
		{100, 200, 0}, // inactive_file can briefly exceed usage: never below 0
	} {
		if got := workingSet(tc.usage, tc.inactive); got != tc.want {
			t.Errorf("workingSet(%d, %d) = %d, want %d", tc.usage, tc.inactive, got, tc.want)
		}
	}
}
