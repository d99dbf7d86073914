package kubeapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/internal/api"
	"github.com/actorlet/actorlet/messages"
)

// serve starts the API over fb (behind internal/api's server chain, as the
// agent mounts it), refreshing every 10 ms, until the test ends.
func serve(t *testing.T, fb *fakeBackend, opts ...func(*Options)) (*httptest.Server, *Handler) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	o := Options{NodeName: "node-1", Resync: 10 * time.Millisecond, Now: func() time.Time { return t0.Add(time.Hour) }, Context: ctx}
	for _, f := range opts {
		f(&o)
	}
	h := New(fb, o)
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	srv := httptest.NewServer(api.New(fb, api.Options{Kube: h}))
	t.Cleanup(func() {
		cancel()
		srv.Close()
		<-done
	})
	return srv, h
}

// do sends one request and returns the status code and body.
func do(t *testing.T, method, url, accept string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

func decodeAs[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	return v
}

func TestDiscovery(t *testing.T) {
	srv, _ := serve(t, &fakeBackend{})
	code, body := do(t, "GET", srv.URL+"/api", "")
	if v := decodeAs[metav1.APIVersions](t, body); code != 200 || fmt.Sprint(v.Versions) != "[v1]" {
		t.Fatalf("/api = %d %s", code, body)
	}
	code, body = do(t, "GET", srv.URL+"/api/v1", "")
	rl := decodeAs[metav1.APIResourceList](t, body)
	var names []string
	for _, r := range rl.APIResources {
		names = append(names, r.Name+":"+strings.Join(r.Verbs, ","))
	}
	if want := "[events:get,list,watch nodes:get,list,watch pods:get,list,watch pods/log:get pods/exec:create,get]"; code != 200 || fmt.Sprint(names) != want {
		t.Fatalf("/api/v1 = %d %v, want %s", code, names, want)
	}
	code, body = do(t, "GET", srv.URL+"/apis", "")
	if g := decodeAs[metav1.APIGroupList](t, body); code != 200 || len(g.Groups) != 0 || g.Kind != "APIGroupList" {
		t.Fatalf("/apis = %d %s", code, body)
	}
	code, body = do(t, "GET", srv.URL+"/version", "")
	if code != 200 || !strings.Contains(string(body), `"gitVersion":"v1.37.0-actorlet.`) {
		t.Fatalf("/version = %d %s", code, body)
	}
	code, body = do(t, "GET", srv.URL+"/openapi/v3", "")
	if code != 200 || !strings.Contains(string(body), `/openapi/v3/api/v1?hash=`) {
		t.Fatalf("/openapi/v3 = %d %s", code, body)
	}
	code, body = do(t, "GET", srv.URL+"/openapi/v3/api/v1", "")
	if code != 200 || !strings.Contains(string(body), `"x-kubernetes-group-version-kind":{"group":"","kind":"Pod","version":"v1"}`) {
		t.Fatalf("/openapi/v3/api/v1 = %d %s", code, body)
	}
}

func TestErrorsAreStatuses(t *testing.T) {
	fb := &fakeBackend{}
	fb.setPods(runningPod("default", "web", nil))
	srv, _ := serve(t, fb)
	cases := []struct {
		method, path string
		code         int
		reason       metav1.StatusReason
		msg          string
	}{
		{"GET", "/api/v1/namespaces/default/pods/nope", 404, metav1.StatusReasonNotFound, `pods "nope" not found`},
		{"GET", "/api/v1/services", 404, metav1.StatusReasonNotFound, "the server could not find the requested resource"},
		{"GET", "/apis/apps/v1", 404, metav1.StatusReasonNotFound, "the server could not find the requested resource"},
		{"GET", "/api/v1/namespaces/default/configmaps", 404, metav1.StatusReasonNotFound, "could not find"},
		{"POST", "/api/v1/namespaces/default/pods", 405, metav1.StatusReasonMethodNotAllowed, "create pods"},
		{"DELETE", "/api/v1/namespaces/default/pods/web", 405, metav1.StatusReasonMethodNotAllowed, "delete pods"},
		{"POST", "/api/v1/nodes", 405, metav1.StatusReasonMethodNotAllowed, "create nodes"},
		{"GET", "/api/v1/namespaces/Bad_NS/pods", 400, metav1.StatusReasonBadRequest, "invalid name"},
		{"GET", "/api/v1/pods?fieldSelector=spec.bogus%3Dx", 400, metav1.StatusReasonBadRequest, "field label not supported: spec.bogus"},
		{"GET", "/api/v1/pods?labelSelector=a%20in", 400, metav1.StatusReasonBadRequest, "unable to parse"},
		{"GET", "/api/v1/pods?watch=1&resourceVersion=5", 410, metav1.StatusReasonExpired, "too old resource version: 5"},
		{"GET", "/api/v1/namespaces/default/pods/web/log?tailLines=-1", 400, metav1.StatusReasonBadRequest, "tailLines"},
	}
	for _, c := range cases {
		code, body := do(t, c.method, srv.URL+c.path, "")
		st := decodeAs[metav1.Status](t, body)
		if code != c.code || st.Code != int32(c.code) || st.Reason != c.reason || st.Kind != "Status" || !strings.Contains(st.Message, c.msg) {
			t.Errorf("%s %s = %d %s; want %d %s containing %q", c.method, c.path, code, body, c.code, c.reason, c.msg)
		}
	}
}

func TestListSelectors(t *testing.T) {
	fb := &fakeBackend{}
	failed := runningPod("kube-system", "dns", map[string]string{"app": "dns"})
	failed.Status.Phase = v1.PodFailed
	fb.setPods(runningPod("default", "web", map[string]string{"app": "web", "tier": "front"}),
		runningPod("default", "db", map[string]string{"app": "db"}), failed)
	srv, _ := serve(t, fb)
	cases := []struct {
		path string
		want string
	}{
		{"/api/v1/pods", "[db web dns]"},
		{"/api/v1/namespaces/default/pods", "[db web]"},
		{"/api/v1/namespaces/default/pods?labelSelector=app%3Dweb", "[web]"},
		{"/api/v1/pods?labelSelector=app%20in%20(db,dns)", "[db dns]"},
		{"/api/v1/pods?labelSelector=tier", "[web]"},
		{"/api/v1/pods?fieldSelector=metadata.name%3Ddb", "[db]"},
		{"/api/v1/pods?fieldSelector=metadata.namespace%3Dkube-system", "[dns]"},
		{"/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-1,status.phase!%3DFailed", "[db web]"},
		{"/api/v1/pods?fieldSelector=spec.nodeName%3Dother", "[]"},
	}
	for _, c := range cases {
		code, body := do(t, "GET", srv.URL+c.path, "")
		l := decodeAs[v1.PodList](t, body)
		var names []string
		for _, p := range l.Items {
			names = append(names, p.Name)
			if p.Kind != "" || p.ResourceVersion == "" {
				t.Errorf("%s: item %s has kind %q, resourceVersion %q", c.path, p.Name, p.Kind, p.ResourceVersion)
			}
		}
		if code != 200 || fmt.Sprint(names) != c.want && !(c.want == "[]" && names == nil) || l.Kind != "PodList" || l.ResourceVersion == "" {
			t.Errorf("%s = %d %v (kind %q, rv %q), want %s", c.path, code, names, l.Kind, l.ResourceVersion, c.want)
		}
	}
	code, body := do(t, "GET", srv.URL+"/api/v1/namespaces/default/pods/web", "")
	p := decodeAs[v1.Pod](t, body)
	if code != 200 || p.Kind != "Pod" || p.APIVersion != "v1" || p.ResourceVersion == "" || p.UID != "uid-web" {
		t.Fatalf("get web = %d kind %q/%q rv %q uid %q", code, p.APIVersion, p.Kind, p.ResourceVersion, p.UID)
	}
}

const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

func TestPodTable(t *testing.T) {
	now := t0.Add(time.Hour)
	fb := &fakeBackend{}
	fb.setPods(runningPod("default", "web", nil), crashing(runningPod("default", "crasher", nil), 5, now.Add(-2*time.Minute)))
	srv, _ := serve(t, fb)
	code, body := do(t, "GET", srv.URL+"/api/v1/namespaces/default/pods", tableAccept)
	tb := decodeAs[metav1.Table](t, body)
	if code != 200 || tb.Kind != "Table" || len(tb.ColumnDefinitions) != 9 || len(tb.Rows) != 2 {
		t.Fatalf("table = %d %s", code, body)
	}
	got := fmt.Sprint(tb.Rows[0].Cells, tb.Rows[1].Cells)
	want := "[crasher 0/1 CrashLoopBackOff 5 (2m ago) 60m 172.17.0.5 node-1 <none> <none>] [web 1/1 Running 0 60m 172.17.0.5 node-1 <none> <none>]"
	if got != want {
		t.Fatalf("rows\n got %s\nwant %s", got, want)
	}
	meta := decodeAs[metav1.PartialObjectMetadata](t, tb.Rows[0].Object.Raw)
	if meta.Kind != "PartialObjectMetadata" || meta.Name != "crasher" {
		t.Fatalf("row object = %s", tb.Rows[0].Object.Raw)
	}
}

func TestPodStatusColumn(t *testing.T) {
	sidecar := v1.ContainerRestartPolicyAlways
	yes := true
	cases := []struct {
		name string
		mod  func(p *v1.Pod)
		want string
	}{
		{"running", func(p *v1.Pod) {}, "Running"},
		{"waiting reason", func(p *v1.Pod) {
			p.Status.ContainerStatuses[0].State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ErrImagePull"}}
		}, "ErrImagePull"},
		{"completed", func(p *v1.Pod) {
			p.Status.Phase = v1.PodSucceeded
			p.Status.ContainerStatuses[0].State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{Reason: "Completed"}}
		}, "Completed"},
		{"exit code without reason", func(p *v1.Pod) {
			p.Status.ContainerStatuses[0].State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 3}}
		}, "ExitCode:3"},
		{"pod reason", func(p *v1.Pod) { p.Status.Phase, p.Status.Reason = v1.PodFailed, "NodePorts" }, "NodePorts"},
		{"init running", func(p *v1.Pod) {
			p.Status.Phase = v1.PodPending
			p.Spec.InitContainers = []v1.Container{{Name: "a"}, {Name: "b"}}
			p.Status.InitContainerStatuses = []v1.ContainerStatus{
				{Name: "a", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 0}}},
				{Name: "b", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}},
			}
		}, "Init:1/2"},
		{"init crashing", func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "a"}}
			p.Status.InitContainerStatuses = []v1.ContainerStatus{{Name: "a", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}
		}, "Init:CrashLoopBackOff"},
		{"started sidecar does not hold the status", func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "s", RestartPolicy: &sidecar}}
			p.Status.InitContainerStatuses = []v1.ContainerStatus{{Name: "s", Started: &yes, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}
		}, "Running"},
		{"terminating", func(p *v1.Pod) { now := metav1.NewTime(t0); p.DeletionTimestamp = &now }, "Terminating"},
	}
	for _, c := range cases {
		p := runningPod("default", "p", nil)
		c.mod(p)
		if got := podStatus(p); got != c.want {
			t.Errorf("%s: status %q, want %q", c.name, got, c.want)
		}
	}
}

