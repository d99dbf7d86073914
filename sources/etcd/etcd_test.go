package etcd

import (
	"strings"
	"testing"

	"github.com/actorlet/actorlet/sources"
	"github.com/actorlet/actorlet/test/support/etcdtest"
)

// These tests run the Source against a real etcd started in the test
// process (test/support/etcdtest). They never sleep: they wait for updates,
// with a deadline.

func TestKeys(t *testing.T) {
	k := mustKeys("/fleet/a/")
	if got, want := k.Pod("n1", "default", "web"), "/fleet/a/nodes/n1/pods/default/web"; got != want {
		t.Errorf("Pod = %q, want %q", got, want)
	}
	if got, want := k.Status("n1", "ns", "web"), "/fleet/a/nodes/n1/status/ns/web"; got != want {
		t.Errorf("Status = %q, want %q", got, want)
	}
	if got, want := k.Heartbeat("n1"), "/fleet/a/nodes/n1/heartbeat"; got != want {
		t.Errorf("Heartbeat = %q, want %q", got, want)
	}
	if got, want := k.Events("n1"), "/fleet/a/nodes/n1/events/"; got != want {
		t.Errorf("Events = %q, want %q", got, want)
	}
	if got := mustKeys("/").Pods("n"); got != "/nodes/n/pods/" {
		t.Errorf("root Pods = %q", got)
	}
	for _, bad := range []string{"", "actorlet", "/a//b"} {
		if _, err := NewKeys(bad); err == nil {
			t.Errorf("NewKeys(%q) succeeded", bad)
		}
	}

	for key, want := range map[string]Key{
		"/fleet/a/nodes/n1/pods/default/web":   {Node: "n1", Kind: KindPods, Namespace: "default", Name: "web", Rest: "default/web"},
		"/fleet/a/nodes/n1/status/default/web": {Node: "n1", Kind: KindStatus, Namespace: "default", Name: "web", Rest: "default/web"},
		"/fleet/a/nodes/n1/heartbeat":          {Node: "n1", Kind: KindHeartbeat},
		"/fleet/a/nodes/n1/events/000123":      {Node: "n1", Kind: KindEvents, Rest: "000123"},
	} {
		if got, ok := k.Parse(key); !ok || got != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", key, got, ok, want)
		}
	}
	for _, key := range []string{
		"/other/nodes/n1/heartbeat", "/fleet/a/nodes/n1/pods/default", "/fleet/a/nodes/n1/pods/default/a/b",
		"/fleet/a/nodes/n1/pods//web", "/fleet/a/nodes/n1/heartbeat/x", "/fleet/a/nodes/n1/other/x/y",
		"/fleet/a/nodes//heartbeat", "/fleet/a/nodes/n1/events/",
	} {
		if got, ok := k.Parse(key); ok {
			t.Errorf("Parse(%q) = %+v, want not ok", key, got)
		}
	}
	for _, bad := range []string{"", "a/b", "a b", "a\nb"} {
		if err := ValidNodeName(bad); err == nil {
			t.Errorf("ValidNodeName(%q) = nil", bad)
		}
	}
	if err := ValidNodeName("node-1.example.com"); err != nil {
		t.Errorf("ValidNodeName: %v", err)
	}
}

func TestNewRejectsBadNodeName(t *testing.T) {
	_, c := startEtcd(t)
	if _, err := New(c, testKeys, "a/b"); err == nil || !strings.Contains(err.Error(), `node name "a/b"`) {
		t.Errorf("New(node a/b) = %v, want an error naming the node", err)
	}
}

