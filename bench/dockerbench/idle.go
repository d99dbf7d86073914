package dockerbench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// Idle is the idle CPU of one agent run.
type Idle struct {
	Events  bool
	Window  time.Duration
	CPU     time.Duration // utime + stime of the agent over Window
	Relists float64       // PLEG relists over Window, from its /metrics
	Pods    int
}

// Percent is the agent's CPU as a percentage of one core.
func (i Idle) Percent() float64 { return 100 * i.CPU.Seconds() / i.Window.Seconds() }

// IdleOptions of IdleCPU.
type IdleOptions struct {
	Pods   int
	Window time.Duration // measured interval
	Settle time.Duration // wait after the pods run, before measuring
	// ProfileDir, when set: the agents run with --enable-pprof and a CPU
	// profile of each window is saved there (the profiling costs CPU too).
	ProfileDir string
}

// IdleCPU builds the actorlet binary, runs it on opts.Pods manifests
// (sandbox + one sleeping testworkload container each) until they all run,
// and measures its CPU (utime + stime from /proc/<pid>/stat) over
// opts.Window, first with Docker's event stream (the default), then — after
// a SIGTERM, which leaves the pods running, and a restart of the agent on
// the same node, which adopts them — with --runtime-events=false.
func (e *Env) IdleCPU(opts IdleOptions) ([]Idle, error) {
	dir, err := os.MkdirTemp("", "actorlet-bench-idle-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin, err := buildAgent(dir)
	if err != nil {
		return nil, err
	}
	manifests := filepath.Join(dir, "manifests")
	if err := os.Mkdir(manifests, 0o755); err != nil {
		return nil, err
	}
	for i := range opts.Pods {
		y := fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: idle-%d\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n  - name: app\n    image: %s\n", i, testimages.TestWorkloadTag)
		if err := os.WriteFile(filepath.Join(manifests, fmt.Sprintf("idle-%d.yaml", i)), []byte(y), 0o644); err != nil {
			return nil, err
		}
	}
	name := NodeName("idle")
	defer e.CleanupNode(name)
	root := filepath.Join(dir, "root")

	var out []Idle
	for _, events := range []bool{true, false} {
		args := []string{"run", "--manifests", manifests, "--node-name", name, "--root-dir", root,
			"--port", "0", "--log-format", "json", "--runtime-events=" + strconv.FormatBool(events)}
		if opts.ProfileDir != "" {
			args = append(args, "--enable-pprof")
		}
		a, err := startAgent(bin, args, filepath.Join(dir, fmt.Sprintf("agent-events-%v.log", events)))
		if err != nil {
			return out, err
		}
		r, err := e.measureIdle(a, name, events, opts)
		a.stop()
		if err != nil {
			return out, fmt.Errorf("%w (agent log: %s)", err, a.tail())
		}
		out = append(out, r)
	}
	return out, nil
}

func (e *Env) measureIdle(a *agent, node string, events bool, opts IdleOptions) (Idle, error) {
	r := Idle{Events: events, Window: opts.Window, Pods: opts.Pods}
	addr, err := a.apiAddr(30 * time.Second)
	if err != nil {
		return r, err
	}
	// Every sandbox and app container running.
	deadline := time.Now().Add(4 * time.Minute)
	for {
		n, total, err := e.countRunning(node)
		if err != nil {
			return r, err
		}
		if n == 2*opts.Pods {
			if total != n {
				e.logf("idle: %d containers of node %s exist, %d running", total, node, n)
			}
			break
		}
		if time.Now().After(deadline) {
			return r, fmt.Errorf("idle: %d of %d containers running after 4 min", n, 2*opts.Pods)
		}
		if a.exited() {
			return r, fmt.Errorf("idle: the agent exited")
		}
		time.Sleep(time.Second)
	}
	e.logf("idle (events %v): %d pods running; settling %s, then measuring %s (load %s)", events, opts.Pods, opts.Settle, opts.Window, loadavg())
	time.Sleep(opts.Settle)

	relists0, _ := relistCount(addr)
	var prof []byte
	var wg sync.WaitGroup
	if opts.ProfileDir != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			prof, _ = httpGet(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(opts.Window.Seconds())), opts.Window+30*time.Second)
		}()
	}
	c0, err := procCPU(a.cmd.Process.Pid)
	if err != nil {
		return r, err
	}
	t0 := time.Now()
	time.Sleep(opts.Window)
	c1, err := procCPU(a.cmd.Process.Pid)
	if err != nil {
		return r, err
	}
	r.Window, r.CPU = time.Since(t0), c1-c0
	wg.Wait()
	relists1, _ := relistCount(addr)
	r.Relists = relists1 - relists0
	if prof != nil {
		_ = os.WriteFile(filepath.Join(opts.ProfileDir, fmt.Sprintf("idle-cpu-events-%v.pprof", events)), prof, 0o644)
	}
	if n, total, err := e.countRunning(node); err == nil && (n != 2*opts.Pods || total != n) {
		e.logf("idle: after the window %d of %d containers run (%d exist)", n, 2*opts.Pods, total)
	}
	return r, nil
}

