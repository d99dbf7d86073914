package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/actorlet/actorlet/test/support/testimages"
)

// /stats/summary against what two containers are known to do: "burner"
// spins one thread (one CPU busy), "hog" writes 200 MiB and holds it.
//
// Tolerances, and why:
//   - burner's usageNanoCores is at most 1.1 cores in every answer: one
//     thread cannot use more than one core; the window (1–2 s with
//     --stats-interval 1s) is timed at the reads, a millisecond or less
//     from the cgroup reads, so 10% is a wide margin for that skew.
//   - it is not held to "one core" from below: the CI machine has 2 CPUs
//     shared with other tests (load averages of 15 were seen), and the
//     thread then gets a third of a core. What it gets is measured
//     independently, from the kernel's per-process accounting
//     (/proc/<pid>/stat utime+stime of the burner's process): the summary's
//     usageCoreNanoSeconds must match it within 10% + 50 ms (clock ticks
//     are 10 ms), and usageNanoCores must reach at least half of the
//     process's mean rate since its start and ten times the idle hog's.
//   - its usageCoreNanoSeconds never exceeds the time since it started
//     (one thread), plus 0.1 s for the runtime's own start-up threads.
//   - hog's working set is 200–240 MiB: 200 MiB of written anonymous pages
//     (all resident, none reclaimable), plus the Go runtime and the
//     binary's page cache (a few MiB; inactive file pages are not
//     counted). Its rssBytes is at least 200 MiB, its usageBytes at least
//     its working set.
func TestStatsSummary(t *testing.T) {
	e := newEnv(t, "e2e-stats")
	e.agentArgs = []string{"--stats-interval", "1s"}
	for name, env := range map[string]string{"burner": "TW_BURN_CPU", "hog": "TW_ALLOC_MIB"} {
		val := "1"
		if name == "hog" {
			val = "200"
		}
		e.writeManifest(name+".yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: %s
    env:
    - {name: %s, value: "%s"}
`, name, testimages.TestWorkloadTag, env, val))
	}
	a := e.startAgent("agent")
	addr := a.waitLog(30*time.Second, "actorlet running").str("api")
	base := "http://" + addr
	client := &http.Client{Timeout: 10 * time.Second}
	burnerPID := 0
	for _, c := range e.waitPodRunning(a, "burner", "app").running("app") {
		in, _ := e.inspect(c.ID)
		burnerPID = in.State.Pid
	}
	e.waitPodRunning(a, "hog", "app")

	const mib = 1 << 20
	var last statsapi.Summary
	eventually(t, 30*time.Second, "burner measured busy (as its process) and hog holding its 200 MiB in /stats/summary", func() (bool, string) {
		var s statsapi.Summary
		if err := getJSON(client, base+"/stats/summary", &s); err != nil {
			return false, err.Error()
		}
		last = s
		burner, hog := statsContainer(s, "burner", "app"), statsContainer(s, "hog", "app")
		if burner == nil || hog == nil || burner.CPU.UsageNanoCores == nil || hog.CPU.UsageNanoCores == nil {
			return false, fmt.Sprintf("not both measured yet: %s", describeSummary(s))
		}
		// Bounds that hold in every answer.
		if n := *burner.CPU.UsageNanoCores; n > 1.1e9 {
			t.Fatalf("burner at %d nanocores: more than one thread can use", n)
		}
		// The two times come in whole seconds (metav1.Time's JSON), each
		// cut down: the span between them is short by less than 1 s.
		if ran := burner.CPU.Time.Sub(burner.StartTime.Time); float64(*burner.CPU.UsageCoreNanoSeconds) > float64(ran)+1.1e9 {
			t.Fatalf("burner used %d core-ns in the %v since its start (both times in whole seconds)", *burner.CPU.UsageCoreNanoSeconds, ran)
		}
		ws := *hog.Memory.WorkingSetBytes
		if ws > 240*mib {
			t.Fatalf("hog working set %d MiB: more than 240", ws/mib)
		}
		procNs, procStart := procCPU(t, burnerPID)
		cum := float64(*burner.CPU.UsageCoreNanoSeconds)
		if d := procNs - cum; d > 0.1*procNs+50e6 || -d > 0.1*procNs+50e6 {
			t.Fatalf("burner: usageCoreNanoSeconds %.0f, its process's utime+stime %.0f ns: more than 10%% + 50 ms apart", cum, procNs)
		}
		mean := procNs / float64(time.Since(procStart))
		rate, hogRate := float64(*burner.CPU.UsageNanoCores), float64(*hog.CPU.UsageNanoCores)
		ok := ws >= 200*mib && rate >= 0.5*mean*1e9 && rate >= 10*hogRate && rate >= 0.1e9
		return ok, fmt.Sprintf("burner's process: %.0fm mean since start; %s", mean*1000, describeSummary(s))
	})
	hog := statsContainer(last, "hog", "app")
	if *hog.Memory.RSSBytes < 200*mib || *hog.Memory.UsageBytes < *hog.Memory.WorkingSetBytes {
		t.Errorf("hog memory %s", describeMem(hog.Memory))
	}
	for _, p := range last.Pods {
		c := p.Containers[0]
		if p.PodRef.UID == "" || *p.Memory.WorkingSetBytes < *c.Memory.WorkingSetBytes || *p.CPU.UsageCoreNanoSeconds < *c.CPU.UsageCoreNanoSeconds {
			t.Errorf("pod %s (%s) does not add up its containers: pod %s, cpu %d; app %s, cpu %d", p.PodRef.Name, p.PodRef.UID,
				describeMem(p.Memory), *p.CPU.UsageCoreNanoSeconds, describeMem(c.Memory), *c.CPU.UsageCoreNanoSeconds)
		}
	}
	if n := last.Node; n.NodeName != e.node || n.CPU == nil || n.Memory == nil || *n.Memory.WorkingSetBytes < 200*mib || n.Fs == nil {
		t.Errorf("node stats %+v", n)
	}

	// /metrics/resource: the same numbers under the kubelet's names.
	r, err := client.Get(base + "/metrics/resource")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	hogWS := metricValue(t, string(body), `container_memory_working_set_bytes{container="app",namespace="default",pod="hog"}`)
	if hogWS < 200*mib || hogWS > 240*mib {
		t.Errorf("container_memory_working_set_bytes of hog %v", hogWS)
	}
	if v := metricValue(t, string(body), `container_cpu_usage_seconds_total{container="app",namespace="default",pod="burner"}`); v <= 0 {
		t.Errorf("container_cpu_usage_seconds_total of burner %v", v)
	}
	for _, name := range []string{"node_cpu_usage_seconds_total ", "node_memory_working_set_bytes ", `pod_cpu_usage_seconds_total{namespace="default",pod="burner"}`,
		`pod_memory_working_set_bytes{namespace="default",pod="hog"}`, `container_start_time_seconds{container="app",namespace="default",pod="hog"}`, "resource_scrape_error 0"} {
		if !strings.Contains(string(body), "\n"+name) {
			t.Errorf("/metrics/resource has no %s:\n%s", name, body)
		}
	}

	// actorlet top pods and top node print them as kubectl top.
	out, err := exec.Command(actorletBinary(t), "top", "pods", "--server", base).CombinedOutput()
	if err != nil {
		t.Fatalf("actorlet top pods: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "NAME CPU(cores) MEMORY(bytes)" {
		t.Fatalf("actorlet top pods:\n%s", out)
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		milli, _ := strconv.Atoi(strings.TrimSuffix(f[1], "m"))
		mi, _ := strconv.Atoi(strings.TrimSuffix(f[2], "Mi"))
		if (f[0] == "burner" && milli < 100) || (f[0] == "hog" && (mi < 200 || mi > 240)) {
			t.Errorf("actorlet top pods: %q", l)
		}
	}
	out, err = exec.Command(actorletBinary(t), "top", "node", "--server", base).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "NAME") || !strings.Contains(string(out), e.node) {
		t.Fatalf("actorlet top node: %v\n%s", err, out)
	}
}

func statsContainer(s statsapi.Summary, pod, name string) *statsapi.ContainerStats {
	for _, p := range s.Pods {
		if p.PodRef.Name != pod {
			continue
		}
		for i := range p.Containers {
			if c := &p.Containers[i]; c.Name == name && c.CPU != nil && c.Memory != nil {
				return c
			}
		}
	}
	return nil
}

func describeMem(m *statsapi.MemoryStats) string {
	v := func(p *uint64) string {
		if p == nil {
			return "-"
		}
		return strconv.FormatUint(*p>>20, 10) + "Mi"
	}
	return fmt.Sprintf("usage %s ws %s rss %s", v(m.UsageBytes), v(m.WorkingSetBytes), v(m.RSSBytes))
}

func describeSummary(s statsapi.Summary) string {
	var b strings.Builder
	for _, p := range s.Pods {
		for _, c := range p.Containers {
			rate := "-"
			if c.CPU != nil && c.CPU.UsageNanoCores != nil {
				rate = strconv.FormatUint(*c.CPU.UsageNanoCores/1e6, 10) + "m"
			}
			fmt.Fprintf(&b, "%s/%s cpu %s %s; ", p.PodRef.Name, c.Name, rate, describeMem(c.Memory))
		}
	}
	return b.String()
}

// metricValue is the value of the series named (with its labels) in a
// Prometheus text exposition.
func metricValue(t *testing.T, body, series string) float64 {
	t.Helper()
	for line := range strings.Lines(body) {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return v
		}
	}
	t.Fatalf("no series %s in:\n%s", series, body)
	return 0
}

// procCPU is a process's CPU time (utime + stime of /proc/<pid>/stat, in
// ns) and its start, from the kernel's per-process accounting.
func procCPU(t *testing.T, pid int) (float64, time.Time) {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("burner's process: %v", err)
	}
	// Fields after the command's closing parenthesis: state is field 3,
	// utime 14, stime 15, starttime 22 (proc(5)).
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	startTicks, _ := strconv.ParseFloat(f[19], 64)
	const tick = 1e7 // ns per clock tick: USER_HZ is 100 on Linux
	boot := bootTime(t)
	return (utime + stime) * tick, boot.Add(time.Duration(startTicks * tick))
}

// bootTime is the host's boot time (btime of /proc/stat).
func bootTime(t *testing.T) time.Time {
	t.Helper()
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			sec, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return time.Unix(sec, 0)
		}
	}
	t.Fatal("no btime in /proc/stat")
	return time.Time{}
}