// watchStream opens a watch and returns its events as they arrive.
func watchStream(t *testing.T, url, accept string) <-chan metav1.WatchEvent {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("watch %s = %d %s", url, resp.StatusCode, body)
	}
	t.Cleanup(func() { resp.Body.Close() })
	ch := make(chan metav1.WatchEvent, 100)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var ev metav1.WatchEvent
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				ch <- ev
			}
		}
	}()
	return ch
}

// next waits (at most 5 s) for the next event.
func next(t *testing.T, ch <-chan metav1.WatchEvent) (string, map[string]any) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("watch ended")
		}
		var obj map[string]any
		_ = json.Unmarshal(ev.Object.Raw, &obj)
		return ev.Type, obj
	case <-time.After(5 * time.Second):
		t.Fatal("no watch event within 5 s")
	}
	return "", nil
}

func nameOfObj(obj map[string]any) string {
	m, _ := obj["metadata"].(map[string]any)
	s, _ := m["name"].(string)
	return s
}

func TestWatchPods(t *testing.T) {
	fb := &fakeBackend{}
	web := runningPod("default", "web", map[string]string{"app": "web"})
	fb.setPods(web, runningPod("default", "db", nil))
	srv, _ := serve(t, fb)
	code, body := do(t, "GET", srv.URL+"/api/v1/namespaces/default/pods", "")
	list := decodeAs[v1.PodList](t, body)
	if code != 200 {
		t.Fatal(code)
	}
	all := watchStream(t, srv.URL+"/api/v1/namespaces/default/pods?watch=1&resourceVersion="+list.ResourceVersion, "")
	sel := watchStream(t, srv.URL+"/api/v1/pods?watch=true&labelSelector=app%3Dweb", "")
	if typ, obj := next(t, sel); typ != "ADDED" || nameOfObj(obj) != "web" {
		t.Fatalf("selected watch first event %s %s, want ADDED web", typ, nameOfObj(obj))
	}
	fb.setPods(crashing(web, 1, t0), runningPod("default", "db", nil))
	if typ, obj := next(t, all); typ != "MODIFIED" || nameOfObj(obj) != "web" {
		t.Fatalf("event %s %s, want MODIFIED web", typ, nameOfObj(obj))
	}
	if typ, _ := next(t, sel); typ != "MODIFIED" {
		t.Fatalf("selected watch: %s, want MODIFIED", typ)
	}
	moved := crashing(web, 1, t0)
	moved.Labels = map[string]string{"app": "other"}
	fb.setPods(moved)
	for _, want := range []string{"DELETED db", "MODIFIED web"} {
		if typ, obj := next(t, all); typ+" "+nameOfObj(obj) != want {
			t.Fatalf("event %s %s, want %s", typ, nameOfObj(obj), want)
		}
	}
	if typ, obj := next(t, sel); typ != "DELETED" || nameOfObj(obj) != "web" {
		t.Fatalf("selected watch: %s %s, want DELETED web (it left the selection)", typ, nameOfObj(obj))
	}
}

