package kubeapi

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/internal/api"
	"github.com/actorlet/actorlet/internal/manifest"
	"github.com/actorlet/actorlet/sources"
	"github.com/actorlet/actorlet/sources/apipods"
)

const testToken = "s3cret-token"

// serveWrites serves the API over HTTPS with a token (over HTTP without
// one when auth is false) and pods pushed to an apipods.Source that feeds
// fb as the node would. It returns the URL and the source's directory.
func serveWrites(t *testing.T, fb *fakeBackend, auth bool) (string, string) {
	t.Helper()
	return serve2(t, fb, fb, serveOpts{token: auth})
}

// serveWritesOver is serveWrites (with a token) over a Backend wrapping fb.
func serveWritesOver(t *testing.T, b Backend, fb *fakeBackend) (string, string) {
	t.Helper()
	return serve2(t, b, fb, serveOpts{token: true})
}

// serveOpts are a test server's authentication and extra endpoints.
type serveOpts struct {
	token    bool         // --api-token-file holding testToken
	clientCA []byte       // --client-ca-file (PEM); the server asks for client certificates
	metrics  http.Handler // /metrics
}

// serve2 serves the Kubernetes API over b and the node's API (internal/api)
// over b too; fb receives the pushed pods. The server is HTTPS when a
// token or a client CA is configured, as kubectl sends a token only over
// HTTPS.
func serve2(t *testing.T, b Backend, fb *fakeBackend, so serveOpts) (string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "node-1.api-pods")
	src := apipods.New(dir, "node-1")
	ctx, cancel := context.WithCancel(context.Background())
	h := New(b, Options{NodeName: "node-1", Resync: 10 * time.Millisecond, Now: func() time.Time { return t0.Add(time.Hour) }, Context: ctx, Pushed: src})
	opts := api.Options{Kube: h, Metrics: so.metrics}
	if so.token {
		opts.TokenFile = filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(opts.TokenFile, []byte(testToken+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if so.clientCA != nil {
		opts.ClientCAFile = filepath.Join(t.TempDir(), "clients.pem")
		if err := os.WriteFile(opts.ClientCAFile, so.clientCA, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewUnstartedServer(api.New(b, opts))
	switch {
	case so.clientCA != nil:
		srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert} // as api.Server: checked by the handler
		srv.StartTLS()
	case so.token:
		srv.StartTLS()
	default:
		srv.Start()
	}
	done := make(chan struct{}, 2)
	go func() { h.Run(ctx); done <- struct{}{} }()
	go func() { _ = src.Run(ctx, func(u sources.Update) { fb.setPushed(u.Pods) }); done <- struct{}{} }()
	t.Cleanup(func() {
		cancel()
		srv.Close()
		<-done
		<-done
	})
	return srv.URL, dir
}

// waitFor polls kubectl get until its output has want (at most 10 s).
func waitFor(t *testing.T, url, want string, args ...string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, errOut, _ := kubectl(t, url, args...)
		if strings.Contains(tableWords(out), want) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl %v: no %q within 10 s; last output %q %q", args, want, out, errOut)
		}
		time.Sleep(50 * time.Millisecond) // polling a separate process; the deadline bounds it
	}
}

func writeManifest(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pod.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const pushedPod = `apiVersion: v1
kind: Pod
metadata:
  name: pushed
  labels: {app: one}
spec:
  containers:
  - name: app
    image: busybox:1.37
`

func TestKubectlWrites(t *testing.T) {
	kubectlPath(t)
	fb := &fakeBackend{health: api.Health{OK: true}}
	file := runningPod("default", "static", nil)
	file.Annotations = map[string]string{manifest.AnnotationConfigSource: "file", manifest.AnnotationSourceFile: "/etc/actorlet/static.yaml"}
	fb.setPods(file)
	url, dir := serveWrites(t, fb, true)
	auth := []string{"--insecure-skip-tls-verify", "--token", testToken}
	k := func(args ...string) (string, string, int) { return kubectl(t, url, append(auth, args...)...) }

	path := writeManifest(t, pushedPod)
	if out, errOut, code := k("apply", "-f", path); code != 0 || strings.TrimSpace(out) != "pod/pushed created" {
		t.Fatalf("apply (create): exit %d, %q %q", code, out, errOut)
	}
	waitFor(t, url, "pushed 0/1 Pending", append(auth, "get", "pods")...)
	if _, err := os.Stat(filepath.Join(dir, "default_pushed.json")); err != nil {
		t.Fatalf("the pushed pod is not persisted: %v", err)
	}
	if out, _, code := k("apply", "-f", path); code != 0 || strings.TrimSpace(out) != "pod/pushed unchanged" {
		t.Fatalf("apply (same): exit %d, %q", code, out)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(pushedPod, "app: one", "app: two", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := k("apply", "-f", path); code != 0 || strings.TrimSpace(out) != "pod/pushed configured" {
		t.Fatalf("apply (changed): exit %d, %q %q", code, out, errOut)
	}
	waitFor(t, url, "pushed", append(auth, "get", "pods", "-l", "app=two")...)
	if err := os.WriteFile(path, []byte(strings.Replace(pushedPod, "app: one", "app: three", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := k("replace", "-f", path); code != 0 || strings.TrimSpace(out) != "pod/pushed replaced" {
		t.Fatalf("replace: exit %d, %q %q", code, out, errOut)
	}
	waitFor(t, url, "pushed", append(auth, "get", "pods", "-l", "app=three")...)
	for _, p := range [][]string{
		{"--type", "merge", "-p", `{"metadata":{"labels":{"patched":"merge"}}}`},
		{"--type", "json", "-p", `[{"op":"add","path":"/metadata/labels/json","value":"yes"}]`},
		{"-p", `{"spec":{"containers":[{"name":"app","image":"busybox:1.36"}]}}`},
	} {
		if out, errOut, code := k(append([]string{"patch", "pod", "pushed"}, p...)...); code != 0 || strings.TrimSpace(out) != "pod/pushed patched" {
			t.Fatalf("patch %v: exit %d, %q %q", p, code, out, errOut)
		}
	}
	out := waitFor(t, url, "busybox:1.36", append(auth, "get", "pod", "pushed", "-o", "jsonpath={.metadata.labels} {.spec.containers[*].image}")...)
	if !strings.Contains(out, `"json":"yes"`) || !strings.Contains(out, `"patched":"merge"`) || strings.Count(out, "busybox") != 1 {
		t.Fatalf("after the patches: %s, want both labels and the strategic merge's one container", out)
	}

	// Errors, as Kubernetes words them, naming the field or the source.
	bad := writeManifest(t, strings.Replace(pushedPod, "image:", "imagee:", 1))
	if _, errOut, code := k("apply", "-f", bad); code != 1 || !strings.Contains(errOut, `strict decoding error: unknown field "spec.containers[0].imagee"`) {
		t.Errorf("apply with an unknown field: exit %d, %q", code, errOut)
	}
	noImage := writeManifest(t, strings.Replace(strings.Replace(pushedPod, "    image: busybox:1.37\n", "", 1), "pushed", "other", 1))
	if _, errOut, code := k("create", "-f", noImage); code != 1 || strings.TrimSpace(errOut) != `The Pod "other" is invalid: spec.containers[0].image: Required value` {
		t.Errorf("create without an image: exit %d, %q", code, errOut)
	}
	if _, errOut, code := k("delete", "pod", "static"); code != 1 || !strings.Contains(errOut, `pods "static" is forbidden: it comes from file /etc/actorlet/static.yaml`) {
		t.Errorf("delete of a file pod: exit %d, %q", code, errOut)
	}
	if _, errOut, code := k("create", "-f", writeManifest(t, strings.Replace(pushedPod, "pushed", "static", 1))); code != 1 || !strings.Contains(errOut, `(AlreadyExists): error when creating`) || !strings.Contains(errOut, `pods "static" already exists: it comes from file /etc/actorlet/static.yaml`) {
		t.Errorf("create over a file pod: exit %d, %q", code, errOut)
	}
	if _, errOut, code := kubectl(t, url, "--insecure-skip-tls-verify", "--token", "wrong", "delete", "pod", "pushed"); code != 1 || !strings.Contains(errOut, "You must be logged in to the server") {
		t.Errorf("delete with a wrong token: exit %d, %q", code, errOut)
	}

	if out, errOut, code := k("delete", "pod", "pushed", "--wait=false"); code != 0 || strings.TrimSpace(out) != `pod "pushed" deleted` {
		t.Fatalf("delete: exit %d, %q %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "default_pushed.json")); !os.IsNotExist(err) {
		t.Fatalf("pod file after delete: %v, want gone", err)
	}
}

func TestWritesNeedCredentials(t *testing.T) {
	kubectlPath(t)
	fb := &fakeBackend{health: api.Health{OK: true}}
	url, _ := serveWrites(t, fb, false)
	path := writeManifest(t, pushedPod)
	_, errOut, code := kubectl(t, url, "create", "-f", path)
	if code != 1 || !strings.Contains(errOut, "creating a pod needs credentials, and this agent has none configured: start it with --api-token-file") {
		t.Fatalf("create without credentials configured: exit %d, %q", code, errOut)
	}
	// Reads stay anonymous.
	if _, errOut, code := kubectl(t, url, "get", "pods"); code != 0 {
		t.Fatalf("get pods: exit %d, %q", code, errOut)
	}
}

// kubectl apply reads the served schemas (GET /openapi/v3/api/v1) and
// computes its strategic merge patch from them: a changed image of one of
// two containers lands on that container, the other kept.
func TestApplyPatchesFromServedSchemas(t *testing.T) {
	kubectlPath(t)
	fb := &fakeBackend{health: api.Health{OK: true}}
	url, _ := serveWrites(t, fb, true)
	auth := []string{"--insecure-skip-tls-verify", "--token", testToken}
	two := strings.Replace(pushedPod, "    image: busybox:1.37\n", "    image: busybox:1.37\n  - name: side\n    image: busybox:1.37\n", 1)
	path := writeManifest(t, two)
	if out, errOut, code := kubectl(t, url, append(auth, "apply", "-f", path)...); code != 0 || strings.TrimSpace(out) != "pod/pushed created" {
		t.Fatalf("apply (create): exit %d, %q %q", code, out, errOut)
	}
	waitFor(t, url, "pushed", append(auth, "get", "pods")...)
	changed := strings.Replace(two, "  - name: side\n    image: busybox:1.37", "  - name: side\n    image: busybox:1.36", 1)
	if err := os.WriteFile(path, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := kubectl(t, url, append(auth, "apply", "-f", path, "-v=6")...)
	if code != 0 || strings.TrimSpace(out) != "pod/pushed configured" || !strings.Contains(errOut, "/openapi/v3/api/v1?hash=") {
		t.Fatalf("apply (changed): exit %d, %q; want configured, the schemas read, in\n%s", code, out, errOut)
	}
	waitFor(t, url, "app=busybox:1.37 side=busybox:1.36", append(auth, "get", "pod", "pushed", "-o", `jsonpath={range .spec.containers[*]}{.name}={.image} {end}`)...)
}
