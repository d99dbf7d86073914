package stats

import "time"

// cpuSample is a cgroup's cumulative CPU time at an instant.
type cpuSample struct {
	At    time.Time
	Nanos uint64
}

// cpuHistory is what the sampler kept of one cgroup: its two newest
// samples (Prev older than Last; zero when not taken).
type cpuHistory struct {
	Prev, Last cpuSample
}

// add records s as the newest sample.
func (h cpuHistory) add(s cpuSample) cpuHistory {
	return cpuHistory{Prev: h.Last, Last: s}
}

// rateBase picks the sample a read at cur is compared with to give a CPU
// rate, as cAdvisor derives usageNanoCores from two samples: the newest
// kept sample at least minWindow older than cur; failing that, the
// container's start (a new cgroup starts at 0 ns), when started is at
// least minWindow before cur. ok is false when there is none: a rate over
// less than minWindow says little, and the kubelet leaves it out too.
func rateBase(h cpuHistory, started time.Time, cur cpuSample, minWindow time.Duration) (base cpuSample, ok bool) {
	for _, s := range []cpuSample{h.Last, h.Prev} {
		if !s.At.IsZero() && cur.At.Sub(s.At) >= minWindow && s.Nanos <= cur.Nanos {
			return s, true
		}
	}
	if !started.IsZero() && cur.At.Sub(started) >= minWindow {
		return cpuSample{At: started}, true
	}
	return cpuSample{}, false
}

// nanoCores is the mean CPU use between base and cur in nanocores
// (1e9 = one core busy), rounded down.
func nanoCores(base, cur cpuSample) uint64 {
	d := cur.At.Sub(base.At)
	if d <= 0 || cur.Nanos < base.Nanos {
		return 0
	}
	// core-ns / ns × 1e9, in float: core-ns × 1e9 overflows uint64 after
	// about 18 s of one core.
	return uint64(float64(cur.Nanos-base.Nanos) / float64(d) * 1e9)
}
