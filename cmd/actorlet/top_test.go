package main

import (
	"bytes"
	"strings"
	"testing"

	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/actorlet/actorlet/internal/stats"
)

func u64p(v uint64) *uint64 { return &v }

func topCtr(name string, nano, ws uint64) statsapi.ContainerStats {
	return statsapi.ContainerStats{Name: name,
		CPU:    &statsapi.CPUStats{UsageNanoCores: u64p(nano)},
		Memory: &statsapi.MemoryStats{WorkingSetBytes: u64p(ws)}}
}

func topPod(ns, name string, ctrs ...statsapi.ContainerStats) statsapi.PodStats {
	return statsapi.PodStats{PodRef: statsapi.PodReference{Namespace: ns, Name: name}, Containers: ctrs}
}

func topSummary() *statsapi.Summary {
	return &statsapi.Summary{Pods: []statsapi.PodStats{
		topPod("default", "burner", topCtr("app", 987_654_321, 7<<20+5)),
		topPod("default", "hog", topCtr("app", 1, 205<<20), topCtr("side", 2_000_000, 3<<20)),
		topPod("default", "young", statsapi.ContainerStats{Name: "app", CPU: &statsapi.CPUStats{UsageCoreNanoSeconds: u64p(5)},
			Memory: &statsapi.MemoryStats{WorkingSetBytes: u64p(1)}}), // no rate yet: left out
		topPod("kube-system", "dns", topCtr("dns", 0, 12<<20)),
	}}
}

func TestTopPods(t *testing.T) {
	for _, tc := range []struct {
		name  string
		f     topPodsFlags
		pod   string
		want  string
		error string
		err   string
	}{
		{name: "default namespace, as kubectl top pod", f: topPodsFlags{namespace: "default"}, want: `
NAME     CPU(cores)   MEMORY(bytes)   
burner   988m         7Mi             
hog      3m           208Mi           
`},
		{name: "all namespaces, sorted by memory", f: topPodsFlags{allNamespaces: true, sortBy: "memory"}, want: `
NAMESPACE     NAME     CPU(cores)   MEMORY(bytes)   
default       hog      3m           208Mi           
kube-system   dns      0m           12Mi            
default       burner   988m         7Mi             
`},
		{name: "containers of one pod, no headers", f: topPodsFlags{namespace: "default", containers: true, noHeaders: true}, pod: "hog", want: `
hog   app    1m    205Mi   
hog   side   2m    3Mi     
`},
		{name: "sorted by cpu", f: topPodsFlags{namespace: "default", sortBy: "cpu"}, want: `
NAME     CPU(cores)   MEMORY(bytes)   
burner   988m         7Mi             
hog      3m           208Mi           
`},
		{name: "nothing in the namespace", f: topPodsFlags{namespace: "empty"}, want: "\n", error: "No resources found in empty namespace.\n"},
		{name: "a pod without a rate yet", f: topPodsFlags{namespace: "default"}, pod: "young", err: "metrics not available yet for pod default/young"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := printTopPods(&out, &errOut, topSummary(), &tc.f, tc.pod)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := "\n" + out.String(); got != tc.want {
				t.Fatalf("got:%s\nwant:%s", got, tc.want)
			}
			if errOut.String() != tc.error {
				t.Fatalf("stderr %q, want %q", errOut.String(), tc.error)
			}
		})
	}
}

func TestTopNode(t *testing.T) {
	n := statsapi.NodeStats{NodeName: "node-1",
		CPU:    &statsapi.CPUStats{UsageNanoCores: u64p(329_087_452)},
		Memory: &statsapi.MemoryStats{WorkingSetBytes: u64p(2683 << 20)}}
	var out bytes.Buffer
	if err := printTopNode(&out, n, stats.MachineInfo{NumCores: 2, MemoryCapacity: 3832 << 20}, false); err != nil {
		t.Fatal(err)
	}
	want := `NAME     CPU(cores)   CPU(%)   MEMORY(bytes)   MEMORY(%)   
node-1   330m         16%      2683Mi          70%         
`
	if out.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	if err := printTopNode(&out, n, stats.MachineInfo{}, true); err != nil || !strings.Contains(out.String(), "<unknown>") || strings.Contains(out.String(), "NAME") {
		t.Fatalf("%q, %v", out.String(), err)
	}
	if err := printTopNode(&out, statsapi.NodeStats{NodeName: "n"}, stats.MachineInfo{}, false); err == nil {
		t.Fatal("a node without a rate printed")
	}
}
