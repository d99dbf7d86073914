package fleet

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/sources/etcd"
	"github.com/actorlet/actorlet/test/support/etcdtest"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// TestFleet runs three agents (nodes a, b and c) against one etcd and
// one Docker Engine, and checks the fleet's promises in turn:
//
//  1. each pod lands on the node whose key holds it, and only there, and
//     its status reaches etcd;
//  2. a node killed with SIGKILL has its heartbeat expire, and `get pods
//     --all-nodes` shows it and its statuses as stale;
//  3. a pod moved from node a's key to node b's stops on a and starts on b;
//  4. all along, the other nodes never touch the dead node's containers.
func TestFleet(t *testing.T) {
	rt := testimages.EnsureTestImages(t) // skips without Docker, fails with CI=true
	docker := dockerClient(t)
	actorletBinary(t) // built before anything is timed
	srv := etcdtest.Start(t)
	ec := srv.Client(t)
	keys, err := etcd.NewKeys(etcd.DefaultPrefix)
	if err != nil {
		t.Fatal(err)
	}
	endpoint := srv.URL()
	etcdFlags := []string{"--etcd-endpoints", endpoint}

	nodes := map[string]string{} // a, b, c → unique node name
	for _, n := range []string{"a", "b", "c"} {
		nodes[n] = testimages.NodeName("fleet-" + n)
		// Registered before the agents, so it runs after they are killed.
		testimages.CleanupNode(t, rt, nodes[n])
	}
	t.Logf("nodes %v, etcd %s", nodes, endpoint)
	dir := t.TempDir()
	pods := map[string]string{"a": "pod-a", "b": "pod-b", "c": "pod-c"}
	manifests := map[string]string{}
	for n, p := range pods {
		manifests[n] = writeManifest(t, dir, p)
	}

	// Node a's pod is in etcd before its agent starts (it is read); the
	// others come while their agents watch.
	actorlet(t, append([]string{"apply", "-f", manifests["a"], "--node", nodes["a"]}, etcdFlags...)...)
	agents := map[string]*agent{}
	for _, n := range []string{"a", "b", "c"} {
		agents[n] = startAgent(t, nodes[n], endpoint)
	}
	for _, n := range []string{"b", "c"} {
		actorlet(t, append([]string{"apply", "-f", manifests[n], "--node", nodes[n]}, etcdFlags...)...)
	}

	// 1. Each pod runs on its node, and only there.
	for _, n := range []string{"a", "b", "c"} {
		eventually(t, podUpTimeout, fmt.Sprintf("%s running on node %s", pods[n], n), func() (bool, string) {
			agents[n].requireRunning()
			cs := list(t, rt, nodes[n])
			return cs.ofPod(pods[n]).runningApp(), cs.String()
		})
	}
	for _, n := range []string{"a", "b", "c"} {
		if got := list(t, rt, nodes[n]).podNames(); !slices.Equal(got, []string{pods[n]}) {
			t.Errorf("node %s has containers of pods %v, want only %s", n, got, pods[n])
		}
		eventually(t, etcdTimeout, fmt.Sprintf("%s Running in etcd under node %s", pods[n], n), func() (bool, string) {
			phase, seen := statusPhase(t, ec, keys.Status(nodes[n], "default", pods[n]))
			return phase == v1.PodRunning, seen
		})
	}
	out := actorlet(t, append([]string{"get", "pods", "--all-nodes"}, etcdFlags...)...)
	for _, n := range []string{"a", "b", "c"} {
		re := regexp.MustCompile(`(?m)^` + nodes[n] + ` +\d+s ago +default +` + pods[n] + ` +1/1 +Running +0 +`)
		if !re.MatchString(out) {
			t.Errorf("get pods --all-nodes shows no live node %s running %s:\n%s", n, pods[n], out)
		}
	}

	// 2. Node c dies: its heartbeat expires and it shows as stale. Its
	// containers keep running, untouched by the others (checked at the end).
	cBefore := list(t, rt, nodes["c"])
	cStarted := startedAt(t, docker, cBefore)
	agents["c"].kill()
	killed := time.Now()
	eventually(t, leaseDuration+etcdTimeout, "node c's heartbeat to expire", func() (bool, string) {
		v, found := etcdValue(t, ec, keys.Heartbeat(nodes["c"]))
		return !found, v
	})
	if d := time.Since(killed); d < leaseDuration/3 {
		t.Errorf("node c's heartbeat gone %v after SIGKILL: too soon for a %v lease renewed every %v", d, leaseDuration, leaseDuration/3)
	}
	out = actorlet(t, append([]string{"get", "pods", "--all-nodes"}, etcdFlags...)...)
	if re := regexp.MustCompile(`(?m)^` + nodes["c"] + ` +stale +default +pod-c +1/1 +Running \(stale\) `); !re.MatchString(out) {
		t.Errorf("get pods --all-nodes does not show node c and pod-c as stale:\n%s", out)
	}
	for _, n := range []string{"a", "b"} {
		if re := regexp.MustCompile(`(?m)^` + nodes[n] + ` +\d+s ago `); !re.MatchString(out) {
			t.Errorf("get pods --all-nodes does not show node %s alive:\n%s", n, out)
		}
	}

	// 3. pod-a moves from node a to node b.
	actorlet(t, append([]string{"apply", "-f", manifests["a"], "--node", nodes["b"]}, etcdFlags...)...)
	actorlet(t, append([]string{"delete", "pod", "pod-a", "--node", nodes["a"]}, etcdFlags...)...)
	eventually(t, podUpTimeout, "pod-a running on node b", func() (bool, string) {
		agents["b"].requireRunning()
		cs := list(t, rt, nodes["b"])
		return cs.ofPod("pod-a").runningApp(), cs.String()
	})
	eventually(t, podGoneTime, "pod-a's containers gone from node a", func() (bool, string) {
		agents["a"].requireRunning()
		cs := list(t, rt, nodes["a"])
		return len(cs) == 0, cs.String()
	})
	eventually(t, etcdTimeout, "pod-a's status under node b, none under node a", func() (bool, string) {
		phaseB, seenB := statusPhase(t, ec, keys.Status(nodes["b"], "default", "pod-a"))
		_, underA := etcdValue(t, ec, keys.Status(nodes["a"], "default", "pod-a"))
		return phaseB == v1.PodRunning && !underA, fmt.Sprintf("b: %s; a has one: %v", seenB, underA)
	})
	if got := list(t, rt, nodes["b"]).podNames(); !slices.Equal(got, []string{"pod-a", "pod-b"}) {
		t.Errorf("node b has containers of pods %v, want pod-a and pod-b", got)
	}

	// 4. Node c's containers: the same ones, never stopped or restarted,
	// after at least two relists of the others since c died.
	if wait := 2*relistPeriod + time.Second - time.Since(killed); wait > 0 {
		eventually(t, wait+time.Second, "two relists of the live nodes since node c died", func() (bool, string) {
			return time.Since(killed) > 2*relistPeriod+time.Second, ""
		})
	}
	cAfter := list(t, rt, nodes["c"])
	if got, want := cAfter.String(), cBefore.String(); got != want {
		t.Errorf("node c's containers changed after it died: %s, before %s", got, want)
	}
	if got := startedAt(t, docker, cAfter); !maps.Equal(got, cStarted) {
		t.Errorf("node c's containers were stopped or restarted: now %v, before %v", got, cStarted)
	}
	for _, n := range []string{"a", "b"} {
		for _, c := range list(t, rt, nodes[n]) {
			if strings.Contains(c.Name, "pod-c") {
				t.Errorf("node %s runs a container of node c's pod: %s", n, c.Name)
			}
		}
	}
}
