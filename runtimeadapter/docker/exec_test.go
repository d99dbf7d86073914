package docker_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// execSlack is how late past its timeout a timed-out Exec may return: the
// kill needs an exec inspect and the daemon may be busy with parallel
// tests.
const execSlack = 3 * time.Second

func TestExecResults(t *testing.T) {
	f := newFixture(t)
	id := f.run(f.spec("app"))

	tests := []struct {
		name     string
		cmd      []string
		wantCode int
		wantOut  []string // substrings of the output
	}{
		{"exit 1", []string{"/testworkload", "check", "--file", "/probe-ok"}, 1, nil},
		{"exit 0", []string{"/testworkload", "touch", "--file", "/probe-ok"}, 0, nil},
		{"exit 0 after touch", []string{"/testworkload", "check", "--file", "/probe-ok"}, 0, nil},
		{"stdout", []string{"/testworkload", "--exit-after", "1ms"}, 0, []string{"testworkload: started", "testworkload: exiting 0"}},
		{"stderr", []string{"/testworkload", "touch", "--file", "/no/such/dir/x"}, 1, []string{"no such file or directory"}},
		{"exit code kept", []string{"/testworkload", "--exit-after", "1ms", "--exit-code", "7"}, 7, []string{"exiting 7"}},
		{"missing executable", []string{"/no-such-binary"}, 126, []string{"no-such-binary"}},
	}
	for _, tt := range tests { // in order: the touch comes before the second check
		res, err := f.rt.Exec(f.ctx, id, tt.cmd, 10*time.Second)
		if err != nil {
			t.Fatalf("%s: Exec(%q): %v", tt.name, tt.cmd, err)
		}
		if res.ExitCode != tt.wantCode {
			t.Errorf("%s: exit code %d, want %d (output %q)", tt.name, res.ExitCode, tt.wantCode, res.Output)
		}
		for _, w := range tt.wantOut {
			if !bytes.Contains(res.Output, []byte(w)) {
				t.Errorf("%s: output %q lacks %q", tt.name, res.Output, w)
			}
		}
	}
}

