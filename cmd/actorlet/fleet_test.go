package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/internal/fleet"
	"github.com/actorlet/actorlet/test/support/etcdtest"
)

// TestBinaryLinksNoEtcdServer: the binary links etcd's client, never its
// server (the embedded etcd is for tests only).
func TestBinaryLinksNoEtcdServer(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	client := false
	for _, d := range deps {
		if strings.HasPrefix(d, "go.etcd.io/etcd/server/") || strings.HasSuffix(d, "/test/support/etcdtest") {
			t.Errorf("the actorlet binary links %s", d)
		}
		client = client || d == "go.etcd.io/etcd/client/v3"
	}
	if !client {
		t.Errorf("go.etcd.io/etcd/client/v3 is not among the binary's %d dependencies: the check looks at the wrong list", len(deps))
	}
}

// cli runs the actorlet command line with args (see runCLI) and returns
// its standard output, standard error and error.
func cli(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := runCLI(context.Background(), &out, &errOut, args...)
	return out.String(), errOut.String(), err
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func etcdGet(t *testing.T, c *clientv3.Client, key string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), etcdTimeout)
	defer cancel()
	resp, err := c.Get(ctx, key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	if len(resp.Kvs) == 0 {
		return "", false
	}
	return string(resp.Kvs[0].Value), true
}

func etcdPut(t *testing.T, c *clientv3.Client, key, value string, opts ...clientv3.OpOption) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), etcdTimeout)
	defer cancel()
	if _, err := c.Put(ctx, key, value, opts...); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

const webManifest = `# the web pod
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: app
    image: nginx:1.27
`

