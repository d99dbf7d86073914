package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/docker/docker/api/types/container"

	"github.com/actorlet/actorlet/test/support/testimages"
)

const e2eSecretValue = "e2e-s3cret-n0t-for-logs"

// cmManifest is one file with a ConfigMap (url, and extra when given), a
// Secret, a pod using both (a configMap volume, a secret volume, env
// from the Secret and envFrom the ConfigMap) and a pod whose ConfigMap
// "later" comes only when withLater.
func cmManifest(url, extra string, withLater bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: v1
kind: ConfigMap
metadata: {name: app}
data:
  url: %q
`, url)
	if extra != "" {
		fmt.Fprintf(&b, "  extra: %q\n", extra)
	}
	fmt.Fprintf(&b, `---
apiVersion: v1
kind: Secret
metadata: {name: db}
stringData: {password: %q}
---
apiVersion: v1
kind: Pod
metadata: {name: cm}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: %[2]s
    env:
    - name: PASSWORD
      valueFrom: {secretKeyRef: {name: db, key: password}}
    envFrom:
    - {prefix: CFG_, configMapRef: {name: app}}
    volumeMounts:
    - {name: cfg, mountPath: /etc/app}
    - {name: creds, mountPath: /etc/creds}
  volumes:
  - {name: cfg, configMap: {name: app}}
  - {name: creds, secret: {secretName: db, defaultMode: 0400}}
---
apiVersion: v1
kind: Pod
metadata: {name: waits}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: %[2]s
    volumeMounts:
    - {name: cfg, mountPath: /etc/later}
  volumes:
  - {name: cfg, configMap: {name: later}}
`, e2eSecretValue, testimages.TestWorkloadTag)
	if withLater {
		b.WriteString("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: later}\ndata: {k: v}\n")
	}
	return b.String()
}

// A pod uses a ConfigMap and a Secret defined beside it: env from both
// (fixed at creation), the ConfigMap as a volume whose files follow its
// changes in the running container (no restart), the Secret as a volume
// on a tmpfs with its defaultMode. A pod whose ConfigMap is missing waits
// in ContainerCreating with the kubelet's FailedMount event and starts
// when it comes. The secret's value is in no log line and no API answer.
func TestConfigMapAndSecret(t *testing.T) {
	e := newEnv(t, "configmap")
	t.Cleanup(func() { unmountUnder(t, e.rootDir) }) // the secret volume's tmpfs (the agent is killed, not drained)
	e.writeManifest("app.yaml", cmManifest("http://one", "", false))
	a := e.startAgent("agent")
	api := lcAPIOf(t, a)
	cs := e.waitPodRunning(a, "cm", "app")
	app := cs.running("app")[0]
	in := wantCMEnv(t, e, app.ID)
	var cfgSource, credsSource string
	for _, m := range in.Mounts {
		switch m.Destination {
		case "/etc/app":
			cfgSource = m.Source
		case "/etc/creds":
			credsSource = m.Source
		}
		if m.RW {
			t.Errorf("mount %s is writable", m.Destination)
		}
	}
	uid := app.Labels["io.actorlet.pod.uid"]
	volumes := filepath.Join(e.rootDir, "pods", uid, "volumes")
	if want := filepath.Join(volumes, "configmap", "cfg"); cfgSource != want {
		t.Fatalf("configMap mount source %q, want %q", cfgSource, want)
	}
	if want := filepath.Join(volumes, "secret", "creds"); credsSource != want {
		t.Fatalf("secret mount source %q, want %q", credsSource, want)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(credsSource, &st); err != nil || st.Type != 0x01021994 {
		t.Errorf("secret volume %s: not a tmpfs (type %#x, %v)", credsSource, st.Type, err)
	}
	if fi, err := os.Stat(filepath.Join(credsSource, "password")); err != nil || fi.Mode().Perm() != 0o400 {
		t.Errorf("secret file: %v, %v; want mode 0400", fi, err)
	}
	if fi, err := os.Stat(filepath.Dir(credsSource)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("secret volumes' parent: %v, %v; want 0700", fi, err)
	}
	dockerCLI(t, "exec", app.ID, "/testworkload", "check", "--file", "/etc/creds/password")
	if inContainer(t, app.ID, "/etc/app/extra") {
		t.Fatal("/etc/app/extra exists before the ConfigMap has it")
	}

	// The pod whose ConfigMap is missing waits, as the kubelet's.
	eventually(t, podUpTimeout, "pod waits: ContainerCreating with FailedMount", func() (bool, string) {
		p, err := api.pod("waits")
		if err != nil {
			return false, err.Error()
		}
		evs, _ := api.podEvents("waits", "FailedMount")
		cst := lcContainerStatus(p, "app")
		ok := cst != nil && cst.State.Waiting != nil && cst.State.Waiting.Reason == "ContainerCreating" && len(evs) > 0 &&
			evs[0].Message == `MountVolume.SetUp failed for volume "cfg" : configmap "later" not found`
		return ok, lcDescribePod(p) + "; " + lcEventsString(evs)
	})

	// The ConfigMap changes, and "later" comes.
	e.writeManifest("app.yaml", cmManifest("http://two", "x", true))
	eventually(t, podUpTimeout, "the ConfigMap's change in the running container", func() (bool, string) {
		data, err := os.ReadFile(filepath.Join(cfgSource, "url"))
		return string(data) == "http://two" && inContainer(t, app.ID, "/etc/app/extra"), fmt.Sprintf("url %q, %v", data, err)
	})
	e.waitPodRunning(a, "waits", "app")
	now := e.list().ofPod("cm").running("app")
	if len(now) != 1 || now[0].ID != app.ID {
		t.Errorf("app after the change: %v, want %s running on", now, short(app.ID))
	}
	if in, _ := e.inspect(app.ID); !slices.Contains(in.Config.Env, "CFG_url=http://one") {
		t.Error("env changed: it is fixed at creation")
	}

	// The secret shows nowhere.
	for _, path := range []string{"/pods", "/events", "/pods/default/cm"} {
		resp, err := http.Get(api.base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), e2eSecretValue) {
			t.Errorf("API %s shows the secret's value", path)
		}
	}
	if strings.Contains(a.out.String(), e2eSecretValue) {
		t.Error("the agent's log shows the secret's value")
	}
}

// wantCMEnv inspects cmManifest's app container id and checks its env
// from the Secret and from the ConfigMap at "http://one".
func wantCMEnv(t *testing.T, e *env, id string) container.InspectResponse {
	t.Helper()
	in, found := e.inspect(id)
	if !found {
		t.Fatalf("app container %s gone", short(id))
	}
	for _, want := range []string{"PASSWORD=" + e2eSecretValue, "CFG_url=http://one"} {
		if !slices.Contains(in.Config.Env, want) {
			t.Errorf("app env lacks %s", strings.SplitN(want, "=", 2)[0])
		}
	}
	return in
}

// inContainer reports whether path exists in container id.
func inContainer(t *testing.T, id, path string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), dockerTimeout)
	defer cancel()
	err := exec.CommandContext(ctx, "docker", "exec", id, "/testworkload", "check", "--file", path).Run()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		t.Fatalf("docker exec %s: %v", short(id), err)
	}
	return err == nil
}

// unmountUnder lazily unmounts every mount below dir (a test's root dir).
func unmountUnder(t *testing.T, dir string) {
	data, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		t.Errorf("read mounts: %v", err)
		return
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && strings.HasPrefix(f[1], dir+"/") {
			if err := syscall.Unmount(f[1], syscall.MNT_DETACH); err != nil {
				t.Errorf("unmount %s: %v", f[1], err)
			}
		}
	}
}