func TestWatchBookmarksAndExpiry(t *testing.T) {
	fb := &fakeBackend{}
	fb.setPods(runningPod("default", "web", nil))
	srv, h := serve(t, fb, func(o *Options) { o.BookmarkInterval = 20 * time.Millisecond; o.History = 2 })
	ch := watchStream(t, srv.URL+"/api/v1/pods?watch=1&allowWatchBookmarks=true", "")
	if typ, _ := next(t, ch); typ != "ADDED" {
		t.Fatalf("first event %s, want ADDED", typ)
	}
	typ, obj := next(t, ch)
	md, _ := obj["metadata"].(map[string]any)
	if typ != "BOOKMARK" || obj["kind"] != "Pod" || md["resourceVersion"] != fmt.Sprint(h.store.version()) {
		t.Fatalf("event %s %v, want BOOKMARK of kind Pod at %d", typ, obj, h.store.version())
	}
	old := h.store.version()
	for i := range 3 {
		fb.setPods(crashing(runningPod("default", "web", nil), int32(i+1), t0))
		deadline := time.Now().Add(5 * time.Second)
		for h.store.version() < old+uint64(i+1) && time.Now().Before(deadline) {
			_ = h.refresh(context.Background())
		}
	}
	code, body := do(t, "GET", fmt.Sprintf("%s/api/v1/pods?watch=1&resourceVersion=%d", srv.URL, old), "")
	if st := decodeAs[metav1.Status](t, body); code != 410 || st.Reason != metav1.StatusReasonExpired {
		t.Fatalf("watch from a dropped version = %d %s, want 410 Expired", code, body)
	}
}

