package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// Pod fields of the Kubernetes documentation's examples that actorlet
// once refused (sources/dir/corpus_test.go), honoured on Docker.

// supplementalGroups and fsGroup on Docker: the container's processes
// have the fsGroup and the supplementalGroups besides their runAsGroup
// (`testworkload id` prints what `id` prints in the documentation's
// example, groups=2000,3000,4000), its emptyDir belongs to the fsGroup with setgid,
// so a file the container makes there belongs to the fsGroup too, and a
// downwardAPI volume's files belong to it, as the kubelet leaves them
// (the documentation's security-context.yaml and security-context-5.yaml).
func TestSupplementalGroupsAndFSGroup(t *testing.T) {
	e := newEnv(t, "e2e-fsgroup")
	e.writeManifest("groups.yaml", podHead("groups")+fmt.Sprintf(`  securityContext:
    runAsUser: 1000
    runAsGroup: 3000
    supplementalGroups: [4000]
    supplementalGroupsPolicy: Merge
    fsGroup: 2000
    fsGroupChangePolicy: OnRootMismatch
  volumes:
  - name: data
    emptyDir: {}
  - name: info
    downwardAPI:
      items:
      - {path: name, fieldRef: {fieldPath: metadata.name}}
  containers:
  - name: app
    image: %s
    volumeMounts:
    - {name: data, mountPath: /data}
    - {name: info, mountPath: /info}
    securityContext:
      allowPrivilegeEscalation: false
`, testimages.TestWorkloadTag))
	a := e.startAgent("agent")
	app := e.waitPodRunning(a, "groups", "app").running("app")[0]

	if got, want := dockerCLI(t, "exec", app.ID, "/testworkload", "id"), "uid=1000 gid=3000 groups=2000,3000,4000"; got != want {
		t.Errorf("testworkload id in the container: %q, want %q", got, want)
	}
	gidOf := func(p string) (uint32, fs.FileMode) {
		t.Helper()
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Gid, fi.Mode()
	}
	data := e.lcMountSource(app.ID, "/data")
	if gid, mode := gidOf(data); gid != 2000 || mode&fs.ModeSetgid == 0 || mode.Perm() != 0o777 {
		t.Errorf("emptyDir %s: group %d, mode %v; want 2000, setgid, 0777", data, gid, mode)
	}
	dockerCLI(t, "exec", app.ID, "/testworkload", "touch", "--file", "/data/made", "--content", "x")
	if gid, _ := gidOf(filepath.Join(data, "made")); gid != 2000 {
		t.Errorf("a file the container made in the emptyDir has group %d, want the fsGroup 2000 (setgid)", gid)
	}
	info := e.lcMountSource(app.ID, "/info")
	if gid, mode := gidOf(filepath.Join(info, "..data", "name")); gid != 2000 || mode.Perm() != 0o644 {
		t.Errorf("downwardAPI file: group %d, mode %v; want 2000, 0644", gid, mode)
	}
}

// shareProcessNamespace on Docker: a container sees the sandbox's pause
// process as PID 1 and its sibling's process (`testworkload ps`), as in
// the documentation's share-process-namespace.yaml; without it a
// container sees only its own processes.
func TestShareProcessNamespace(t *testing.T) {
	e := newEnv(t, "e2e-sharepid")
	pod := func(name string, share bool) string {
		return podHead(name) + fmt.Sprintf(`  shareProcessNamespace: %v
  containers:
  - name: app
    image: %s
  - name: shell
    image: %s
`, share, testimages.TestWorkloadTag, testimages.TestWorkloadTag)
	}
	e.writeManifest("shared.yaml", pod("shared", true))
	e.writeManifest("apart.yaml", pod("apart", false))
	a := e.startAgent("agent")
	procs := func(podName string) []string {
		t.Helper()
		shell := e.waitPodRunning(a, podName, "app", "shell").running("shell")[0]
		return strings.Split(dockerCLI(t, "exec", shell.ID, "/testworkload", "ps"), "\n")
	}
	shared := procs("shared")
	if !slices.Contains(shared, "1 pause") {
		t.Errorf("shareProcessNamespace: the shell sees %q, want the sandbox's pause as PID 1", shared)
	}
	if n := countComm(shared, "testworkload"); n < 3 { // app, shell, and ps itself
		t.Errorf("shareProcessNamespace: the shell sees %q, want app's, its own and ps's testworkload", shared)
	}
	apart := procs("apart")
	if slices.Contains(apart, "1 pause") || countComm(apart, "testworkload") != 2 { // shell and ps
		t.Errorf("without shareProcessNamespace the shell sees %q, want only its own processes", apart)
	}
}

