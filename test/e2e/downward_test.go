package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// A pod's env has its own address (the running sandbox's) and the node's
// (--node-ip), and its memory limit through resourceFieldRef; its
// downwardAPI volume holds its labels, written as the kubelet's atomic
// writer does and mounted read-only as a directory; the status reports
// both addresses.
func TestDownwardAPI(t *testing.T) {
	e := newEnv(t, "downward")
	const nodeIP = "192.0.2.10" // TEST-NET-1: the flag's value, not a detected address
	e.agentArgs = []string{"--node-ip", nodeIP}
	e.writeManifest("dapi.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: dapi
  labels: {app: web, tier: front}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: %s
    resources:
      limits: {memory: 64Mi}
    env:
    - name: POD_IP
      valueFrom: {fieldRef: {fieldPath: status.podIP}}
    - name: HOST_IP
      valueFrom: {fieldRef: {fieldPath: status.hostIP}}
    - name: MEM_MI
      valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: 1Mi}}
    volumeMounts:
    - {name: podinfo, mountPath: /etc/podinfo}
  volumes:
  - name: podinfo
    downwardAPI:
      items:
      - {path: labels, fieldRef: {fieldPath: metadata.labels}}
`, testimages.TestWorkloadTag))
	a := e.startAgent("agent")
	api := lcAPIOf(t, a)
	cs := e.waitPodRunning(a, "dapi", "app")
	sandbox, app := cs.running(runtimeadapter.SandboxName)[0], cs.running("app")[0]
	if sandbox.IP == "" {
		t.Fatalf("sandbox %s has no address", short(sandbox.ID))
	}

	in, found := e.inspect(app.ID)
	if !found {
		t.Fatalf("app container %s gone", short(app.ID))
	}
	for _, want := range []string{"POD_IP=" + sandbox.IP, "HOST_IP=" + nodeIP, "MEM_MI=64"} {
		if !slices.Contains(in.Config.Env, want) {
			t.Errorf("app env %q lacks %s", in.Config.Env, want)
		}
	}

	var source string
	for _, m := range in.Mounts {
		if m.Destination == "/etc/podinfo" {
			source = m.Source
			if m.RW {
				t.Errorf("downwardAPI mount %s is writable", m.Destination)
			}
		}
	}
	if source == "" {
		t.Fatalf("no mount on /etc/podinfo: %+v", in.Mounts)
	}
	data, err := os.ReadFile(filepath.Join(source, "labels"))
	if err != nil || string(data) != "app=\"web\"\ntier=\"front\"" {
		t.Errorf("labels file: %q, %v", data, err)
	}
	if target, err := os.Readlink(filepath.Join(source, "labels")); err != nil || target != "..data/labels" {
		t.Errorf("labels -> %q, %v; want a link through ..data", target, err)
	}
	// Inside the container, through the links.
	dockerCLI(t, "exec", app.ID, "/testworkload", "check", "--file", "/etc/podinfo/labels")

	eventually(t, podUpTimeout, "status with the pod's and the node's addresses", func() (bool, string) {
		p, err := api.pod("dapi")
		if err != nil {
			return false, err.Error()
		}
		st := p.Status
		ok := st.PodIP == sandbox.IP && len(st.PodIPs) == 1 && st.HostIP == nodeIP && len(st.HostIPs) == 1 && st.HostIPs[0].IP == nodeIP
		return ok, fmt.Sprintf("podIP %q podIPs %v hostIP %q hostIPs %v", st.PodIP, st.PodIPs, st.HostIP, st.HostIPs)
	})
}
