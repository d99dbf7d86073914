package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/internal/api"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata/")

// cliTestNow is the fixed "now" of the CLI's golden tests.
var cliTestNow = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// ago is a metav1.Time d before cliTestNow.
func ago(d time.Duration) metav1.Time { return metav1.NewTime(cliTestNow.Add(-d)) }

func agoPtr(d time.Duration) *metav1.Time { t := ago(d); return &t }

func conditions(ready bool) []v1.PodCondition {
	st := v1.ConditionFalse
	if ready {
		st = v1.ConditionTrue
	}
	return []v1.PodCondition{
		{Type: v1.PodInitialized, Status: v1.ConditionTrue},
		{Type: v1.PodReady, Status: st},
		{Type: v1.ContainersReady, Status: st},
		{Type: v1.PodScheduled, Status: v1.ConditionTrue},
	}
}

func running(d time.Duration) v1.ContainerState {
	return v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: ago(d)}}
}

func waiting(reason, msg string) v1.ContainerState {
	return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reason, Message: msg}}
}

func terminated(reason string, code int32, started, finished time.Duration) v1.ContainerState {
	return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
		Reason: reason, ExitCode: code, StartedAt: ago(started), FinishedAt: ago(finished),
		ContainerID: "docker://" + strings.Repeat("f", 12),
	}}
}

func fixturePod(ns, name string, containers ...string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: name, UID: types.UID("uid-" + name),
		CreationTimestamp: ago(400 * 24 * time.Hour),
	}}
	p.Spec.NodeName = "node1"
	p.Spec.RestartPolicy = v1.RestartPolicyAlways
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: c, Image: "actorlet/testworkload:0.1.0"})
	}
	return p
}

// fixturePods are the pods of the golden tests, sorted by namespace and
// name as the API serves them: running, CrashLoopBackOff with restarts,
// completed, initializing, pending/ContainerCreating, terminating, and an
// OOMKilled one in another namespace.
func fixturePods() []*v1.Pod {
	crasher := fixturePod("default", "crasher", "app")
	crasher.Labels = map[string]string{"app": "crasher", "tier": "demo"}
	crasher.Spec.Containers[0].Command = []string{"/testworkload"}
	crasher.Spec.Containers[0].Args = []string{"--exit-after=3s", "--exit-code=1"}
	crasher.Status = v1.PodStatus{
		Phase: v1.PodRunning, PodIP: "172.17.0.3", PodIPs: []v1.PodIP{{IP: "172.17.0.3"}}, HostIP: "10.0.0.5",
		StartTime: agoPtr(10 * time.Minute), Conditions: conditions(false), QOSClass: v1.PodQOSBestEffort,
		ContainerStatuses: []v1.ContainerStatus{{
			Name: "app", Image: "actorlet/testworkload:0.1.0", ImageID: "docker-pullable://actorlet/testworkload@sha256:abc",
			ContainerID: "docker://" + strings.Repeat("c", 12), RestartCount: 5,
			State:                waiting("CrashLoopBackOff", "back-off 1m20s restarting failed container=app pod=crasher_default(uid-crasher)"),
			LastTerminationState: terminated("Error", 1, 48*time.Second, 45*time.Second),
		}},
	}

	job := fixturePod("default", "job", "work")
	job.Spec.RestartPolicy = v1.RestartPolicyOnFailure
	job.Status = v1.PodStatus{
		Phase: v1.PodSucceeded, StartTime: agoPtr(51 * time.Hour), Conditions: conditions(false),
		ContainerStatuses: []v1.ContainerStatus{{
			Name: "work", Image: "actorlet/testworkload:0.1.0",
			State: terminated("Completed", 0, 51*time.Hour, 51*time.Hour-5*time.Second),
		}},
	}

	migrate := fixturePod("default", "migrate", "app")
	migrate.Spec.InitContainers = []v1.Container{{Name: "migrate-db", Image: "actorlet/testworkload:0.1.0"}}
	migrate.Status = v1.PodStatus{
		Phase: v1.PodPending, PodIP: "172.17.0.4", StartTime: agoPtr(90 * time.Second),
		InitContainerStatuses: []v1.ContainerStatus{{Name: "migrate-db", State: running(80 * time.Second)}},
		ContainerStatuses:     []v1.ContainerStatus{{Name: "app", State: waiting("PodInitializing", "")}},
	}

	pending := fixturePod("default", "pending", "app")
	pending.CreationTimestamp = ago(5 * time.Second)
	pending.Spec.NodeName = ""
	pending.Status = v1.PodStatus{
		Phase:             v1.PodPending,
		ContainerStatuses: []v1.ContainerStatus{{Name: "app", State: waiting("ContainerCreating", "")}},
	}

	stopping := fixturePod("default", "stopping", "app")
	stopping.DeletionTimestamp = agoPtr(20 * time.Second)
	stopping.Status = v1.PodStatus{
		Phase: v1.PodRunning, PodIP: "172.17.0.6", StartTime: agoPtr(7 * time.Hour), Conditions: conditions(true),
		ContainerStatuses: []v1.ContainerStatus{{Name: "app", Ready: true, State: running(7 * time.Hour)}},
	}

	web := fixturePod("default", "web", "nginx", "sidecar")
	web.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, Protocol: v1.ProtocolTCP}}
	web.Status = v1.PodStatus{
		Phase: v1.PodRunning, PodIP: "172.17.0.2", StartTime: agoPtr(3*time.Hour + 5*time.Minute), Conditions: conditions(true),
		ContainerStatuses: []v1.ContainerStatus{
			{Name: "nginx", Ready: true, State: running(3 * time.Hour)},
			{Name: "sidecar", Ready: true, RestartCount: 1, State: running(3 * time.Hour),
				LastTerminationState: terminated("Error", 2, 3*time.Hour+4*time.Minute, 3*time.Hour)},
		},
	}

	oom := fixturePod("kube-system", "oom", "hog")
	oom.Spec.RestartPolicy = v1.RestartPolicyNever
	oom.Status = v1.PodStatus{
		Phase: v1.PodFailed, PodIP: "172.17.0.9", StartTime: agoPtr(400 * 24 * time.Hour),
		ContainerStatuses: []v1.ContainerStatus{{Name: "hog", State: terminated("OOMKilled", 137, 399*24*time.Hour, 399*24*time.Hour)}},
	}
	return []*v1.Pod{crasher, job, migrate, pending, stopping, web, oom}
}

