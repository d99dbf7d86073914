package e2e

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/test/support/testimages"
)

// The agent follows Docker's containerd: a container's death comes as a
// task exit, while the exec liveness probe's processes, whose exits
// containerd publishes on the same topic, are never taken for deaths.
// With the socket named wrongly the agent runs as before, on Docker's die
// events, and says so.
func TestContainerdExits(t *testing.T) {
	testimages.RequireContainerd(t)
	manifest := testimages.ProbedExitPod(false)
	for _, tc := range []struct {
		name, flag, path string
	}{
		{"found", "", "containerd"},
		{"absent socket", "absent", "runtime-events"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "e2e-ctrd")
			e.agentArgs = []string{"--log-level", "debug"}
			if tc.flag == "absent" {
				e.agentArgs = append(e.agentArgs, "--containerd-address", filepath.Join(t.TempDir(), "containerd.sock"))
			}
			e.writeManifest("probed.yaml", manifest)
			a := e.startAgent("agent")
			base := "http://" + a.waitLog(30*time.Second, "actorlet running").str("api")
			client := &http.Client{Timeout: 10 * time.Second}
			get := func(path string) string {
				r, err := client.Get(base + path)
				if err != nil {
					return err.Error()
				}
				defer r.Body.Close()
				b, _ := io.ReadAll(r.Body)
				return string(b)
			}
			var app string
			eventually(t, 60*time.Second, "app exited after probes ran", func() (bool, string) {
				cs := e.list().ofPod("probed")
				for _, c := range cs {
					if c.Labels["io.actorlet.container.name"] == "app" {
						app = c.ID
					}
				}
				if app == "" {
					return false, "no app container yet"
				}
				m := get("/metrics")
				runs := 0.0 // exec probe runs, whatever their result
				for line := range strings.Lines(m) {
					var result string
					var n float64
					if _, err := fmt.Sscanf(line, `actorlet_probe_results_total{probe_type="liveness",result=%q} %g`, &result, &n); err == nil {
						runs += n
					}
				}
				probes := runs >= 2
				in, found := e.inspect(app)
				st := ""
				if found && in.State != nil {
					st = in.State.Status
				}
				return probes && st == "exited", fmt.Sprintf("app %s %s, probes counted: %v", short(app), st, probes)
			})
			h := get("/healthz")
			if !strings.Contains(h, `"name":"container exits","ok":true,"message":"`+tc.path+` since`) {
				t.Fatalf("/healthz does not show the %s path: %s", tc.path, h)
			}
			eventually(t, 30*time.Second, "the pod Failed with exit 3", func() (bool, string) {
				p := get("/pods/default/probed")
				return strings.Contains(p, `"phase":"Failed"`) && strings.Contains(p, `"exitCode":3`), p
			})
			var appExits, others int
			for _, l := range a.findLogs("runtime exit") {
				if strings.HasPrefix(app, l.str("id")) {
					appExits++
				} else {
					others++
				}
			}
			want := 1
			if tc.path != "containerd" {
				want = 0
			}
			if appExits != want {
				t.Fatalf("%d task exits logged for the app container, want %d (the exec probes' exits are not deaths)", appExits, want)
			}
			if tc.path != "containerd" && others != 0 {
				t.Fatalf("%d task exits logged without containerd", others)
			}
			following := 0
			for _, l := range a.logs() {
				if strings.HasPrefix(l.str("msg"), "container exits: following containerd task events at ") {
					following++
				}
			}
			if tc.path == "containerd" && following != 1 {
				t.Fatal("no single log line saying the containerd path is followed")
			}
		})
	}
}