func TestExecOutputCapped(t *testing.T) {
	f := newFixture(t)
	id := f.run(f.spec("app"))
	// Prints a line every 100 µs (at least every few ms) for 1 s: far more
	// than the cap.
	res, err := f.rt.Exec(f.ctx, id, []string{"/testworkload", "--log-every", "100us", "--exit-after", "1s"}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || len(res.Output) != runtimeadapter.MaxExecOutput {
		t.Fatalf("exit code %d, %d bytes of output; want 0 and %d bytes", res.ExitCode, len(res.Output), runtimeadapter.MaxExecOutput)
	}
	if !bytes.HasPrefix(res.Output, []byte("testworkload: started")) {
		t.Errorf("output does not start with the first line: %q", res.Output[:40])
	}
}

// TestExecTimeoutKills checks that a hung command makes Exec return at its
// timeout (or when ctx is cancelled) and is killed, while the container
// keeps running.
func TestExecTimeoutKills(t *testing.T) {
	for _, byCancel := range []bool{false, true} {
		name := "timeout"
		if byCancel {
			name = "context cancelled"
		}
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			id := f.run(f.spec("app"))
			marker := "--exit-after=" + strconv.Itoa(100+int(time.Now().UnixNano()%1000)) + "s"
			cmd := []string{"/testworkload", marker, "--log-every", "1h"}

			ctx, cancel := context.WithCancel(f.ctx)
			defer cancel()
			timeout := 2 * time.Second // long enough for the first line on a loaded machine
			if byCancel {
				timeout = time.Minute
			}
			type outcome struct {
				res runtimeadapter.ExecResult
				err error
				at  time.Time
			}
			done := make(chan outcome, 1)
			start := time.Now()
			go func() {
				res, err := f.rt.Exec(ctx, id, cmd, timeout)
				done <- outcome{res, err, time.Now()}
			}()

			var pid int
			eventually(t, 10*time.Second, "the exec'd process to show up", func() bool {
				pid = findProcess(t, id, cmd)
				return pid > 0
			})
			if byCancel {
				cancel()
			}
			o := <-done
			if byCancel {
				if !errors.Is(o.err, context.Canceled) {
					t.Fatalf("Exec error %v, want one wrapping context.Canceled", o.err)
				}
			} else {
				if !errors.Is(o.err, runtimeadapter.ErrExecTimeout) {
					t.Fatalf("Exec error %v, want one wrapping ErrExecTimeout", o.err)
				}
				if took := o.at.Sub(start); took < timeout || took > timeout+execSlack {
					t.Errorf("Exec returned after %v, want within [%v, %v]", took, timeout, timeout+execSlack)
				}
			}
			if strings.Contains(o.err.Error(), "may still be running") {
				t.Errorf("Exec could not kill the command: %v", o.err)
			}
			if o.res.ExitCode != -1 {
				t.Errorf("exit code %d, want -1", o.res.ExitCode)
			}
			// (A cancel right after the process appeared may beat its first
			// line, so only the timeout case checks the output.)
			if !byCancel && !bytes.Contains(o.res.Output, []byte("testworkload: started")) {
				t.Errorf("output read before the timeout lost: %q", o.res.Output)
			}
			eventually(t, 5*time.Second, "the hung process to be gone", func() bool { return !processAlive(pid) })

			c, err := f.rt.Inspect(f.ctx, id)
			if err != nil || c.State != runtimeadapter.StateRunning {
				t.Errorf("container after the kill: %+v, %v; want it still running", c, err)
			}
			// The container still runs commands.
			if res, err := f.rt.Exec(f.ctx, id, []string{"/testworkload", "check", "--file", "/"}, 10*time.Second); err != nil || res.ExitCode != 0 {
				t.Errorf("exec after the kill: %+v, %v", res, err)
			}
		})
	}
}

func TestExecErrors(t *testing.T) {
	f := newFixture(t)
	cmd := []string{"/testworkload", "check", "--file", "/"}

	_, err := f.rt.Exec(f.ctx, "actorlet-no-such-container-"+f.uid, cmd, time.Second)
	if !errors.Is(err, runtimeadapter.ErrNotFound) {
		t.Errorf("missing container: %v, want ErrNotFound", err)
	}

	created, err := f.rt.Create(f.ctx, f.spec("created"))
	if err != nil {
		t.Fatal(err)
	}
	exited := f.run(f.spec("exited", "--exit-after", "1ms"))
	eventually(t, 10*time.Second, "the container to exit", func() bool {
		c, err := f.rt.Inspect(f.ctx, exited)
		return err == nil && c.State == runtimeadapter.StateExited
	})
	for name, id := range map[string]string{"created": created, "exited": exited} {
		_, err := f.rt.Exec(f.ctx, id, cmd, time.Second)
		if !errors.Is(err, runtimeadapter.ErrNotRunning) || !strings.Contains(err.Error(), id) {
			t.Errorf("%s container: %v, want ErrNotRunning naming %s", name, err, id)
		}
	}

	running := f.run(f.spec("running"))
	if _, err := f.rt.Exec(f.ctx, running, nil, time.Second); err == nil {
		t.Error("empty command: no error")
	}
}

// findProcess returns the host PID of the process running cmd in container
// id, or 0. Tests run as root in the host's PID namespace.
func findProcess(t *testing.T, id string, cmd []string) int {
	t.Helper()
	want := strings.Join(cmd, "\x00") + "\x00"
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/cmdline")
		if err != nil || string(b) != want {
			continue
		}
		if cg, err := os.ReadFile(d + "/cgroup"); err == nil && strings.Contains(string(cg), id) {
			pid, _ := strconv.Atoi(filepath.Base(d))
			return pid
		}
	}
	return 0
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
