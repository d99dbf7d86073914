package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/messages"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func testPod(ns, name string, phase v1.PodPhase) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name)},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "busybox"}}},
		Status: v1.PodStatus{
			Phase:     phase,
			PodIP:     "172.17.0.5",
			StartTime: &metav1.Time{Time: t0},
			ContainerStatuses: []v1.ContainerStatus{{
				Name: "app", Ready: true, RestartCount: 2,
				State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}},
			}},
		},
	}
}

// get serves one GET on h and returns the recorder.
func get(t *testing.T, h http.Handler, target string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func decode[T any](t *testing.T, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("decoding %q: %v", rec.Body.String(), err)
	}
	return v
}

func TestHealthz(t *testing.T) {
	cases := []struct {
		name   string
		health Health
		code   int
		ok     bool
	}{
		{"healthy", Health{OK: true, Checks: []Check{{Name: "runtime", OK: true}, {Name: "relist", OK: true}}}, 200, true},
		{"unhealthy", Health{OK: false, Checks: []Check{{Name: "runtime", OK: false, Message: "docker: connection refused"}}}, 503, false},
		{"failed check wins", Health{OK: true, Checks: []Check{{Name: "relist", OK: false, Message: "stuck 4m", Pod: "default/web"}}}, 503, false},
		{"no checks", Health{OK: true}, 200, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := get(t, New(&fakeBackend{health: c.health}, Options{}), "/healthz")
			if rec.Code != c.code {
				t.Fatalf("code = %d, want %d (%s)", rec.Code, c.code, rec.Body)
			}
			got := decode[Health](t, rec)
			if got.OK != c.ok || len(got.Checks) != len(c.health.Checks) {
				t.Fatalf("body = %+v, want ok=%v and %d checks", got, c.ok, len(c.health.Checks))
			}
			for i, ch := range got.Checks {
				if ch != c.health.Checks[i] {
					t.Errorf("check %d = %+v, want %+v", i, ch, c.health.Checks[i])
				}
			}
			if !strings.Contains(rec.Body.String(), `"checks":[`) {
				t.Errorf("checks must be a JSON list: %s", rec.Body)
			}
		})
	}
}