// countRunning returns the running and all containers of node.
func (e *Env) countRunning(node string) (running, total int, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := e.Cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", runtimeadapter.LabelNode+"="+node))})
	if err != nil {
		return 0, 0, err
	}
	for _, c := range list {
		if c.State == "running" {
			running++
		}
	}
	return running, len(list), nil
}

// buildAgent builds ./cmd/actorlet into dir.
func buildAgent(dir string) (string, error) {
	root, err := testimages.ModuleRoot()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := filepath.Join(dir, "actorlet")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/actorlet")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/actorlet: %w\n%s", err, out)
	}
	return bin, nil
}

// agent is one `actorlet run` process, its output in a file.
type agent struct {
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
}

func startAgent(bin string, args []string, logPath string) (*agent, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	a := &agent{cmd: exec.Command(bin, args...), logPath: logPath, done: make(chan struct{})}
	a.cmd.Stdout, a.cmd.Stderr = f, f
	if err := a.cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	go func() {
		_ = a.cmd.Wait()
		f.Close()
		close(a.done)
	}()
	return a, nil
}

func (a *agent) exited() bool {
	select {
	case <-a.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM (the agent leaves its pods running) and waits up to
// 15 s, then SIGKILLs it.
func (a *agent) stop() {
	if a.exited() {
		return
	}
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.done:
	case <-time.After(15 * time.Second):
		_ = a.cmd.Process.Kill()
		select {
		case <-a.done:
		case <-time.After(10 * time.Second):
		}
	}
}

// apiAddr waits for the agent's "actorlet running" log line and returns
// its API address.
func (a *agent) apiAddr(timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(a.logPath); err == nil {
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				var l map[string]any
				if json.Unmarshal(sc.Bytes(), &l) == nil && l["msg"] == "actorlet running" {
					if s, ok := l["api"].(string); ok && s != "" {
						return s, nil
					}
				}
			}
		}
		if a.exited() {
			return "", fmt.Errorf("agent exited")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "", fmt.Errorf("agent did not log its API address within %s", timeout)
}

// tail returns the end of the agent's log.
func (a *agent) tail() string {
	b, _ := os.ReadFile(a.logPath)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// procCPU returns utime + stime of pid, all threads, from /proc/<pid>/stat.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	// After the command: state(3) ppid(4) ... utime(14) stime(15).
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad utime/stime", pid)
	}
	return time.Duration(ut+st) * time.Second / time.Duration(clockTicks()), nil
}

var ticksOnce = sync.OnceValue(func() int64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return 100
})

func clockTicks() int64 { return ticksOnce() }

// relistCount reads actorlet_pleg_relist_duration_seconds_count from the
// agent's /metrics.
func relistCount(addr string) (float64, error) {
	b, err := httpGet("http://"+addr+"/metrics", 10*time.Second)
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "actorlet_pleg_relist_duration_seconds_count") {
			f := strings.Fields(l)
			return strconv.ParseFloat(f[len(f)-1], 64)
		}
	}
	return 0, fmt.Errorf("no relist count in /metrics")
}

func httpGet(url string, timeout time.Duration) ([]byte, error) {
	c := &http.Client{Timeout: timeout}
	resp, err := c.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}