func TestRunReadsThenWatches(t *testing.T) {
	_, c := startEtcd(t)
	put(t, c, testKeys.Pod(testNode, "default", "web"), podYAML("web", "nginx:1"))
	put(t, c, testKeys.Pod(testNode, "kube-system", "dns"), podJSON("kube-system", "dns", "dns:1"))
	// Not this node's pods: another node's, and this node's status.
	put(t, c, testKeys.Pod("node-2", "default", "other"), podYAML("other", "other:1"))
	put(t, c, testKeys.Status(testNode, "default", "web"), `{"status": {}}`)

	r := start(t, c)
	if got, want := r.src.Name(), "etcd:/actorlet/nodes/node-1/pods/"; got != want {
		t.Errorf("Name = %q, want %q", got, want)
	}
	u := r.next(t, slack)
	wantPods(t, u, "default/web=nginx:1", "kube-system/dns=dns:1")
	if u.Source != r.src.Name() || len(u.Problems) != 0 {
		t.Errorf("update source %q, problems %v", u.Source, u.Problems)
	}
	web := u.Pods[0]
	if web.UID == "" || web.Annotations[AnnotationSourceKey] != testKeys.Pod(testNode, "default", "web") ||
		web.Annotations["kubernetes.io/config.source"] != "etcd" || web.Annotations["kubernetes.io/config.hash"] != string(web.UID) {
		t.Errorf("web: UID %q, annotations %v", web.UID, web.Annotations)
	}
	if web.Spec.RestartPolicy != "Always" {
		t.Errorf("web not defaulted: restartPolicy %q", web.Spec.RestartPolicy)
	}

	put(t, c, testKeys.Pod(testNode, "default", "api"), podYAML("api", "api:1"))
	u = r.next(t, slack)
	wantPods(t, u, "default/api=api:1", "default/web=nginx:1", "kube-system/dns=dns:1")
	api := u.Pods[0].UID
	if u.Pods[1].UID != web.UID {
		t.Errorf("web's UID changed without an edit: %s → %s", web.UID, u.Pods[1].UID)
	}

	// The same pod written again as JSON is no change: no update. The
	// edit after it is the next update.
	put(t, c, testKeys.Pod(testNode, "default", "web"), podJSON("default", "web", "nginx:1"))
	put(t, c, testKeys.Pod(testNode, "default", "web"), podYAML("web", "nginx:2"))
	u = r.next(t, slack)
	wantPods(t, u, "default/api=api:1", "default/web=nginx:2", "kube-system/dns=dns:1")
	if u.Pods[1].UID == web.UID || u.Pods[0].UID != api {
		t.Errorf("after editing web: UIDs web %s → %s, api %s → %s", web.UID, u.Pods[1].UID, api, u.Pods[0].UID)
	}

	del(t, c, testKeys.Pod(testNode, "kube-system", "dns"))
	wantPods(t, r.next(t, slack), "default/api=api:1", "default/web=nginx:2")

	// Another node's keys never reach this source.
	put(t, c, testKeys.Pod("node-2", "default", "more"), podYAML("more", "more:1"))
	del(t, c, testKeys.Pod(testNode, "default", "api"))
	wantPods(t, r.next(t, slack), "default/web=nginx:2")
}

func TestRunEmptyPrefixSyncs(t *testing.T) {
	_, c := startEtcd(t)
	r := start(t, c)
	u := r.next(t, slack) // sent although empty: the source has synced
	wantPods(t, u)
	if len(u.Problems) != 0 {
		t.Errorf("problems = %v", u.Problems)
	}
}

// wantProblem fails unless one of u's problems contains every string of
// subs.
func wantProblem(t *testing.T, u sources.Update, subs ...string) {
	t.Helper()
	for _, p := range u.Problems {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(p.Error(), s)
		}
		if ok {
			return
		}
	}
	t.Errorf("no problem contains %q; problems: %v", subs, u.Problems)
}