func TestPods(t *testing.T) {
	b := &fakeBackend{pods: []*v1.Pod{testPod("default", "a", v1.PodRunning), testPod("kube-system", "b", v1.PodPending)}}
	rec := get(t, New(b, Options{}), "/pods")
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("code = %d, type %q: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	list := decode[v1.PodList](t, rec)
	if list.Kind != "PodList" || list.APIVersion != "v1" || len(list.Items) != 2 {
		t.Fatalf("list = %s %s with %d items", list.APIVersion, list.Kind, len(list.Items))
	}
	got := list.Items[0]
	if got.Name != "a" || got.Status.Phase != v1.PodRunning || got.Status.PodIP != "172.17.0.5" ||
		got.Status.ContainerStatuses[0].RestartCount != 2 || !got.Status.StartTime.Equal(&metav1.Time{Time: t0}) {
		t.Errorf("first pod lost its status: %+v", got)
	}
	if list.Items[1].Namespace != "kube-system" {
		t.Errorf("order changed: %s", list.Items[1].Namespace)
	}

	rec = get(t, New(&fakeBackend{}, Options{}), "/pods")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"items":[]`) {
		t.Errorf("empty list: %d %s", rec.Code, rec.Body)
	}

	rec = get(t, New(&fakeBackend{podsErr: errors.New("node actor timed out")}, Options{}), "/pods")
	if rec.Code != 500 || decode[metav1.Status](t, rec).Message != "node actor timed out" {
		t.Errorf("backend error: %d %s", rec.Code, rec.Body)
	}
}

func TestPod(t *testing.T) {
	b := &fakeBackend{pods: []*v1.Pod{testPod("default", "a", v1.PodRunning), testPod("default", "web.example", v1.PodRunning)}}
	h := New(b, Options{})
	rec := get(t, h, "/pods/default/web.example")
	if rec.Code != 200 {
		t.Fatalf("code = %d: %s", rec.Code, rec.Body)
	}
	pod := decode[v1.Pod](t, rec)
	if pod.Kind != "Pod" || pod.APIVersion != "v1" || pod.Name != "web.example" || pod.Status.Phase != v1.PodRunning {
		t.Errorf("pod = %s %s %s %s", pod.APIVersion, pod.Kind, pod.Name, pod.Status.Phase)
	}
	if b.pods[1].Kind != "" {
		t.Error("the handler modified the backend's pod")
	}
	for target, code := range map[string]int{
		"/pods/default/missing":   404,
		"/pods/other/a":           404,
		"/pods/default/A":         400,
		"/pods/default/a/extra":   404,
		"/pods/default":           404,
		"/pods/de.fault/a":        400,
		"/pods/default/a%2Fb":     400,
		"/pods/default/..":        400,
		"/pods/default/a?x=1":     200,
		"/pods/" + longName + "/": 400,
	} {
		if rec := get(t, h, target); rec.Code != code {
			t.Errorf("GET %s: code = %d, want %d (%s)", target, rec.Code, code, rec.Body)
		}
	}
	rec = get(t, h, "/pods/default/missing")
	if st := decode[metav1.Status](t, rec); st.Reason != metav1.StatusReasonNotFound || st.Code != 404 || !strings.Contains(st.Message, "missing") {
		t.Errorf("404 status = %+v", st)
	}
}

var longName = strings.Repeat("a", 254)

func TestEvents(t *testing.T) {
	ev := func(sec int, typ messages.EventType, reason, ctr, msg string) messages.Event {
		return messages.Event{Time: t0.Add(time.Duration(sec) * time.Second), Type: typ, Reason: reason,
			Namespace: "default", Pod: "crasher", UID: "u1", Container: ctr, Message: msg}
	}
	b := &fakeBackend{events: []messages.Event{
		ev(0, messages.EventNormal, "Pulled", "app", "Container image \"busybox\" already present on machine"),
		ev(1, messages.EventNormal, "Started", "app", "Started container app"),
		ev(4, messages.EventWarning, "BackOff", "app", "Back-off restarting failed container app"),
		ev(5, messages.EventNormal, "Started", "app", "Started container app"),
		ev(9, messages.EventWarning, "BackOff", "app", "Back-off restarting failed container app"),
		ev(10, messages.EventWarning, "FailedSync", "", "error syncing pod"),
	}}
	rec := get(t, New(b, Options{}), "/events")
	if rec.Code != 200 {
		t.Fatalf("code = %d: %s", rec.Code, rec.Body)
	}
	list := decode[v1.EventList](t, rec)
	if list.Kind != "EventList" || list.APIVersion != "v1" {
		t.Errorf("list kind = %s %s", list.APIVersion, list.Kind)
	}
	var got []string
	for _, e := range list.Items {
		got = append(got, e.Reason)
	}
	if want := "Pulled Started BackOff FailedSync"; strings.Join(got, " ") != want {
		t.Fatalf("reasons = %v, want %s (repeats folded, newest last)", got, want)
	}
	backoff := list.Items[2]
	if backoff.Count != 2 || !backoff.FirstTimestamp.Time.Equal(t0.Add(4*time.Second)) ||
		!backoff.LastTimestamp.Time.Equal(t0.Add(9*time.Second)) || backoff.Type != "Warning" {
		t.Errorf("BackOff = count %d first %v last %v type %s", backoff.Count, backoff.FirstTimestamp, backoff.LastTimestamp, backoff.Type)
	}
	ref := backoff.InvolvedObject
	if ref.Kind != "Pod" || ref.Namespace != "default" || ref.Name != "crasher" || ref.UID != "u1" || ref.FieldPath != "spec.containers{app}" {
		t.Errorf("involvedObject = %+v", ref)
	}
	if backoff.Source.Component != "actorlet" || backoff.Message != "Back-off restarting failed container app" || backoff.Namespace != "default" || backoff.Name == "" {
		t.Errorf("event = %+v", backoff)
	}
	if fp := list.Items[3].InvolvedObject.FieldPath; fp != "" {
		t.Errorf("pod-level event fieldPath = %q, want empty", fp)
	}
	rec = get(t, New(&fakeBackend{}, Options{}), "/events")
	if !strings.Contains(rec.Body.String(), `"items":[]`) {
		t.Errorf("no events: %s", rec.Body)
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAuth(t *testing.T) {
	tokenFile := writeFile(t, "token", "s3cret-token\n")
	h := New(&fakeBackend{health: Health{OK: true}}, Options{TokenFile: tokenFile})
	for _, c := range []struct {
		name, header string
		code         int
	}{
		{"missing", "", 401},
		{"wrong", "Bearer wrong", 401},
		{"prefix of the token", "Bearer s3cret", 401},
		{"token plus more", "Bearer s3cret-token2", 401},
		{"other scheme", "Basic s3cret-token", 401},
		{"bare token", "s3cret-token", 401},
		{"empty bearer", "Bearer ", 401},
		{"right", "Bearer s3cret-token", 200},
		{"right, lower-case scheme", "bearer s3cret-token", 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			var rec *httptest.ResponseRecorder
			if c.header == "" {
				rec = get(t, h, "/healthz")
			} else {
				rec = get(t, h, "/healthz", "Authorization", c.header)
			}
			if rec.Code != c.code {
				t.Fatalf("code = %d, want %d", rec.Code, c.code)
			}
			if c.code == 401 && rec.Header().Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
	// Every endpoint is behind the token, hostile paths included.
	for _, target := range []string{"/pods", "/events", "/pods/default/a", "/logs/default/a/app", "/logs/%2e%2e/x/y", "/metrics"} {
		if rec := get(t, h, target); rec.Code != 401 {
			t.Errorf("GET %s without token: %d, want 401", target, rec.Code)
		}
	}

	t.Run("unreadable token file fails closed", func(t *testing.T) {
		h := New(&fakeBackend{health: Health{OK: true}}, Options{TokenFile: filepath.Join(t.TempDir(), "missing")})
		if rec := get(t, h, "/healthz", "Authorization", "Bearer x"); rec.Code != 500 {
			t.Errorf("code = %d, want 500", rec.Code)
		}
		empty := writeFile(t, "empty", " \n")
		if rec := get(t, New(&fakeBackend{health: Health{OK: true}}, Options{TokenFile: empty}), "/healthz", "Authorization", "Bearer "); rec.Code != 500 {
			t.Errorf("empty token file: code = %d, want 500", rec.Code)
		}
	})
}

func TestPprof(t *testing.T) {
	off := New(&fakeBackend{}, Options{})
	for _, p := range []string{"/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/goroutine"} {
		if rec := get(t, off, p); rec.Code != 404 {
			t.Errorf("pprof off: GET %s = %d, want 404", p, rec.Code)
		}
	}
	on := New(&fakeBackend{}, Options{EnablePprof: true})
	for _, p := range []string{"/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/goroutine?debug=1"} {
		if rec := get(t, on, p); rec.Code != 200 {
			t.Errorf("pprof on: GET %s = %d, want 200", p, rec.Code)
		}
	}
}

func TestMetrics(t *testing.T) {
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = io.WriteString(w, "actorlet_running_pods 3\n")
	})
	rec := get(t, New(&fakeBackend{}, Options{Metrics: metrics}), "/metrics")
	if rec.Code != 200 || rec.Body.String() != "actorlet_running_pods 3\n" {
		t.Errorf("metrics: %d %q", rec.Code, rec.Body)
	}
	if rec := get(t, New(&fakeBackend{}, Options{}), "/metrics"); rec.Code != 404 {
		t.Errorf("no metrics handler: %d, want 404", rec.Code)
	}
}

func TestMethodNotAllowed(t *testing.T) {
	h := New(&fakeBackend{}, Options{})
	req := httptest.NewRequest(http.MethodPost, "/pods", strings.NewReader("{}"))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /pods = %d, want 405", rec.Code)
	}
}
