package kubeapi

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/api"
	"github.com/actorlet/actorlet/messages"
)

// kubectlPath finds the real kubectl: missing, the test fails under CI=true
// and skips otherwise.
func kubectlPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("kubectl")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("kubectl is needed (CI=true): %v", err)
		}
		t.Skipf("kubectl not installed: %v", err)
	}
	return p
}

// kubectlCmd builds a kubectl command against server, with its own
// discovery cache and no kubeconfig of the machine.
func kubectlCmd(ctx context.Context, t *testing.T, server string, args ...string) *exec.Cmd {
	t.Helper()
	home := t.TempDir()
	all := append([]string{"--server", server, "--cache-dir", home + "/cache"}, args...)
	cmd := exec.CommandContext(ctx, kubectlPath(t), all...)
	cmd.Env = append(os.Environ(), "HOME="+home, "KUBECONFIG="+home+"/none")
	return cmd
}

// kubectl runs kubectl (at most 30 s) and returns stdout, stderr and its
// exit code.
func kubectl(t *testing.T, server string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := kubectlCmd(ctx, t, server, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errb.String(), 0
	case errors.As(err, &ee):
		return out.String(), errb.String(), ee.ExitCode()
	default:
		t.Fatalf("kubectl %v: %v", args, err)
	}
	return "", "", -1
}

// fields splits kubectl's table output into lines of white-space
// separated words, for comparisons that do not depend on column widths.
func tableWords(s string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return strings.Join(lines, "\n")
}

func TestKubectlReads(t *testing.T) {
	kubectlPath(t)
	now := t0.Add(time.Hour)
	fb := &fakeBackend{logs: map[string]string{"default/web/app": "hello\nworld\n"}, health: api.Health{OK: true}}
	web := runningPod("default", "web", map[string]string{"app": "web"})
	fb.setPods(web, crashing(runningPod("default", "crasher", map[string]string{"app": "crasher"}), 5, now.Add(-2*time.Minute)))
	fb.addEvent(messages.Event{Time: now.Add(-time.Minute), Type: messages.EventNormal, Reason: "Started", Namespace: "default", Pod: "web", UID: web.UID, Container: "app", Message: "Started container app"})
	srv, _ := serve(t, fb)

	cases := []struct {
		args []string
		want string
	}{
		{[]string{"get", "pods"}, "NAME READY STATUS RESTARTS AGE\ncrasher 0/1 CrashLoopBackOff 5 (2m ago) 60m\nweb 1/1 Running 0 60m"},
		{[]string{"get", "pods", "-o", "wide", "-l", "app=web"}, "NAME READY STATUS RESTARTS AGE IP NODE NOMINATED NODE READINESS GATES\nweb 1/1 Running 0 60m 172.17.0.5 node-1 <none> <none>"},
		{[]string{"get", "pods", "-A", "--field-selector", "metadata.name=crasher"}, "NAMESPACE NAME READY STATUS RESTARTS AGE\ndefault crasher 0/1 CrashLoopBackOff 5 (2m ago) 60m"},
		{[]string{"get", "nodes"}, "NAME STATUS ROLES AGE VERSION\nnode-1 Ready <none> 60m v0.1.0"},
		{[]string{"get", "events"}, "LAST SEEN TYPE REASON OBJECT MESSAGE\n60s Normal Started pod/web Started container app"},
		{[]string{"get", "pod", "web", "-o", "jsonpath={.metadata.uid} {.status.phase}"}, "uid-web Running"},
		{[]string{"logs", "web"}, "hello\nworld"},
	}
	for _, c := range cases {
		out, errOut, code := kubectl(t, srv.URL, c.args...)
		if code != 0 || tableWords(out) != c.want {
			t.Errorf("kubectl %s: exit %d, stderr %q, stdout\n%s\nwant\n%s", strings.Join(c.args, " "), code, errOut, tableWords(out), c.want)
		}
	}
	out, errOut, code := kubectl(t, srv.URL, "describe", "pod", "web")
	if code != 0 || !strings.Contains(tableWords(out), "Node: node-1/") || !strings.Contains(tableWords(out), "Normal Started") || !strings.Contains(tableWords(out), "actorlet Started container app") {
		t.Errorf("kubectl describe pod web: exit %d, stderr %q, stdout\n%s", code, errOut, out)
	}
	out, errOut, code = kubectl(t, srv.URL, "get", "pod", "nope")
	if code != 1 || strings.TrimSpace(errOut) != `Error from server (NotFound): pods "nope" not found` {
		t.Errorf("kubectl get pod nope: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = kubectl(t, srv.URL, "get", "services")
	if code != 1 || !strings.Contains(errOut, `the server doesn't have a resource type "services"`) {
		t.Errorf("kubectl get services: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestKubectlWatchSeesRestart(t *testing.T) {
	kubectlPath(t)
	fb := &fakeBackend{}
	web := runningPod("default", "web", nil)
	fb.setPods(web)
	srv, _ := serve(t, fb)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := kubectlCmd(ctx, t, srv.URL, "get", "pods", "-w")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	lines := make(chan string, 10)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- strings.Join(strings.Fields(sc.Text()), " ")
		}
	}()
	expect := func(want string) {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("kubectl -w ended before %q", want)
				}
				if l == want {
					return
				}
			case <-ctx.Done():
				t.Fatalf("kubectl -w: no line %q", want)
			}
		}
	}
	expect("web 1/1 Running 0 60m")
	fb.setPods(crashing(web, 1, t0.Add(time.Hour-10*time.Second)))
	expect("web 0/1 CrashLoopBackOff 1 (10s ago) 60m")
}