// fixtureEvents are the events of the golden tests, oldest first.
func fixtureEvents() []messages.Event {
	ev := func(d time.Duration, typ messages.EventType, pod, ctr, reason, msg string) messages.Event {
		return messages.Event{Time: cliTestNow.Add(-d), Type: typ, Reason: reason, Namespace: "default",
			Pod: pod, UID: types.UID("uid-" + pod), Container: ctr, Message: msg}
	}
	var evs []messages.Event
	evs = append(evs,
		ev(3*time.Hour+5*time.Minute, messages.EventNormal, "web", "nginx", "Started", "Started container nginx"),
		ev(10*time.Minute, messages.EventNormal, "crasher", "app", "Pulled", `Container image "actorlet/testworkload:0.1.0" already present on machine`),
	)
	for i := 5; i >= 0; i-- {
		d := time.Duration(i+1) * 80 * time.Second
		evs = append(evs,
			ev(d, messages.EventNormal, "crasher", "app", "Created", "Created container app"),
			ev(d-time.Second, messages.EventNormal, "crasher", "app", "Started", "Started container app"),
		)
		if i < 3 {
			evs = append(evs, ev(d-10*time.Second, messages.EventWarning, "crasher", "app", "BackOff", "Back-off restarting failed container app in pod crasher_default(uid-crasher)"))
		}
	}
	// The same name under another UID (an older pod) is not this pod's.
	old := ev(time.Hour, messages.EventNormal, "crasher", "app", "Killing", "Stopping container app")
	old.UID = "uid-older"
	return append(evs, old)
}

// cliBackend is an api.Backend over fixed pods and events whose Logs
// serves logs[ns/pod/container] or calls openLog.
type cliBackend struct {
	pods    []*v1.Pod
	events  []messages.Event
	logs    map[string]string
	openLog func(ctx context.Context) (io.ReadCloser, error)

	mu    sync.Mutex
	calls []cliLogCall
}