func TestWatchTable(t *testing.T) {
	fb := &fakeBackend{}
	web := runningPod("default", "web", nil)
	fb.setPods(web)
	srv, _ := serve(t, fb)
	ch := watchStream(t, srv.URL+"/api/v1/namespaces/default/pods?watch=1", tableAccept)
	typ, obj := next(t, ch)
	if typ != "ADDED" || obj["kind"] != "Table" || obj["columnDefinitions"] == nil {
		t.Fatalf("first event %s %v, want ADDED Table with columns", typ, obj)
	}
	fb.setPods(crashing(web, 1, t0))
	typ, obj = next(t, ch)
	rows, _ := obj["rows"].([]any)
	if typ != "MODIFIED" || obj["kind"] != "Table" || obj["columnDefinitions"] != nil || len(rows) != 1 {
		t.Fatalf("second event %s %v, want MODIFIED Table, one row, no columns", typ, obj)
	}
	cells := rows[0].(map[string]any)["cells"].([]any)
	if cells[2] != "CrashLoopBackOff" {
		t.Fatalf("cells %v, want CrashLoopBackOff", cells)
	}
}

func TestNodeAndEvents(t *testing.T) {
	fb := &fakeBackend{health: api.Health{OK: false, Checks: []api.Check{{Name: "runtime", Message: "docker: connection refused"}}}}
	web := runningPod("default", "web", nil)
	fb.setPods(web)
	fb.addEvent(messages.Event{Time: t0, Type: messages.EventNormal, Reason: "Started", Namespace: "default", Pod: "web", UID: web.UID, Container: "app", Message: "Started container app"})
	fb.addEvent(messages.Event{Time: t0, Type: messages.EventWarning, Reason: "BackOff", Namespace: "other", Pod: "db", UID: "uid-db", Message: "Back-off"})
	srv, _ := serve(t, fb)
	code, body := do(t, "GET", srv.URL+"/api/v1/nodes/node-1", "")
	n := decodeAs[v1.Node](t, body)
	if code != 200 || n.Kind != "Node" || len(n.Status.Conditions) != 1 || n.Status.Conditions[0].Status != v1.ConditionFalse ||
		!strings.Contains(n.Status.Conditions[0].Message, "runtime: docker: connection refused") {
		t.Fatalf("node = %d %s", code, body)
	}
	code, body = do(t, "GET", srv.URL+"/api/v1/nodes", tableAccept)
	tb := decodeAs[metav1.Table](t, body)
	if code != 200 || len(tb.Rows) != 1 || fmt.Sprint(tb.Rows[0].Cells[:5]) != "[node-1 NotReady <none> 60m v0.1.0]" {
		t.Fatalf("nodes table = %d %s", code, body)
	}
	sel := "involvedObject.name%3Dweb,involvedObject.namespace%3Ddefault,involvedObject.uid%3Duid-web,involvedObject.kind%3DPod"
	code, body = do(t, "GET", srv.URL+"/api/v1/namespaces/default/events?fieldSelector="+sel, "")
	el := decodeAs[v1.EventList](t, body)
	if code != 200 || len(el.Items) != 1 || el.Items[0].Reason != "Started" || el.Items[0].ResourceVersion == "" {
		t.Fatalf("events of web = %d %s", code, body)
	}
	code, body = do(t, "GET", srv.URL+"/api/v1/events", "")
	if el := decodeAs[v1.EventList](t, body); code != 200 || len(el.Items) != 2 {
		t.Fatalf("all events = %d %s", code, body)
	}
	ch := watchStream(t, srv.URL+"/api/v1/namespaces/default/events?watch=1", "")
	if typ, _ := next(t, ch); typ != "ADDED" {
		t.Fatalf("events watch: %s, want ADDED", typ)
	}
	fb.addEvent(messages.Event{Time: t0.Add(time.Second), Type: messages.EventNormal, Reason: "Killing", Namespace: "default", Pod: "web", UID: web.UID, Message: "Stopping"})
	if typ, obj := next(t, ch); typ != "ADDED" || obj["reason"] != "Killing" {
		t.Fatalf("events watch: %s %v, want ADDED Killing", typ, obj)
	}
}