func TestBadValueIsAProblemNamingKeyAndField(t *testing.T) {
	_, c := startEtcd(t)
	webKey := testKeys.Pod(testNode, "default", "web")
	put(t, c, webKey, podYAML("web", "nginx:1"))
	put(t, c, testKeys.Pod(testNode, "default", "broken"), "kind: Pod\nspec: [")
	put(t, c, testKeys.Pod(testNode, "default", "noimage"), podYAML("noimage", `""`))
	put(t, c, testKeys.Pod(testNode, "default", "typo"), podYAML("typo", "x:1")+"    imagee: x\n")
	put(t, c, testKeys.Pod(testNode, "default", "named"), podYAML("other-name", "x:1"))
	put(t, c, testKeys.Pod(testNode, "other", "ns"), podJSON("default", "ns", "x:1"))
	put(t, c, testKeys.Pod(testNode, "default", "a")+"/b", podYAML("b", "x:1"))

	r := start(t, c)
	u := r.next(t, slack)
	wantPods(t, u, "default/web=nginx:1") // the others never drop it
	if len(u.Problems) != 6 {
		t.Errorf("%d problems, want 6: %v", len(u.Problems), u.Problems)
	}
	wantProblem(t, u, "etcd key /actorlet/nodes/node-1/pods/default/broken: ")
	wantProblem(t, u, "etcd key /actorlet/nodes/node-1/pods/default/noimage: ", "spec.containers[0].image: Required value")
	wantProblem(t, u, "etcd key /actorlet/nodes/node-1/pods/default/typo: ", `unknown field "spec.containers[0].imagee"`)
	wantProblem(t, u, "etcd key /actorlet/nodes/node-1/pods/default/named: ", `metadata.name: Invalid value: "other-name": must be the key's name "named"`)
	wantProblem(t, u, "etcd key /actorlet/nodes/node-1/pods/other/ns: ", `metadata.namespace: Invalid value: "default": must be the key's namespace "other"`)
	wantProblem(t, u, "etcd key /actorlet/nodes/node-1/pods/default/a/b: ", "not a pod key")
	uid := u.Pods[0].UID

	// A good key turned bad keeps its last good pod, with a problem.
	put(t, c, webKey, podYAML("web", `""`))
	u = r.next(t, slack)
	wantPods(t, u, "default/web=nginx:1")
	if u.Pods[0].UID != uid {
		t.Errorf("web's UID changed while its value is bad: %s → %s", uid, u.Pods[0].UID)
	}
	wantProblem(t, u, "etcd key "+webKey+": ", "spec.containers[0].image: Required value")
	if len(u.Problems) != 7 {
		t.Errorf("%d problems, want 7: %v", len(u.Problems), u.Problems)
	}

	// Fixed: the new pod, and the problem is gone.
	put(t, c, webKey, podYAML("web", "nginx:2"))
	u = r.next(t, slack)
	wantPods(t, u, "default/web=nginx:2")
	if len(u.Problems) != 6 {
		t.Errorf("%d problems, want 6: %v", len(u.Problems), u.Problems)
	}

	// Deleting a bad key drops its problem.
	del(t, c, testKeys.Pod(testNode, "default", "broken"))
	u = r.next(t, slack)
	wantPods(t, u, "default/web=nginx:2")
	if len(u.Problems) != 5 {
		t.Errorf("%d problems, want 5: %v", len(u.Problems), u.Problems)
	}
}

func TestDuplicateUIDIsAProblem(t *testing.T) {
	_, c := startEtcd(t)
	withUID := func(name string) string {
		return strings.Replace(podYAML(name, "x:1"), "metadata:\n", "metadata:\n  uid: same-uid\n", 1)
	}
	put(t, c, testKeys.Pod(testNode, "default", "a"), withUID("a"))
	put(t, c, testKeys.Pod(testNode, "default", "b"), withUID("b"))
	u := start(t, c).next(t, slack)
	wantPods(t, u, "default/a=x:1")
	wantProblem(t, u, "etcd key /actorlet/nodes/node-1/pods/default/b: metadata.uid: Duplicate value",
		"key /actorlet/nodes/node-1/pods/default/a, which comes first and wins")
}

func TestBrokenWatchResumesFromLastRevision(t *testing.T) {
	_, c := startEtcd(t)
	bc := newBreakingClient(c)
	listed := put(t, c, testKeys.Pod(testNode, "default", "web"), podYAML("web", "nginx:1"))
	r := start(t, bc)
	wantPods(t, r.next(t, slack), "default/web=nginx:1")
	if revs := bc.waitWatches(t, 1); revs[0] != listed+1 {
		t.Errorf("first watch from revision %d, want %d (after the read's)", revs[0], listed+1)
	}
	last := put(t, c, testKeys.Pod(testNode, "default", "api"), podYAML("api", "api:1"))
	wantPods(t, r.next(t, slack), "default/api=api:1", "default/web=nginx:1")

	bc.breakAndHold()
	revs := bc.waitWatches(t, 2) // opened again, and held
	if revs[1] != last+1 {
		t.Errorf("watch opened again from revision %d, want %d (after the last event)", revs[1], last+1)
	}
	// Written while no watch runs: the resumed watch must deliver it.
	put(t, c, testKeys.Pod(testNode, "default", "db"), podYAML("db", "db:1"))
	bc.release()
	r.waitFor(t, slack, "api, db and web", func(u sources.Update) bool {
		return hasPods(u, "default/api=api:1", "default/db=db:1", "default/web=nginx:1")
	}, keepsWeb(t))
	if n := bc.reads(); n != 1 {
		t.Errorf("the pods were read in full %d times, want 1: a broken watch resumes without reading again", n)
	}
}