type cliLogCall struct {
	namespace, pod, container string
	previous                  bool
	opts                      runtimeadapter.LogOptions
	ctx                       context.Context
}

func (b *cliBackend) Pods(context.Context) ([]*v1.Pod, error)          { return b.pods, nil }
func (b *cliBackend) Events(context.Context) ([]messages.Event, error) { return b.events, nil }
func (b *cliBackend) Health(context.Context) api.Health                { return api.Health{OK: true} }

func (b *cliBackend) Logs(ctx context.Context, ns, pod, ctr string, previous bool, opts runtimeadapter.LogOptions) (io.ReadCloser, error) {
	b.mu.Lock()
	b.calls = append(b.calls, cliLogCall{ns, pod, ctr, previous, opts, ctx})
	b.mu.Unlock()
	if b.openLog != nil {
		return b.openLog(ctx)
	}
	text, ok := b.logs[ns+"/"+pod+"/"+ctr]
	if !ok {
		return nil, fmt.Errorf("container %s/%s/%s: %w", ns, pod, ctr, api.ErrNotFound)
	}
	return io.NopCloser(strings.NewReader(text)), nil
}

func (b *cliBackend) logCalls() []cliLogCall {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]cliLogCall(nil), b.calls...)
}

// startAgent serves b's API and fixes the CLI's clock; it returns the URL.
func startAgent(t *testing.T, b *cliBackend) string {
	t.Helper()
	srv := httptest.NewServer(api.New(b, api.Options{}))
	t.Cleanup(srv.Close)
	saved := cliNow
	cliNow = func() time.Time { return cliTestNow }
	t.Cleanup(func() { cliNow = saved })
	return srv.URL
}

func fixtureAgent(t *testing.T) (*cliBackend, string) {
	b := &cliBackend{pods: fixturePods(), events: fixtureEvents()}
	return b, startAgent(t, b)
}

// runCLI runs actorlet with args and returns what it printed.
func runCLI(ctx context.Context, out, errOut io.Writer, args ...string) error {
	root := newRootCmd()
	root.SetOut(out)
	root.SetErr(errOut)
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

// runOK runs actorlet with args and fails the test on an error.
func runOK(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := runCLI(context.Background(), &out, &errOut, args...); err != nil {
		t.Fatalf("actorlet %s: %v (stderr %q)", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), errOut.String()
}

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateGolden {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it)\n--- got:\n%s\n--- want:\n%s", path, got, want)
	}
}

func TestGetPodsGolden(t *testing.T) {
	_, url := fixtureAgent(t)
	for _, c := range []struct {
		golden string
		args   []string
	}{
		{"get_pods.txt", []string{"get", "pods"}},
		{"get_pods_wide_all.txt", []string{"get", "pods", "-A", "-o", "wide"}},
		{"get_pods_kube_system.txt", []string{"get", "po", "-n", "kube-system"}},
		{"get_pods.json", []string{"get", "pods", "-o", "json"}},
		{"get_pod_crasher.yaml", []string{"get", "pod", "crasher", "-o", "yaml"}},
	} {
		t.Run(c.golden, func(t *testing.T) {
			out, _ := runOK(t, append(c.args, "--server", url)...)
			golden(t, c.golden, out)
		})
	}
}

func TestGetPodsEdges(t *testing.T) {
	_, url := fixtureAgent(t)
	out, errOut := runOK(t, "get", "pods", "-n", "empty", "--server", url)
	if out != "" || errOut != "No resources found in empty namespace.\n" {
		t.Errorf("empty namespace: stdout %q, stderr %q", out, errOut)
	}
	out, _ = runOK(t, "get", "pods", "-n", "empty", "-o", "json", "--server", url)
	if !strings.Contains(out, `"items": []`) {
		t.Errorf("empty namespace as JSON: %s", out)
	}
	out, _ = runOK(t, "get", "pods", "web", "job", "--server", url)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[1], "web ") || !strings.HasPrefix(lines[2], "job ") {
		t.Errorf("named pods:\n%s", out)
	}

	var stdout, stderr bytes.Buffer
	err := runCLI(context.Background(), &stdout, &stderr, "get", "pods", "web", "nope", "--server", url)
	if err == nil || !strings.Contains(err.Error(), `pods "nope" not found`) || !strings.Contains(stdout.String(), "web") {
		t.Errorf("a missing name: %v, stdout %q", err, stdout.String())
	}
	err = runCLI(context.Background(), &stdout, &stderr, "get", "pods", "-o", "xml", "--server", url)
	if err == nil || !strings.Contains(err.Error(), "xml") {
		t.Errorf("-o xml: %v", err)
	}
}