// countComm counts the "PID COMM" lines of processes named comm.
func countComm(lines []string, comm string) int {
	n := 0
	for _, l := range lines {
		if _, c, _ := strings.Cut(l, " "); c == comm {
			n++
		}
	}
	return n
}

// Pod-level resources on Docker (the documentation's
// pod-level-resources.yaml): a container without limits of its own is
// bounded by the pod's (docker inspect: memory 200Mi without swap, a CPU
// quota of one CPU); one with its own keeps them.
func TestPodLevelResources(t *testing.T) {
	e := newEnv(t, "e2e-podres")
	e.writeManifest("res.yaml", podHead("res")+fmt.Sprintf(`  resources:
    limits: {cpu: "1", memory: 200Mi}
    requests: {cpu: "1", memory: 100Mi}
  containers:
  - name: own
    image: %s
    resources:
      limits: {cpu: "0.5", memory: 100Mi}
      requests: {cpu: "0.5", memory: 50Mi}
  - name: pods
    image: %s
`, testimages.TestWorkloadTag, testimages.TestWorkloadTag))
	a := e.startAgent("agent")
	cs := e.waitPodRunning(a, "res", "own", "pods")
	for name, want := range map[string][3]int64{"own": {100 << 20, 50_000, 512}, "pods": {200 << 20, 100_000, 0}} {
		in, found := e.inspect(cs.running(name)[0].ID)
		if !found {
			t.Fatalf("container %s gone", name)
		}
		h := in.HostConfig
		if h.Memory != want[0] || h.MemorySwap != want[0] || h.CPUQuota != want[1] || h.CPUPeriod != 100_000 || h.CPUShares != want[2] {
			t.Errorf("container %s: memory %d (swap %d), CPU quota %d per %d µs, shares %d; want memory %d (no swap), quota %d per 100000, shares %d",
				name, h.Memory, h.MemorySwap, h.CPUQuota, h.CPUPeriod, h.CPUShares, want[0], want[1], want[2])
		}
	}
}

// env valueFrom.fileKeyRef on Docker (the documentation's
// envars-file-container.yaml): an init container writes an env file into
// an emptyDir, and the app container's variable is its key's value, read
// when the app container is created; a missing key leaves a container
// waiting with CreateContainerConfigError naming the pod, the container,
// the field and the file.
func TestEnvFileKeyRef(t *testing.T) {
	e := newEnv(t, "e2e-envfile")
	pod := func(name, key string) string {
		return podHead(name) + fmt.Sprintf(`  initContainers:
  - name: setup-envfile
    image: %s
    command: ["/testworkload", "touch", "--file", "/data/config.env", "--content", "DB_ADDRESS='address'\nREST_ENDPOINT='end point'\n"]
    volumeMounts:
    - {name: config, mountPath: /data}
  containers:
  - name: use-envfile
    image: %s
    env:
    - name: DB_ADDRESS
      valueFrom:
        fileKeyRef: {path: config.env, volumeName: config, key: %s, optional: false}
  volumes:
  - name: config
    emptyDir: {}
`, testimages.TestWorkloadTag, testimages.TestWorkloadTag, key)
	}
	e.writeManifest("envfile.yaml", pod("envfile", "REST_ENDPOINT"))
	e.writeManifest("nokey.yaml", pod("nokey", "NOPE"))
	a := e.startAgent("agent")
	app := e.waitPodRunning(a, "envfile", "use-envfile").running("use-envfile")[0]
	in, found := e.inspect(app.ID)
	if !found {
		t.Fatalf("container %s gone", short(app.ID))
	}
	if !slices.Contains(in.Config.Env, "DB_ADDRESS=end point") {
		t.Errorf("env %q lacks DB_ADDRESS=end point, the file's REST_ENDPOINT", in.Config.Env)
	}
	cs := waitingIn(t, lcAPIOf(t, a), "nokey", "use-envfile", "CreateContainerConfigError", v1.PodPending)
	for _, want := range []string{"pod default/nokey", `container "use-envfile"`, "env[0].valueFrom.fileKeyRef", `key "NOPE" not found in file "config.env" of volume "config"`} {
		if !strings.Contains(cs.State.Waiting.Message, want) {
			t.Errorf("waiting message %q does not name %q", cs.State.Waiting.Message, want)
		}
	}
}

