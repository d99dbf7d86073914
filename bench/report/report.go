// Package report prints the benchmark tables (Markdown, so they paste into
// BENCHMARKS.md), computes percentiles, describes the machine and draws
// latency CDFs as SVG.
package report

import (
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Table is a Markdown table.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
	Notes  []string
}

// Add appends a row; values are formatted with %v.
func (t *Table) Add(cells ...any) {
	row := make([]string, len(cells))
	for i, c := range cells {
		row[i] = fmt.Sprint(c)
	}
	t.Rows = append(t.Rows, row)
}

// Write prints t as an aligned Markdown table, its title as a heading
// and its notes under it.
func (t *Table) Write(w io.Writer) {
	width := make([]int, len(t.Header))
	for i, h := range t.Header {
		width[i] = len(h)
	}
	for _, r := range t.Rows {
		for i, c := range r {
			if i < len(width) && len(c) > width[i] {
				width[i] = len(c)
			}
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		b.WriteString("|")
		for i := range width {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			if i == 0 {
				fmt.Fprintf(&b, " %-*s |", width[i], c)
			} else {
				fmt.Fprintf(&b, " %*s |", width[i], c)
			}
		}
		fmt.Fprintln(w, b.String())
	}
	if t.Title != "" {
		fmt.Fprintf(w, "\n### %s\n\n", t.Title)
	}
	line(t.Header)
	sep := make([]string, len(width))
	for i := range width {
		if i == 0 {
			sep[i] = strings.Repeat("-", width[i])
		} else {
			sep[i] = strings.Repeat("-", width[i]-1) + ":"
		}
	}
	fmt.Fprintln(w, "|"+strings.Join(func() []string {
		out := make([]string, len(sep))
		for i, s := range sep {
			out[i] = " " + s + " "
		}
		return out
	}(), "|")+"|")
	for _, r := range t.Rows {
		line(r)
	}
	for _, n := range t.Notes {
		fmt.Fprintf(w, "\n%s\n", n)
	}
}

// Percentile returns the p-th percentile (0..100) of xs by the
// nearest-rank method; NaN for no values. xs is not modified.
func Percentile(xs []time.Duration, p float64) time.Duration {
	if len(xs) == 0 {
		return -1
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}

// Ms formats d in milliseconds with enough precision to read.
func Ms(d time.Duration) string {
	if d < 0 {
		return "n/a"
	}
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 2, 64) + " ms"
	case ms < 100:
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	default:
		return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
	}
}

// Ratio formats a/b as "1.23×".
func Ratio(a, b float64) string {
	if b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return "n/a"
	}
	return strconv.FormatFloat(a/b, 'f', 2, 64) + "×"
}

// Load returns the 1-minute load average ("?" when unknown).
func Load() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

// Machine describes this machine: CPUs, memory, kernel, Docker and Go.
func Machine() []string {
	out := []string{fmt.Sprintf("CPUs: %d (nproc), %s", runtime.NumCPU(), cpuModel())}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "MemTotal:") {
				f := strings.Fields(l)
				if kb, err := strconv.ParseFloat(f[1], 64); err == nil {
					out = append(out, fmt.Sprintf("memory: %.1f GiB", kb/1024/1024))
				}
			}
		}
	}
	if b, err := exec.Command("uname", "-srm").Output(); err == nil {
		out = append(out, "kernel: "+strings.TrimSpace(string(b)))
	}
	if b, err := exec.Command("docker", "version", "--format", "{{.Server.Version}} (API {{.Server.APIVersion}})").Output(); err == nil {
		out = append(out, "Docker Engine: "+strings.TrimSpace(string(b)))
	} else {
		out = append(out, "Docker Engine: unavailable")
	}
	out = append(out, "Go: "+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH)
	out = append(out, "load average at start: "+Load())
	return out
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "model name") {
			if i := strings.Index(l, ":"); i >= 0 {
				return strings.TrimSpace(l[i+1:])
			}
		}
	}
	return "unknown CPU"
}