func TestSummarizePod(t *testing.T) {
	byName := map[string]*v1.Pod{}
	for _, p := range fixturePods() {
		byName[p.Name] = p
	}
	for name, want := range map[string]string{
		"crasher":  "CrashLoopBackOff 0/1 5 (45s ago)",
		"job":      "Completed 0/1 0",
		"migrate":  "Init:0/1 0/1 0",
		"pending":  "ContainerCreating 0/1 0",
		"stopping": "Terminating 1/1 0",
		"web":      "Running 2/2 1 (3h ago)",
		"oom":      "OOMKilled 0/1 0",
	} {
		s := summarizePod(byName[name])
		got := fmt.Sprintf("%s %d/%d %s", s.status, s.ready, s.total, s.restartsColumn(cliTestNow))
		if got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}

	// Init containers that failed, exited by signal, or wait.
	p := fixturePod("default", "i", "app")
	p.Spec.InitContainers = []v1.Container{{Name: "a"}, {Name: "b"}}
	for _, c := range []struct {
		state v1.ContainerState
		want  string
	}{
		{terminated("Error", 1, time.Minute, time.Minute), "Init:Error"},
		{v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 3}}, "Init:ExitCode:3"},
		{v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 137, Signal: 9}}, "Init:Signal:9"},
		{waiting("CrashLoopBackOff", ""), "Init:CrashLoopBackOff"},
	} {
		p.Status = v1.PodStatus{Phase: v1.PodPending, InitContainerStatuses: []v1.ContainerStatus{
			{Name: "a", State: terminated("Completed", 0, time.Minute, time.Minute)},
			{Name: "b", State: c.state, RestartCount: 2},
		}}
		if s := summarizePod(p); s.status != c.want || s.restarts != 2 {
			t.Errorf("init %+v: %s with %d restarts, want %s with 2", c.state, s.status, s.restarts, c.want)
		}
	}
	// Completed while another container runs: Running when Ready.
	p = fixturePod("default", "mixed", "a", "b")
	p.Status = v1.PodStatus{Phase: v1.PodRunning, Conditions: conditions(true), ContainerStatuses: []v1.ContainerStatus{
		{Name: "a", State: terminated("Completed", 0, time.Minute, time.Minute)},
		{Name: "b", Ready: true, State: running(time.Minute)},
	}}
	if s := summarizePod(p); s.status != "Running" || s.ready != 1 {
		t.Errorf("completed + running: %+v", s)
	}
	p.Status.Conditions = conditions(false)
	if s := summarizePod(p); s.status != "NotReady" {
		t.Errorf("completed + running, not ready: %+v", s)
	}
	p.Status.ContainerStatuses[0].State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 2}}
	if s := summarizePod(p); s.status != "ExitCode:2" {
		t.Errorf("terminated without reason: %+v", s)
	}
}

// closedServer returns an http:// URL on 127.0.0.1 where nothing listens.
func closedServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	return url
}

func TestNoAgentAnswers(t *testing.T) {
	server := closedServer(t)
	for _, args := range [][]string{
		{"get", "pods"},
		{"describe", "pod", "web"},
		{"logs", "web"},
		{"logs", "web", "-c", "app", "-f"},
	} {
		var out, errOut bytes.Buffer
		err := runCLI(context.Background(), &out, &errOut, append(args, "--server", server)...)
		want := "no actorlet agent answers at " + server + ": "
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("actorlet %s: %v, want an error starting %q", strings.Join(args, " "), err, want)
		}
	}
}
