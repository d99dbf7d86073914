package url

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/actorlet/actorlet/sources"
	"github.com/actorlet/actorlet/sources/sourcetest"
)

const (
	confV1 = `apiVersion: v1
kind: ConfigMap
metadata:
  name: conf
data:
  app.conf: v1
`
	creds = `apiVersion: v1
kind: Secret
metadata:
  name: creds
  namespace: team
stringData:
  password: hunter2-s3cret
`
)

func wantObjects(t *testing.T, u sources.Update, want string) {
	t.Helper()
	if u.Err != nil || sourcetest.ObjectNames(u) != want {
		t.Fatalf("update = %s with objects %q, want objects %q", describe(u), sourcetest.ObjectNames(u), want)
	}
}

// A multi-document YAML body carries ConfigMaps and Secrets with its pods;
// a changed one is updated and a removed one removed.
func TestRunMultiDocumentObjects(t *testing.T) {
	body := func(docs ...string) string { return strings.Join(docs, "---\n") }
	srv := newServer(t, response{body: body(podYAML("web", "nginx:1"), confV1, creds)})
	r := start(t, srv.URL+"/all.yaml")
	u := r.next(t)
	wantPods(t, u, "default/web=nginx:1")
	wantObjects(t, u, "ConfigMap default/conf=v1,Secret team/creds=hunter2-s3cret")
	wantProblems(t, u)
	if got := u.ConfigMaps[0].Annotations[AnnotationSourceURL]; got != srv.URL+"/all.yaml" {
		t.Errorf("ConfigMap annotation %s = %q", AnnotationSourceURL, got)
	}
	if len(u.Secrets[0].StringData) != 0 {
		t.Error("Secret's stringData not merged into data")
	}
	web := u.Pods[0].UID

	// The ConfigMap changes: only it changes, the pod keeps its UID.
	srv.set(response{body: body(podYAML("web", "nginx:1"), strings.Replace(confV1, "app.conf: v1", "app.conf: v2", 1), creds)})
	u = r.next(t)
	wantObjects(t, u, "ConfigMap default/conf=v2,Secret team/creds=hunter2-s3cret")
	if u.Pods[0].UID != web {
		t.Errorf("pod UID changed with the ConfigMap: %s → %s", web, u.Pods[0].UID)
	}

	// The Secret is removed from the body: it is removed.
	srv.set(response{body: body(podYAML("web", "nginx:1"), strings.Replace(confV1, "app.conf: v1", "app.conf: v2", 1))})
	u = r.next(t)
	wantObjects(t, u, "ConfigMap default/conf=v2")
	wantPods(t, u, "default/web=nginx:1")

	// Nothing leaks the Secret's value.
	sourcetest.NoSecretShown(t, r.logs, u.Problems, "hunter2")
}

// A List (kind List) carries pods, ConfigMaps and Secrets as items; a bad
// item is a problem naming it, keeping its last good object, and one
// object defined twice is won by the first.
func TestPollerObjectList(t *testing.T) {
	toJSON := func(items ...string) string {
		return `{"apiVersion": "v1", "kind": "List", "items": [` + strings.Join(items, ",") + `]}`
	}
	cm := func(name, value string) string {
		return fmt.Sprintf(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": %q}, "data": {"app.conf": %q}}`, name, value)
	}
	secret := func(name, value string) string {
		v, _ := json.Marshal(map[string]string{"password": value})
		return fmt.Sprintf(`{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": %q, "namespace": "team"}, "stringData": %s}`, name, v)
	}
	p, logs := newTestPoller()
	u := mustHandle(t, p, toJSON(podJSON("web", "nginx:1"), cm("conf", "v1"), secret("creds", "hunter2-s3cret")), true)
	wantPods(t, u, "default/web=nginx:1")
	wantObjects(t, u, "ConfigMap default/conf=v1,Secret team/creds=hunter2-s3cret")
	wantProblems(t, u)

	// A bad Secret (a key that is not valid) keeps its last good version;
	// a second ConfigMap conf loses to the first.
	bad := `{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds", "namespace": "team"}, "stringData": {"bad key!": "hunter2-other"}}`
	u = mustHandle(t, p, toJSON(podJSON("web", "nginx:1"), cm("conf", "v1"), bad, cm("conf", "v9")), true)
	wantObjects(t, u, "ConfigMap default/conf=v1,Secret team/creds=hunter2-s3cret")
	wantProblems(t, u,
		[]string{"manifest " + testURL + ": items[2]: ", "data[bad key!]"},
		[]string{"items[3]: ConfigMap default/conf is also defined by items[1], which comes first and wins"},
	)
	// An unknown kind in a List is the item's problem, not the body's.
	u = mustHandle(t, p, toJSON(cm("conf", "v1"), `{"apiVersion": "apps/v1", "kind": "Deployment"}`), true)
	wantObjects(t, u, "ConfigMap default/conf=v1")
	wantProblems(t, u, []string{"items[1]: ", `"Deployment"`})

	sourcetest.NoSecretShown(t, logs, u.Problems, "hunter2")
}

// A bad document in a multi-document body is that document's problem,
// named by its number and line.
func TestPollerMultiDocumentProblem(t *testing.T) {
	p, _ := newTestPoller()
	u := mustHandle(t, p, confV1+"---\n"+strings.Replace(creds, "password", "bad key!", 1), true)
	wantObjects(t, u, "ConfigMap default/conf=v1")
	wantProblems(t, u, []string{"manifest " + testURL + ": document 2 (line 8): ", "data[bad key!]"})
	if strings.Contains(u.Problems[0].Error(), "hunter2") {
		t.Errorf("problem shows the Secret's value: %v", u.Problems[0])
	}
}