// Lists are paged with limit and continue: kubectl get --chunk-size pages
// through them (and prints every pod once); the pages are of one list,
// unchanged by changes made between them; a token whose list can no
// longer be rebuilt is 410 Expired, one this server never gave 400.
func TestListPages(t *testing.T) {
	kubectlPath(t)
	fb := &fakeBackend{health: api.Health{OK: true}}
	var pods []*v1.Pod
	for _, n := range []string{"p1", "p2", "p3", "p4", "p5"} {
		pods = append(pods, runningPod("default", n, nil))
	}
	fb.setPods(pods...)
	srv, _ := serve(t, fb, func(o *Options) { o.History = 3 })

	out, errOut, code := kubectl(t, srv.URL, "get", "pods", "--chunk-size=2", "-o", "name", "-v=6")
	if code != 0 || out != "pod/p1\npod/p2\npod/p3\npod/p4\npod/p5\n" || strings.Count(errOut, "continue=") != 2 {
		t.Fatalf("get pods --chunk-size=2: exit %d, %q, %d continued requests in\n%s", code, out, strings.Count(errOut, "continue="), errOut)
	}
	out, errOut, code = kubectl(t, srv.URL, "get", "pods", "--chunk-size=2", "-v=6") // Tables, paged
	if w := tableWords(out); code != 0 || strings.Count(errOut, "continue=") != 2 || !strings.HasPrefix(w, "NAME READY STATUS RESTARTS AGE\np1 1/1 Running 0") ||
		strings.Count(w, "\n") != 5 || !strings.HasPrefix(w[strings.LastIndex(w, "\n")+1:], "p5 1/1 Running") {
		t.Fatalf("get pods --chunk-size=2 (Table): exit %d, %q, %d continued requests in\n%s", code, out, strings.Count(errOut, "continue="), errOut)
	}

	page := func(query string) (v1.PodList, int) {
		t.Helper()
		code, body := do(t, "GET", srv.URL+"/api/v1/namespaces/default/pods?"+query, "")
		var l v1.PodList
		if code == 200 {
			l = decodeAs[v1.PodList](t, body)
		}
		return l, code
	}
	names := func(l v1.PodList) string {
		var out []string
		for _, p := range l.Items {
			out = append(out, p.Name)
		}
		return strings.Join(out, " ")
	}
	first, _ := page("limit=2")
	if names(first) != "p1 p2" || first.Continue == "" || first.RemainingItemCount == nil || *first.RemainingItemCount != 3 {
		t.Fatalf("first page: %s, continue %q, remaining %v", names(first), first.Continue, first.RemainingItemCount)
	}
	// p3 goes and p6 comes between the pages: the next pages are of the
	// first page's list still.
	fb.setPods(append(append([]*v1.Pod{}, pods[:2]...), append(pods[3:], runningPod("default", "p6", nil))...)...)
	if _, code := page(""); code != 200 { // a list refreshes the store: the change is recorded
		t.Fatalf("list: %d", code)
	}
	second, _ := page("limit=2&continue=" + first.Continue)
	third, _ := page("limit=2&continue=" + second.Continue)
	if names(second) != "p3 p4" || names(third) != "p5" || third.Continue != "" || second.ResourceVersion != first.ResourceVersion {
		t.Fatalf("next pages: %q (rv %s), %q (continue %q); want p3 p4, then p5 and no continue, at rv %s",
			names(second), second.ResourceVersion, names(third), third.Continue, first.ResourceVersion)
	}
	for i := range 3 { // more changes than the history of 3 keeps
		fb.setPods(runningPod("default", fmt.Sprint("q", i), nil))
		page("")
	}
	if _, code := page("limit=2&continue=" + second.Continue); code != 410 {
		t.Errorf("continue after the history is gone: %d, want 410", code)
	}
	if _, code := page("limit=2&continue=bm90LWEtdG9rZW4"); code != 400 {
		t.Errorf("a continue this server never gave: %d, want 400", code)
	}
}

// kubectl explain describes the served kinds from /openapi/v3's schemas:
// the kind, a nested field with its type and the API's own description,
// a required field marked so; a kind not served is not found.
func TestKubectlExplain(t *testing.T) {
	kubectlPath(t)
	srv, _ := serve(t, &fakeBackend{health: api.Health{OK: true}})
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"explain", "pods"}, []string{"KIND:       Pod", "VERSION:    v1", "Pod is a collection of containers that can run on a host.", "spec\t<PodSpec>", "status\t<PodStatus>"}},
		{[]string{"explain", "pods.spec.containers.image"}, []string{"FIELD: image <string>", "Container image name."}},
		{[]string{"explain", "pods.spec.containers"}, []string{"FIELD: containers <[]Container>", "name\t<string> -required-", "resources\t<ResourceRequirements>"}},
		{[]string{"explain", "nodes.status.capacity"}, []string{"FIELD: capacity <map[string]string>", "Capacity represents the total resources of a node."}},
		{[]string{"explain", "events.involvedObject"}, []string{"FIELD: involvedObject <ObjectReference>"}},
		{[]string{"explain", "pods.metadata.creationTimestamp"}, []string{"FIELD: creationTimestamp <string>", "CreationTimestamp is a timestamp"}},
	} {
		out, errOut, code := kubectl(t, srv.URL, c.args...)
		for _, w := range c.want {
			if code != 0 || !strings.Contains(out, w) {
				t.Errorf("kubectl %s: exit %d, stderr %q; want %q in\n%s", strings.Join(c.args, " "), code, errOut, w, out)
				break
			}
		}
	}
	if _, errOut, code := kubectl(t, srv.URL, "explain", "services"); code != 1 || !strings.Contains(errOut, `the server doesn't have a resource type "services"`) {
		t.Errorf("kubectl explain services: exit %d, %q", code, errOut)
	}
}
