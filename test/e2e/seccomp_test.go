package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/test/support/testimages"
)

// denyMkdirProfile is a seccomp profile that allows everything but
// mkdir(2) and mkdirat(2), which fail with EPERM (errno 1).
const denyMkdirProfile = `{
  "defaultAction": "SCMP_ACT_ALLOW",
  "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]
}
`

// seccompPod is a Never pod whose container tries mkdir (testworkload
// mkdir: exit 0 when it works, 13 on EPERM) under the given
// securityContext lines of the container.
func seccompPod(name, podSC, containerSC string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  securityContext: {%s}
  containers:
  - name: app
    image: %s
    command: ["/testworkload", "mkdir", "--dir", "/made"]
    securityContext: {%s}
`, name, podSC, testimages.TestWorkloadTag, containerSC)
}

// seccomp profiles on Docker: a Localhost profile from
// <root-dir>/seccomp/ that denies mkdir makes the container's mkdir fail
// with EPERM (exit 13, pod Failed), set on the pod or on the container
// (which wins over the pod's RuntimeDefault); RuntimeDefault and
// Unconfined run it (exit 0, pod Succeeded); a missing profile leaves the
// container waiting with CreateContainerConfigError naming the pod, the
// container and the file. AppArmor RuntimeDefault and Unconfined run too.
func TestSeccompProfilesOnDocker(t *testing.T) {
	e := newEnv(t, "e2e-seccomp")
	dir := filepath.Join(e.rootDir, "seccomp", "team")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "deny-mkdir.json"), []byte(denyMkdirProfile), 0o644); err != nil {
		t.Fatal(err)
	}
	const localhost = `seccompProfile: {type: Localhost, localhostProfile: team/deny-mkdir.json}`
	pods := []struct {
		name, podSC, containerSC string
		wantExit                 int32
		wantPhase                v1.PodPhase
	}{
		{"denied", "", localhost, 13, v1.PodFailed},
		{"denied-pod", localhost, "", 13, v1.PodFailed},
		{"denied-container-wins", `seccompProfile: {type: RuntimeDefault}`, localhost, 13, v1.PodFailed},
		{"default", `seccompProfile: {type: RuntimeDefault}`, "", 0, v1.PodSucceeded},
		{"unconfined", "", `seccompProfile: {type: Unconfined}`, 0, v1.PodSucceeded},
		// AppArmor RuntimeDefault and Unconfined are applied on any host
		// (Docker's apparmor=unconfined where AppArmor is on).
		{"apparmor", `appArmorProfile: {type: RuntimeDefault}`, `appArmorProfile: {type: Unconfined}`, 0, v1.PodSucceeded},
	}
	for _, p := range pods {
		e.writeManifest(p.name+".yaml", seccompPod(p.name, p.podSC, p.containerSC))
	}
	e.writeManifest("missing.yaml", seccompPod("missing", "", `seccompProfile: {type: Localhost, localhostProfile: nope.json}`))
	a := e.startAgent("agent")
	api := lcAPIOf(t, a)
	for _, p := range pods {
		eventually(t, podUpTimeout, fmt.Sprintf("pod %s %s with app exited %d", p.name, p.wantPhase, p.wantExit), func() (bool, string) {
			a.requireRunning()
			pod, err := api.pod(p.name)
			if err != nil {
				return false, err.Error()
			}
			cs := lcContainerStatus(pod, "app")
			ok := pod.Status.Phase == p.wantPhase && cs != nil && cs.State.Terminated != nil && cs.State.Terminated.ExitCode == p.wantExit
			return ok, lcDescribePod(pod)
		})
	}
	cs := waitingIn(t, api, "missing", "app", "CreateContainerConfigError", v1.PodPending)
	file := filepath.Join(e.rootDir, "seccomp", "nope.json")
	for _, want := range []string{"pod default/missing", `container "app"`, file} {
		if !strings.Contains(cs.State.Waiting.Message, want) {
			t.Errorf("waiting message %q does not name %q", cs.State.Waiting.Message, want)
		}
	}
	e.noApp("missing", "app")
}
