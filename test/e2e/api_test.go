package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/test/support/testimages"
)

// The agent's read-only API end to end: /pods lists the pods with status,
// a log stream follows a container, /metrics counts a restart, and the
// CLI prints the pods from the same API.
func TestAPIEndToEnd(t *testing.T) {
	e := newEnv(t, "e2e-api")
	e.writeManifest("talker.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: talker
spec:
  containers:
  - name: app
    image: %s
    env:
    - {name: TW_LOG_EVERY, value: 200ms}
`, testimages.TestWorkloadTag))
	e.writeManifest("crasher.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: crasher
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: crash
    image: %s
    env:
    - {name: TW_EXIT_AFTER, value: 500ms}
    - {name: TW_EXIT_CODE, value: "3"}
`, testimages.TestWorkloadTag))
	a := e.startAgent("agent")
	addr := a.waitLog(30*time.Second, "actorlet running").str("api")
	if addr == "" {
		t.Fatal(`the "actorlet running" log line has no api address`)
	}
	base := "http://" + addr
	client := &http.Client{Timeout: 10 * time.Second}

	// /pods: both pods, talker Running.
	eventually(t, 30*time.Second, "talker Running in /pods", func() (bool, string) {
		var list v1.PodList
		if err := getJSON(client, base+"/pods", &list); err != nil {
			return false, err.Error()
		}
		seen := map[string]string{}
		for _, p := range list.Items {
			seen[p.Name] = string(p.Status.Phase)
		}
		return len(list.Items) == 2 && seen["talker"] == "Running", fmt.Sprint(seen)
	})

	// /logs follow: lines keep arriving.
	req, _ := http.NewRequest("GET", base+"/logs/default/talker/app?follow=true", nil)
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("/logs: %s", resp.Status)
	}
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(15 * time.Second)
	for got := 0; got < 5; {
		select {
		case _, ok := <-lines:
			if !ok {
				t.Fatalf("log stream ended after %d lines", got)
			}
			got++
		case <-deadline:
			t.Fatalf("only %d log lines in 15 s from a container logging every 200 ms", got)
		}
	}
	resp.Body.Close()

	// /metrics: the crasher's restart is counted (backoff 1 s in e2e).
	eventually(t, 30*time.Second, "a restart of crasher counted in /metrics", func() (bool, string) {
		r, err := client.Get(base + "/metrics")
		if err != nil {
			return false, err.Error()
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		for line := range strings.Lines(string(b)) {
			if strings.HasPrefix(line, "actorlet_container_restarts_total{") && strings.Contains(line, `pod="crasher"`) {
				return !strings.HasSuffix(strings.TrimSpace(line), " 0"), line
			}
		}
		return false, "no actorlet_container_restarts_total series for crasher"
	})

	// The crasher's last exit and CrashLoopBackOff are in the node's state
	// file, so that they survive a restart of the agent.
	state := filepath.Join(e.rootDir, "nodes", e.node+".containers.json")
	eventually(t, 10*time.Second, "a record of the crasher in "+state, func() (bool, string) {
		b, err := os.ReadFile(state)
		if err != nil {
			return false, err.Error()
		}
		return strings.Contains(string(b), `"crash":{"exit":{`) && strings.Contains(string(b), `"exitCode":3`) &&
			strings.Contains(string(b), `"delay"`), string(b)
	})

	// /healthz answers 200 with its checks.
	r, err := client.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || !strings.Contains(string(b), "pleg") {
		t.Errorf("/healthz: %s %s", r.Status, b)
	}

	// The CLI reads the same API.
	out, err := exec.Command(actorletBinary(t), "get", "pods", "--server", base).CombinedOutput()
	if err != nil {
		t.Fatalf("actorlet get pods: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "talker") || !strings.Contains(string(out), "crasher") || !strings.HasPrefix(string(out), "NAME") {
		t.Errorf("actorlet get pods printed:\n%s", out)
	}
}

func getJSON(c *http.Client, url string, v any) error {
	r, err := c.Get(url)
	if err != nil {
		return err
	}
	defer r.Body.Close()
	if r.StatusCode != 200 {
		return fmt.Errorf("GET %s: %s", url, r.Status)
	}
	return json.NewDecoder(r.Body).Decode(v)
}