func TestPodLog(t *testing.T) {
	fb := &fakeBackend{logs: map[string]string{"default/web/app": "one\ntwo\n"}}
	two := runningPod("default", "two", nil)
	two.Spec.Containers = append(two.Spec.Containers, v1.Container{Name: "side"})
	fb.setPods(runningPod("default", "web", nil), two)
	srv, _ := serve(t, fb)
	code, body := do(t, "GET", srv.URL+"/api/v1/namespaces/default/pods/web/log?tailLines=1&follow=true&timestamps=true", "")
	if code != 200 || string(body) != "one\ntwo\n" {
		t.Fatalf("log = %d %q", code, body)
	}
	code, body = do(t, "GET", srv.URL+"/api/v1/namespaces/default/pods/web/log?limitBytes=3&previous=1", "")
	if code != 200 || string(body) != "one" {
		t.Fatalf("limited log = %d %q", code, body)
	}
	fb.mu.Lock()
	calls := fmt.Sprint(fb.logCall)
	fb.mu.Unlock()
	if want := "[default/web/app previous=false follow=true tail=1 ts=true default/web/app previous=true follow=false tail=0 ts=false]"; calls != want {
		t.Fatalf("log calls %s, want %s", calls, want)
	}
	code, body = do(t, "GET", srv.URL+"/api/v1/namespaces/default/pods/two/log", "")
	if code != 400 || !strings.Contains(string(body), "a container name must be specified for pod two, choose one of: [app side]") {
		t.Fatalf("log of a two-container pod = %d %s", code, body)
	}
	code, body = do(t, "GET", srv.URL+"/api/v1/namespaces/default/pods/web/log?container=nope", "")
	if code != 400 || !strings.Contains(string(body), "container nope is not valid for pod web") {
		t.Fatalf("log of a missing container = %d %s", code, body)
	}
}