// restartPolicyRules on Docker: under the pod's Always, an app container
// whose own restartPolicy is Never is restarted on the exit code its rule
// names (3) and not on another (4).
func TestRestartPolicyRules(t *testing.T) {
	e := newEnv(t, "e2e-rules")
	// ruled exits with code after 300 ms; its rule restarts it on 3 only.
	ruled := func(name string, code int) string {
		return fmt.Sprintf(`  - name: %s
    image: %s
    env: [{name: TW_EXIT_AFTER, value: 300ms}, {name: TW_EXIT_CODE, value: "%d"}]
    restartPolicy: Never
    restartPolicyRules:
    - action: Restart
      exitCodes: {operator: In, values: [3]}
`, name, testimages.TestWorkloadTag, code)
	}
	e.writeManifest("rules.yaml", podHead("rules")+fmt.Sprintf(`  containers:
%s%s  - name: keeper
    image: %s
`, ruled("retried", 3), ruled("final", 4), testimages.TestWorkloadTag))
	a := e.startAgent("agent")
	api := lcAPIOf(t, a)
	eventually(t, podUpTimeout, "retried restarted at least twice, final exited 4 and never restarted", func() (bool, string) {
		a.requireRunning()
		pod, err := api.pod("rules")
		if err != nil {
			return false, err.Error()
		}
		retried, final := lcContainerStatus(pod, "retried"), lcContainerStatus(pod, "final")
		ok := retried != nil && retried.RestartCount >= 2 &&
			final != nil && final.RestartCount == 0 && final.State.Terminated != nil && final.State.Terminated.ExitCode == 4
		return ok, lcDescribePod(pod)
	})
	if n := len(e.list().ofPod("rules").lcNamed("final")); n != 1 {
		t.Errorf("final has %d instances, want 1 (never restarted)", n)
	}
}

// restartPolicyRules action RestartAllContainers on Docker (the
// documentation's restart-all-containers.yaml, under restartPolicy
// Never): the sidecar exits 88, so every container stops and the pod runs
// again from its init container in the same sandbox: the init container
// has a second instance, the app a restart, and the sandbox is the first
// one, still running.
func TestRestartAllContainers(t *testing.T) {
	e := newEnv(t, "e2e-restartall")
	e.writeManifest("ml.yaml", podHead("ml-worker")+fmt.Sprintf(`  restartPolicy: Never
  initContainers:
  - name: setup-environment
    image: %[1]s
    command: ["/testworkload", "check", "--file", "/testworkload"]
  - name: watcher-sidecar
    image: %[1]s
    env: [{name: TW_EXIT_AFTER, value: 2s}, {name: TW_EXIT_CODE, value: "88"}]
    restartPolicy: Always
    restartPolicyRules:
    - action: RestartAllContainers
      exitCodes: {operator: In, values: [88]}
  containers:
  - name: main-application
    image: %[1]s
`, testimages.TestWorkloadTag))
	a := e.startAgent("agent")
	first := e.waitPodRunning(a, "ml-worker", "main-application").running(runtimeadapter.SandboxName)[0]
	api := lcAPIOf(t, a)
	eventually(t, 2*podUpTimeout, "main-application restarted and setup-environment run again, in the first sandbox", func() (bool, string) {
		a.requireRunning()
		pod, err := api.pod("ml-worker")
		if err != nil {
			return false, err.Error()
		}
		cs := e.list().ofPod("ml-worker")
		main := lcContainerStatus(pod, "main-application")
		ok := main != nil && main.RestartCount >= 1 && main.State.Running != nil &&
			len(cs.lcNamed("setup-environment")) >= 2 && len(cs.running(runtimeadapter.SandboxName)) == 1 &&
			cs.running(runtimeadapter.SandboxName)[0].ID == first.ID && pod.Status.Phase == v1.PodRunning
		return ok, lcDescribePod(pod) + " " + cs.lcCountByName()
	})
}

// podHead is the start of a manifest of pod name, up to and including
// spec's first line (a grace period of 1 s); what follows is the rest of
// spec.
func podHead(name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  terminationGracePeriodSeconds: 1
`, name)
}