func TestApplyAndDelete(t *testing.T) {
	srv := etcdtest.Start(t)
	c := srv.Client(t)
	ep := []string{"--etcd-endpoints", srv.URL()}
	file := writeFile(t, "web.yaml", webManifest)

	out, errOut, err := cli(t, append([]string{"apply", "-f", file, "--node", "n1", "-n", "prod"}, ep...)...)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	key := "/actorlet/nodes/n1/pods/prod/web"
	if want := "pod/web applied to node n1 (" + key + ")\n"; out != want {
		t.Errorf("apply printed %q, want %q", out, want)
	}
	if !strings.Contains(errOut, "warning: node n1 has no heartbeat (/actorlet/nodes/n1/heartbeat)") {
		t.Errorf("apply to a node without heartbeat warned %q", errOut)
	}
	if v, ok := etcdGet(t, c, key); !ok || v != webManifest {
		t.Errorf("%s = %q (found %v), want the manifest as written", key, v, ok)
	}

	// Another prefix, and the namespace from the manifest.
	withNS := strings.Replace(webManifest, "  name: web\n", "  name: web\n  namespace: team-a\n", 1)
	if _, _, err := cli(t, append([]string{"apply", "-f", writeFile(t, "ns.yaml", withNS), "--node", "n2", "--etcd-prefix", "/other"}, ep...)...); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if _, ok := etcdGet(t, c, "/other/nodes/n2/pods/team-a/web"); !ok {
		t.Error("apply with --etcd-prefix /other wrote no /other/nodes/n2/pods/team-a/web")
	}

	// Invalid: the error names the file and the field; nothing is written.
	for name, tc := range map[string]struct{ content, want string }{
		"noimage.yaml": {strings.Replace(webManifest, "nginx:1.27", `""`, 1), "spec.containers[0].image: Required value"},
		"typo.yaml":    {webManifest + "    imagee: x\n", `unknown field "spec.containers[0].imagee"`},
		"priv.yaml":    {webManifest + "    securityContext:\n      privileged: true\n", "spec.containers[0].securityContext.privileged: Forbidden"},
		"ns.yaml":      {withNS, `metadata.namespace: "team-a" differs from --namespace "prod"`},
	} {
		path := writeFile(t, name, tc.content)
		_, _, err := cli(t, append([]string{"apply", "-f", path, "--node", "n3", "-n", "prod"}, ep...)...)
		if err == nil || !strings.Contains(err.Error(), "manifest "+path+": ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("apply %s = %v, want an error naming the file and %q", name, err, tc.want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), etcdTimeout)
	defer cancel()
	if resp, err := c.Get(ctx, "/actorlet/nodes/n3/", clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil || resp.Count != 0 {
		t.Errorf("invalid manifests wrote %v keys (%v)", resp, err)
	}
	if _, _, err := cli(t, append([]string{"apply", "-f", file, "--node", "a/b"}, ep...)...); err == nil || !strings.Contains(err.Error(), `--node: node name "a/b"`) {
		t.Errorf("apply --node a/b = %v", err)
	}
	if _, _, err := cli(t, append([]string{"apply", "-f", filepath.Join(t.TempDir(), "missing.yaml"), "--node", "n1"}, ep...)...); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("apply of a missing file = %v, want an error naming it", err)
	}

	// Delete: the key goes; a pod the node does not have is an error.
	out, _, err = cli(t, append([]string{"delete", "pod", "web", "--node", "n1", "-n", "prod"}, ep...)...)
	if err != nil || out != "pod/web deleted from node n1 ("+key+")\n" {
		t.Errorf("delete = %q, %v", out, err)
	}
	if _, ok := etcdGet(t, c, key); ok {
		t.Errorf("%s still there after delete", key)
	}
	_, _, err = cli(t, append([]string{"delete", "pod", "web", "--node", "n1", "-n", "prod"}, ep...)...)
	if err == nil || !strings.Contains(err.Error(), `pods "web" not found on node n1 in namespace "prod"`) {
		t.Errorf("second delete = %v, want not found naming the pod and node", err)
	}
}

func TestClientCommandsNameUnreachableEtcd(t *testing.T) {
	srv := etcdtest.Start(t)
	proxy := etcdtest.NewProxy(t, srv.Endpoint())
	proxy.SetDown(true)
	ep := "http://" + proxy.Endpoint()
	file := writeFile(t, "web.yaml", webManifest)
	saved := etcdTimeout
	etcdTimeout = time.Second
	t.Cleanup(func() { etcdTimeout = saved })
	for _, args := range [][]string{
		{"apply", "-f", file, "--node", "n1"},
		{"delete", "pod", "web", "--node", "n1"},
		{"get", "pods", "--all-nodes"},
	} {
		_, _, err := cli(t, append(args, "--etcd-endpoints", ep)...)
		if err == nil || !strings.Contains(err.Error(), "etcd ["+ep+"]") {
			t.Errorf("%v with etcd unreachable = %v, want an error naming the endpoint", args, err)
		}
	}
}

// statusDoc is a status document of a running pod with one ready
// container that restarted restarts times, started 5 minutes before
// cliTestNow.
func statusDoc(t *testing.T, node, ns, name string, restarts int32) string {
	t.Helper()
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name)}}
	p.Status = v1.PodStatus{
		Phase: v1.PodRunning, StartTime: agoPtr(5 * time.Minute), Conditions: conditions(true),
		ContainerStatuses: []v1.ContainerStatus{{Name: "app", Ready: true, RestartCount: restarts, State: running(5 * time.Minute)}},
	}
	data, err := json.Marshal(fleet.StatusDocument(node, p))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestGetPodsAllNodes(t *testing.T) {
	srv := etcdtest.Start(t)
	c := srv.Client(t)
	cliNow = func() time.Time { return cliTestNow }
	t.Cleanup(func() { cliNow = time.Now })
	k := "/actorlet/nodes/"

	// alive: a heartbeat under a live lease, two pods (one without a status
	// yet) and a status whose pod key is gone.
	ctx, cancel := context.WithTimeout(context.Background(), etcdTimeout)
	defer cancel()
	lease, err := c.Grant(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	hb, _ := json.Marshal(fleet.Heartbeat{Node: "alive", Version: "test", LeaseTTLSeconds: 60})
	etcdPut(t, c, k+"alive/heartbeat", string(hb), clientv3.WithLease(lease.ID))
	etcdPut(t, c, k+"alive/pods/default/web", webManifest)
	etcdPut(t, c, k+"alive/status/default/web", statusDoc(t, "alive", "default", "web", 2))
	etcdPut(t, c, k+"alive/pods/default/new", strings.Replace(webManifest, "name: web", "name: new", 1))
	etcdPut(t, c, k+"alive/status/kube-system/leaving", statusDoc(t, "alive", "kube-system", "leaving", 0))
	// dead: statuses but no heartbeat (its lease expired).
	etcdPut(t, c, k+"dead/pods/default/db", webManifest)
	etcdPut(t, c, k+"dead/status/default/db", statusDoc(t, "dead", "default", "db", 0))
	// never: a pod given to a node that never ran.
	etcdPut(t, c, k+"never/pods/default/job", webManifest)
	// idle: alive without pods.
	etcdPut(t, c, k+"idle/heartbeat", string(hb), clientv3.WithLease(lease.ID))

	out, _, err := cli(t, "get", "pods", "--all-nodes", "--etcd-endpoints", srv.URL())
	if err != nil {
		t.Fatalf("get pods --all-nodes: %v", err)
	}
	want := []string{
		`^NODE +HEARTBEAT +NAMESPACE +NAME +READY +STATUS +RESTARTS +AGE$`,
		`^alive +\d+s ago +default +new +- +<no status> +- +-$`,
		`^alive +\d+s ago +default +web +1/1 +Running +2 +5m$`,
		`^alive +\d+s ago +kube-system +leaving +1/1 +Running \(not desired\) +0 +5m$`,
		`^dead +stale +default +db +1/1 +Running \(stale\) +0 +5m$`,
		`^idle +\d+s ago +- +- +- +- +- +-$`,
		`^never +no heartbeat +default +job +- +<no status> +- +-$`,
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, re := range want {
		if !regexp.MustCompile(re).MatchString(lines[i]) {
			t.Errorf("line %d = %q, want %s", i, lines[i], re)
		}
	}

	// One node, one namespace, one name.
	out, _, err = cli(t, "get", "pods", "web", "--node", "alive", "-n", "default", "--etcd-endpoints", srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimRight(out, "\n"), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], "alive ") || !strings.Contains(lines[1], " web ") {
		t.Errorf("get pods web --node alive -n default =\n%s", out)
	}
	// The lease gone: the node and its statuses are stale.
	if _, err := c.Revoke(ctx, lease.ID); err != nil {
		t.Fatal(err)
	}
	out, _, err = cli(t, "get", "pods", "--node", "alive", "--etcd-endpoints", srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^alive +stale +default +web +1/1 +Running \(stale\) `).MatchString(out) {
		t.Errorf("after the lease's end:\n%s", out)
	}
	if _, _, err := cli(t, "get", "pods", "--all-nodes", "-o", "json", "--etcd-endpoints", srv.URL()); err == nil {
		t.Error("--all-nodes -o json succeeded; only the table is printed")
	}
}

func TestRunEtcdFlagsChecked(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--node-name", "n1"}, "no pod source: give --manifests DIR, --manifest-url URL and/or --etcd-endpoints URLS"},
		{[]string{"--node-name", "a/b", "--etcd-endpoints", "http://127.0.0.1:1"}, `--node-name with --etcd-endpoints: node name "a/b"`},
		{[]string{"--node-name", "n1", "--etcd-endpoints", "http://127.0.0.1:1", "--node-lease-duration", "0s"}, "--node-lease-duration 0s: must be more than 0"},
		{[]string{"--node-name", "n1", "--etcd-endpoints", "http://127.0.0.1:1", "--etcd-prefix", "actorlet"}, `--etcd-prefix: etcd prefix "actorlet": must start with /`},
		{[]string{"--node-name", "n1", "--etcd-endpoints", "http://127.0.0.1:1", "--etcd-cert-file", "c.pem"}, `--etcd-cert-file "c.pem", --etcd-key-file "": give both or neither`},
		{[]string{"--node-name", "n1", "--etcd-endpoints", "http://127.0.0.1:1", "--etcd-ca-file", filepath.Join(root, "none.pem")}, "none.pem"},
	} {
		// Should the checks fail to stop it, the agent runs until ctx ends
		// (without API), and the test fails for want of an error.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		var out, errOut bytes.Buffer
		err := runCLI(ctx, &out, &errOut, append([]string{"run", "--root-dir", root, "--port", "-1"}, tc.args...)...)
		cancel()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run %v = %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}
