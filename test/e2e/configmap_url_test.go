package e2e

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// The same ConfigMap, Secret and pods served by --manifest-url (one
// body of YAML documents) instead of a file: the pod gets both (env and
// volumes), a change of the ConfigMap at the URL reaches the running
// container's files without a restart, and the Secret's value is in no
// log line.
func TestConfigMapAndSecretFromURL(t *testing.T) {
	e := newEnv(t, "cmurl")
	t.Cleanup(func() { unmountUnder(t, e.rootDir) }) // the secret volume's tmpfs (the agent is killed, not drained)
	var body atomic.Value
	body.Store(cmManifest("http://one", "", false))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(body.Load().(string)))
	}))
	t.Cleanup(srv.Close)
	e.agentArgs = []string{"--manifest-url", srv.URL + "/all.yaml", "--manifest-url-period", "500ms"}
	a := e.startAgent("agent")

	app := e.waitPodRunning(a, "cm", "app").running("app")[0]
	wantCMEnv(t, e, app.ID)
	volumes := filepath.Join(e.rootDir, "pods", app.Labels["io.actorlet.pod.uid"], "volumes")
	dockerCLI(t, "exec", app.ID, "/testworkload", "check", "--file", "/etc/creds/password")

	body.Store(cmManifest("http://two", "x", false))
	eventually(t, podUpTimeout, "the ConfigMap's change at the URL in the running container", func() (bool, string) {
		data, err := os.ReadFile(filepath.Join(volumes, "configmap", "cfg", "url"))
		return string(data) == "http://two" && inContainer(t, app.ID, "/etc/app/extra"), string(data) + " " + errString(err)
	})
	if now := e.list().ofPod("cm").running("app"); len(now) != 1 || now[0].ID != app.ID {
		t.Errorf("app after the change: %v, want %s running on", now, short(app.ID))
	}
	if strings.Contains(a.out.String(), e2eSecretValue) {
		t.Error("the agent's log shows the secret's value")
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
