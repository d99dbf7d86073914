package stats

import (
	"testing"
	"time"
)

func TestRateBase(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	s := func(sec float64, ns uint64) cpuSample { return cpuSample{At: at(sec), Nanos: ns} }
	for _, tc := range []struct {
		name    string
		h       cpuHistory
		started time.Time
		cur     cpuSample
		want    cpuSample
		ok      bool
	}{
		{"last sample old enough", cpuHistory{Prev: s(0, 0), Last: s(10, 5e9)}, time.Time{}, s(15, 10e9), s(10, 5e9), true},
		{"last too recent: the one before", cpuHistory{Prev: s(0, 0), Last: s(10, 5e9)}, time.Time{}, s(10.5, 5.5e9), s(0, 0), true},
		{"exactly the minimum window", cpuHistory{Last: s(9, 1)}, time.Time{}, s(10, 2), s(9, 1), true},
		{"no sample: the container's start", cpuHistory{}, at(2), s(5, 3e9), cpuSample{At: at(2)}, true},
		{"only a recent sample: the start", cpuHistory{Last: s(4.5, 1)}, at(2), s(5, 3e9), cpuSample{At: at(2)}, true},
		{"nothing at least 1 s old", cpuHistory{Last: s(4.5, 1)}, at(4.2), s(5, 3e9), cpuSample{}, false},
		{"a counter that went back (a new cgroup under the same key) is no base", cpuHistory{Last: s(0, 9e9)}, time.Time{}, s(5, 1e9), cpuSample{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := rateBase(tc.h, tc.started, tc.cur, time.Second)
			if ok != tc.ok || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestNanoCores(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		base, cur cpuSample
		want      uint64
	}{
		{"one core busy for 10 s", cpuSample{t0, 0}, cpuSample{t0.Add(10 * time.Second), 10e9}, 1e9},
		{"a quarter core", cpuSample{t0, 1e9}, cpuSample{t0.Add(4 * time.Second), 2e9}, 250e6},
		{"an hour of two cores: no overflow", cpuSample{t0, 0}, cpuSample{t0.Add(time.Hour), 7200e9}, 2e9},
		{"idle", cpuSample{t0, 5}, cpuSample{t0.Add(time.Second), 5}, 0},
		{"no time passed", cpuSample{t0, 0}, cpuSample{t0, 5}, 0},
		{"counter went back", cpuSample{t0, 9}, cpuSample{t0.Add(time.Second), 5}, 0},
	} {
		if got := nanoCores(tc.base, tc.cur); got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, got, tc.want)
		}
	}
}
