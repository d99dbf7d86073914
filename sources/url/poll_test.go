package url

import (
	"errors"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest/observer"

	"github.com/actorlet/actorlet/internal/manifest"
	"github.com/actorlet/actorlet/sources"
)

// These tests drive the poller directly: one handle() per poll, no HTTP,
// no timing.

const testURL = "https://config.example.com/pods"

func newTestPoller() (*poller, *observer.ObservedLogs) {
	log, logs := observedLogger()
	return newPoller("http:"+testURL, testURL, testNode, log), logs
}

// mustHandle feeds one successful response to p and checks whether it
// sends.
func mustHandle(t *testing.T, p *poller, body string, wantSend bool) sources.Update {
	t.Helper()
	u, send := p.handle([]byte(body), nil)
	if send != wantSend {
		t.Fatalf("handle sent = %v, want %v: %s", send, wantSend, describe(u))
	}
	if u.Source != "http:"+testURL {
		t.Errorf("Source = %q", u.Source)
	}
	return u
}

func TestPollerSinglePod(t *testing.T) {
	for name, body := range map[string]string{"yaml": podYAML("web", "nginx:1.25"), "json": podJSON("web", "nginx:1.25")} {
		t.Run(name, func(t *testing.T) {
			p, _ := newTestPoller()
			u := mustHandle(t, p, body, true)
			wantPods(t, u, "default/web=nginx:1.25")
			wantProblems(t, u)
			pod := u.Pods[0]
			if pod.UID == "" {
				t.Fatal("pod has no UID")
			}
			want := map[string]string{
				manifest.AnnotationConfigSource: "http",
				manifest.AnnotationConfigHash:   string(pod.UID),
				AnnotationSourceURL:             testURL,
			}
			for k, v := range want {
				if pod.Annotations[k] != v {
					t.Errorf("annotation %s = %q, want %q", k, pod.Annotations[k], v)
				}
			}
			if pod.Spec.RestartPolicy != "Always" || *pod.Spec.TerminationGracePeriodSeconds != 30 {
				t.Errorf("pod not defaulted: %+v", pod.Spec)
			}
			mustHandle(t, p, body, false) // unchanged
		})
	}
}

func TestPollerUIDs(t *testing.T) {
	p, _ := newTestPoller()
	u := mustHandle(t, p, podList(item("web", "nginx:1.25"), item("api", "api:1")), true)
	wantPods(t, u, "default/web=nginx:1.25", "default/api=api:1")
	web, api := u.Pods[0].UID, u.Pods[1].UID
	if web == api {
		t.Fatalf("two pods share UID %s", web)
	}

	// The same pods written differently: YAML, other key order, items
	// swapped, kind and apiVersion spelled out. No change, nothing sent.
	same := `kind: PodList
apiVersion: v1
items:
- metadata: {name: api}
  spec:
    containers: [{image: "api:1", name: app}]
- kind: Pod
  apiVersion: v1
  metadata: {name: web, namespace: default}
  spec: {containers: [{name: app, image: "nginx:1.25"}], restartPolicy: Always}
`
	mustHandle(t, p, same, false)

	// A real edit of one pod changes its UID only.
	u = mustHandle(t, p, podList(item("web", "nginx:1.26"), item("api", "api:1")), true)
	wantPods(t, u, "default/web=nginx:1.26", "default/api=api:1")
	if u.Pods[0].UID == web || u.Pods[1].UID != api {
		t.Errorf("UIDs web %s→%s, api %s→%s: want only web's changed", web, u.Pods[0].UID, api, u.Pods[1].UID)
	}

	// Alone rather than in a list, a pod keeps its UID.
	u = mustHandle(t, p, podYAML("api", "api:1"), true)
	wantPods(t, u, "default/api=api:1")
	if u.Pods[0].UID != api {
		t.Errorf("single pod UID %s, want the list item's %s", u.Pods[0].UID, api)
	}

	// Other URL, other node: other UIDs.
	for _, q := range []*poller{newPoller("http:x", testURL+"2", testNode, p.log), newPoller("http:x", testURL, "node-2", p.log)} {
		u, _ := q.handle([]byte(podYAML("api", "api:1")), nil)
		if u.Pods[0].UID == api {
			t.Errorf("poller for %s on %s gives the same UID", q.url, q.node)
		}
	}

	// metadata.uid wins.
	u = mustHandle(t, p, `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "api", "uid": "u-1"}, "spec": {"containers": [{"name": "app", "image": "api:1"}]}}`, true)
	if u.Pods[0].UID != "u-1" || u.Pods[0].Annotations[manifest.AnnotationConfigHash] != "u-1" {
		t.Errorf("UID = %s, want metadata.uid u-1", u.Pods[0].UID)
	}
}