func TestCompactedWatchReadsEverythingAgain(t *testing.T) {
	srv, c := startEtcd(t)
	bc := newBreakingClient(c)
	put(t, c, testKeys.Pod(testNode, "default", "web"), podYAML("web", "nginx:1"))
	put(t, c, testKeys.Pod(testNode, "default", "api"), podYAML("api", "api:1"))
	r := start(t, bc)
	wantPods(t, r.next(t, slack), "default/api=api:1", "default/web=nginx:1")
	bc.waitWatches(t, 1)

	bc.breakAndHold()
	bc.waitWatches(t, 2)
	// While no watch runs: a delete and a put, then the history is
	// compacted away, so the watch cannot resume.
	del(t, c, testKeys.Pod(testNode, "default", "api"))
	put(t, c, testKeys.Pod(testNode, "default", "db"), podYAML("db", "db:1"))
	srv.Compact(c)
	bc.release()

	r.waitFor(t, slack, "db and web", func(u sources.Update) bool {
		return hasPods(u, "default/db=db:1", "default/web=nginx:1")
	}, keepsWeb(t))
	if n := bc.reads(); n != 2 {
		t.Errorf("the pods were read in full %d times, want 2 (the start, then after the compaction)", n)
	}
	if revs := bc.waitWatches(t, 3); len(revs) < 3 {
		t.Errorf("no watch after the re-read")
	}
}

// keepsWeb fails the test for an update that would lose web: a failure
// must carry Err, never a smaller set.
func keepsWeb(t *testing.T) func(sources.Update) {
	return func(u sources.Update) {
		if u.Err != nil {
			return
		}
		for _, n := range podNames(u) {
			if n == "default/web=nginx:1" {
				return
			}
		}
		t.Errorf("update without web: %s", describe(u))
	}
}

func TestUnreachableKeepsLastSet(t *testing.T) {
	srv, c := startEtcd(t)
	proxy := etcdtest.NewProxy(t, srv.Endpoint())
	put(t, c, testKeys.Pod(testNode, "default", "web"), podYAML("web", "nginx:1"))
	r := start(t, etcdtest.NewClient(t, proxy.Endpoint()))
	wantPods(t, r.next(t, slack), "default/web=nginx:1")

	proxy.SetDown(true)
	u := r.waitFor(t, slack, "an error", func(u sources.Update) bool { return u.Err != nil }, keepsWeb(t))
	if !strings.Contains(u.Err.Error(), "etcd /actorlet/nodes/node-1/pods/: probe: ") {
		t.Errorf("error %q does not name the prefix and the probe", u.Err)
	}
	// Written while the source cannot see etcd.
	put(t, c, testKeys.Pod(testNode, "default", "api"), podYAML("api", "api:1"))

	proxy.SetDown(false)
	r.waitFor(t, recoverSlack, "api and web", func(u sources.Update) bool {
		return hasPods(u, "default/api=api:1", "default/web=nginx:1")
	}, keepsWeb(t))
}

func TestUnreachableAtStart(t *testing.T) {
	srv, c := startEtcd(t)
	proxy := etcdtest.NewProxy(t, srv.Endpoint())
	proxy.SetDown(true)
	put(t, c, testKeys.Pod(testNode, "default", "web"), podYAML("web", "nginx:1"))
	r := start(t, etcdtest.NewClient(t, proxy.Endpoint()))
	u := r.next(t, slack)
	if u.Err == nil || !strings.Contains(u.Err.Error(), "etcd /actorlet/nodes/node-1/pods/: read the pods: ") {
		t.Fatalf("first update = %s, want an error naming the prefix", describe(u))
	}
	proxy.SetDown(false)
	r.waitFor(t, recoverSlack, "web", func(u sources.Update) bool { return hasPods(u, "default/web=nginx:1") },
		func(u sources.Update) {
			if u.Err == nil {
				t.Errorf("a successful update before the set: %s", describe(u))
			}
		})
}

func TestCompactionDuringOutageReadsEverythingAgain(t *testing.T) {
	srv, c := startEtcd(t)
	proxy := etcdtest.NewProxy(t, srv.Endpoint())
	put(t, c, testKeys.Pod(testNode, "default", "web"), podYAML("web", "nginx:1"))
	put(t, c, testKeys.Pod(testNode, "default", "api"), podYAML("api", "api:1"))
	r := start(t, etcdtest.NewClient(t, proxy.Endpoint()))
	wantPods(t, r.next(t, slack), "default/api=api:1", "default/web=nginx:1")

	proxy.SetDown(true)
	r.waitFor(t, slack, "an error", func(u sources.Update) bool { return u.Err != nil }, keepsWeb(t))
	del(t, c, testKeys.Pod(testNode, "default", "api"))
	put(t, c, testKeys.Pod(testNode, "default", "db"), podYAML("db", "db:1"))
	srv.Compact(c)
	proxy.SetDown(false)
	r.waitFor(t, recoverSlack, "db and web", func(u sources.Update) bool {
		return hasPods(u, "default/db=db:1", "default/web=nginx:1")
	}, keepsWeb(t))
}