func TestPollerInvalidItem(t *testing.T) {
	p, logs := newTestPoller()
	u := mustHandle(t, p, podList(item("web", "nginx:1"), item("api", "api:1"), item("db", "db:1")), true)
	wantPods(t, u, "default/web=nginx:1", "default/api=api:1", "default/db=db:1")
	api := u.Pods[1]

	// api breaks (validation), db breaks (decoding), a new pod is bad from
	// the start: the others apply, api and db keep their last good spec.
	bad := podList(item("web", "nginx:2"), item("api", ""),
		`{"metadata": {"name": "db"}, "spec": {"containers": [{"name": "app", "imagee": "db:2"}]}}`,
		item("new", "new:1"), `{"metadata": {"name": "Bad_Name"}, "spec": {"containers": [{"name": "app", "image": "x"}]}}`)
	u = mustHandle(t, p, bad, true)
	wantPods(t, u, "default/web=nginx:2", "default/api=api:1", "default/db=db:1", "default/new=new:1")
	if u.Pods[1] != api {
		t.Errorf("api is not its last good pod")
	}
	wantProblems(t, u,
		[]string{"manifest " + testURL + ": ", "items[1].spec.containers[0].image: Required value"},
		[]string{"manifest " + testURL + ": ", `unknown field "items[2].spec.containers[0].imagee"`},
		[]string{"manifest " + testURL + ": ", `items[4].metadata.name: Invalid value: "Bad_Name"`},
	)
	var fe *manifest.FileError
	if !errors.As(u.Problems[0], &fe) || fe.Path != testURL {
		t.Errorf("problem %v is not a *manifest.FileError for the URL", u.Problems[0])
	}
	if n := logs.FilterMessage("manifest item rejected; its pod keeps its last good spec").Len(); n != 2 {
		t.Errorf("logged %d rejections keeping a pod, want 2", n)
	}

	// The same problems again, in a response that changed elsewhere: no
	// new log lines.
	u = mustHandle(t, p, strings.Replace(bad, "nginx:2", "nginx:3", 1), true)
	wantPods(t, u, "default/web=nginx:3", "default/api=api:1", "default/db=db:1", "default/new=new:1")
	if n := logs.FilterMessage("manifest item rejected; its pod keeps its last good spec").Len(); n != 2 {
		t.Errorf("logged %d rejections keeping a pod after an unrelated change, want still 2", n)
	}

	// A bad item that leaves the list takes its last good pod with it.
	u = mustHandle(t, p, podList(item("web", "nginx:3"), item("api", "")), true)
	wantPods(t, u, "default/web=nginx:3", "default/api=api:1")

	// Fixed.
	u = mustHandle(t, p, podList(item("web", "nginx:3"), item("api", "api:2")), true)
	wantPods(t, u, "default/web=nginx:3", "default/api=api:2")
	wantProblems(t, u)
}

func TestPollerInvalidSinglePod(t *testing.T) {
	p, _ := newTestPoller()
	mustHandle(t, p, podYAML("web", "nginx:1"), true)
	u := mustHandle(t, p, strings.Replace(podYAML("web", "nginx:2"), "image:", "imagee:", 1), true)
	wantPods(t, u, "default/web=nginx:1")
	wantProblems(t, u, []string{`manifest ` + testURL + `: unknown field "spec.containers[0].imagee"`})
}

func TestPollerDuplicates(t *testing.T) {
	p, logs := newTestPoller()
	body := podList(item("web", "nginx:first"), item("api", "api:1"), item("web", "nginx:second"),
		`{"metadata": {"name": "web", "namespace": "other"}, "spec": {"containers": [{"name": "app", "image": "nginx:other-ns"}]}}`)
	u := mustHandle(t, p, body, true)
	wantPods(t, u, "default/web=nginx:first", "default/api=api:1", "other/web=nginx:other-ns")
	wantProblems(t, u, []string{testURL, "items[2]: pod default/web is also defined by items[0], which comes first and wins"})
	if n := logs.FilterMessage("two manifest items define the same pod").Len(); n != 1 {
		t.Errorf("warned %d times, want 1", n)
	}

	// The same explicit UID under two names.
	u = mustHandle(t, p, podList(
		`{"metadata": {"name": "a", "uid": "same"}, "spec": {"containers": [{"name": "app", "image": "x"}]}}`,
		`{"metadata": {"name": "b", "uid": "same"}, "spec": {"containers": [{"name": "app", "image": "y"}]}}`), true)
	wantPods(t, u, "default/a=x")
	wantProblems(t, u, []string{"items[1]: pod UID same is also defined by items[0]"})
}

func TestPollerEmptyList(t *testing.T) {
	p, _ := newTestPoller()
	u := mustHandle(t, p, "apiVersion: v1\nkind: PodList\nitems: []\n", true) // the first success is sent, even empty
	wantPods(t, u)
	mustHandle(t, p, podList(), false)
	mustHandle(t, p, podList(item("web", "nginx")), true)
	u = mustHandle(t, p, podList(), true)
	wantPods(t, u)
}

func TestPollerFailures(t *testing.T) {
	p, logs := newTestPoller()
	mustHandle(t, p, podYAML("web", "nginx"), true)

	// A failure is sent once while it stays the same; a different one is
	// sent again.
	for i, err := range []error{errors.New("HTTP status 500"), errors.New("HTTP status 500"), errors.New("HTTP status 503")} {
		u, send := p.handle(nil, err)
		if want := i != 1; send != want {
			t.Errorf("failure %d sent = %v, want %v", i, send, want)
		}
		if u.Err == nil || !strings.Contains(u.Err.Error(), "manifest URL "+testURL+": "+err.Error()) || u.Pods != nil {
			t.Errorf("failure %d update = %s", i, describe(u))
		}
	}
	// A malformed body is a failure too, named with the URL once.
	u, send := p.handle([]byte("kind: Deployment\napiVersion: apps/v1\n"), nil)
	if !send || u.Err == nil || u.Err.Error() != "manifest URL "+testURL+`: [kind: Unsupported value: "Deployment": supported values: "Pod", "PodList", "List", "ConfigMap", "Secret", apiVersion: Unsupported value: "apps/v1": supported values: "v1"]` {
		t.Errorf("wrong kind: sent %v, %s", send, describe(u))
	}
	if n := logs.FilterMessage("manifest URL poll failed; keeping the last set of pods").Len(); n != 3 {
		t.Errorf("logged %d failures, want 3", n)
	}

	// The same body as before the failures: sent again, as the recovery.
	u = mustHandle(t, p, podYAML("web", "nginx"), true)
	wantPods(t, u, "default/web=nginx")
	mustHandle(t, p, podYAML("web", "nginx"), false)
}
