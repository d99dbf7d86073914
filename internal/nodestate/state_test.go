package nodestate

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/runtimeadapter"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

const node = "n1"

// at is t0 plus sec seconds: step i of a row runs at at(i+1).
func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

func testPod(name, uid string, policy v1.RestartPolicy, containers ...string) *v1.Pod {
	p := &v1.Pod{}
	p.Name, p.Namespace, p.UID = name, "default", types.UID(uid)
	p.Spec.RestartPolicy = policy
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: c, Image: "work:1"})
	}
	return p
}

// pod is a pod default/name of one container; its creation is t0 plus
// age seconds (admission order).
func pod(name, uid string, age int) *v1.Pod {
	p := testPod(name, uid, v1.RestartPolicyAlways, "app")
	p.CreationTimestamp = metav1.NewTime(at(age))
	return p
}

// edited is p with another image: a changed spec under the same UID.
func edited(p *v1.Pod) *v1.Pod {
	cp := p.DeepCopy()
	cp.Spec.Containers[0].Image = "work:2"
	return cp
}

// relabelled is p with a new label: the same spec.
func relabelled(p *v1.Pod) *v1.Pod {
	cp := p.DeepCopy()
	cp.Labels = map[string]string{"edited": "yes"}
	return cp
}

// hostPort is p asking for host port 8080/TCP on every address.
func hostPort(p *v1.Pod) *v1.Pod {
	p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
	return p
}

// ctr is a running container of pod default/name (uid) on node n.
func ctr(n, name, uid, container string) runtimeadapter.Container {
	m := runtimeadapter.Meta{Node: n, PodUID: uid, PodName: name, PodNamespace: "default",
		ContainerName: container, Type: runtimeadapter.TypeApp}
	return runtimeadapter.Container{ID: uid + "-" + container, Name: container, Labels: m.Labels(), State: runtimeadapter.StateRunning}
}

func synced(src string, pods ...*v1.Pod) Event {
	return SourceSet{Source: src, Pods: pods, Synced: true}
}
func listing(sec int, cs ...runtimeadapter.Container) Event {
	return Listing{Containers: cs, ObservedAt: at(sec)}
}
func status(uid string, ph v1.PodPhase) Event {
	return StatusReport{UID: types.UID(uid), Status: &v1.PodStatus{Phase: ph}}
}
func terminated(uid string) Event  { return Terminated{UID: types.UID(uid)} }
func actorFailed(uid string) Event { return ActorFailed{UID: types.UID(uid)} }

// summary renders a record compactly: uid name phase, then what else it holds.
func summary(r *Record) string {
	s := fmt.Sprintf("%s %s %s", r.UID, r.Name, r.Phase)
	if r.Next != nil {
		s += " next=" + string(r.Next.UID)
	}
	if r.Held {
		s += " held"
	}
	if r.Status != nil {
		s += " status=" + string(r.Status.Phase)
		if r.Status.Reason != "" {
			s += "/" + r.Status.Reason
		}
	}
	if r.Removing {
		s += " removing"
	}
	if !r.GoneAt.IsZero() {
		s += fmt.Sprintf(" gone@%d", int(r.GoneAt.Sub(t0)/time.Second))
	}
	return s
}

type step struct {
	ev   Event
	want []string // the effects, rendered
}

// TestLifecycle drives the node's state with event sequences (step i at
// at(i+1)) and checks each step's effects and the records at the end.
func TestLifecycle(t *testing.T) {
	web, webNew := pod("web", "uid-old", 0), pod("web", "uid-new", 1)
	a, b := pod("a", "uid-a", 0), pod("b", "uid-b", 1)
	oldWeb := []runtimeadapter.Container{ctr(node, "web", "uid-old", "app"), ctr(node, "web", "uid-old", "POD")}
	tests := []struct {
		name    string
		sources []string // default: "file"
		steps   []step
		records []string
	}{
		{
			name: "no pod is sent before the first listing: an old instance of its name may run (invariants 4, 6)",
			steps: []step{
				{synced("file", a), nil},
				{listing(2), []string{"add default/a(uid-a)"}},
				{listing(3), nil},
			},
			records: []string{"uid-a default/a Running"},
		},
		{
			name: "an agent restart: a desired pod's containers in the first listing are its own, not an orphan's (invariant 4)",
			steps: []step{
				{synced("file", web), nil},
				{listing(2, oldWeb...), []string{"add default/web(uid-old)"}},
				{listing(3, oldWeb...), nil},
			},
			records: []string{"uid-old default/web Running"},
		},
		{
			name: "same spec sends nothing; a changed spec is sent again, not admitted anew",
			steps: []step{
				{listing(1), nil},
				{synced("file", a), []string{"add default/a(uid-a)"}},
				{synced("file", relabelled(a)), nil},
				{synced("file", edited(a)), []string{"spec default/a(uid-a)"}},
			},
			records: []string{"uid-a default/a Running"},
		},
		{
			name: "status reports of desired pods are kept and published; others ignored",
			steps: []step{
				{listing(1), nil},
				{synced("file", a), []string{"add default/a(uid-a)"}},
				{status("uid-a", v1.PodRunning), []string{"publish default/a(uid-a) Running"}},
				{status("uid-unknown", v1.PodRunning), nil},
			},
			records: []string{"uid-a default/a Running status=Running"},
		},
		{
			name: "a removed pod is removed, keeps reporting until Terminated, then its last status is published removed",
			steps: []step{
				{listing(1), nil},
				{synced("file", a), []string{"add default/a(uid-a)"}},
				{status("uid-a", v1.PodRunning), []string{"publish default/a(uid-a) Running"}},
				{synced("file"), []string{"remove default/a(uid-a)"}},
				{status("uid-a", v1.PodSucceeded), nil},
				{terminated("uid-a"), []string{"publish default/a(uid-a) Succeeded removed"}},
				{terminated("uid-a"), nil},
			},
			records: []string{"uid-a default/a Gone gone@6"},
		},
		{
			name: "a gone pod's containers in a listing observed before its end are not an orphan; in a later one they are (invariant 2)",
			steps: []step{
				{listing(1), nil},
				{synced("file", a), []string{"add default/a(uid-a)"}},
				{synced("file"), []string{"remove default/a(uid-a)"}},
				{terminated("uid-a"), []string{"publish default/a(uid-a)  removed"}},
				{listing(3, ctr(node, "a", "uid-a", "app")), nil},
				{listing(6, ctr(node, "a", "uid-a", "app")), []string{"remove orphan default/a(uid-a)"}},
			},
			records: []string{"uid-a default/a Terminating"},
		},
		{
			name: "an edit (new UID, same name) waits until the old instance is gone (invariant 6)",
			steps: []step{
				{listing(1), nil},
				{synced("file", web), []string{"add default/web(uid-old)"}},
				{synced("file", webNew), []string{"remove default/web(uid-old)", "hold default/web(uid-new) for default/web(uid-old)"}},
				{listing(4, oldWeb...), nil},
				{synced("file", webNew), nil}, // held is reported once
				{terminated("uid-old"), []string{"publish default/web(uid-old)  removed", "add default/web(uid-new)"}},
			},
			records: []string{"uid-new default/web Running", "uid-old default/web Gone gone@6"},
		},
		{
			name:    "a move between sources waits for the old instance too (invariant 6)",
			sources: []string{"a-dir", "b-url"},
			steps: []step{
				{listing(1), nil},
				{synced("a-dir", web), []string{"add default/web(uid-old)"}},
				{synced("b-url"), nil},
				{synced("b-url", webNew), []string{"duplicate default/web in b-url"}},
				{synced("a-dir"), []string{"remove default/web(uid-old)", "hold default/web(uid-new) for default/web(uid-old)"}},
				{terminated("uid-old"), []string{"publish default/web(uid-old)  removed", "add default/web(uid-new)"}},
			},
			records: []string{"uid-new default/web Running", "uid-old default/web Gone gone@6"},
		},
		{
			name: "an edit made while the agent was down: the old instance is an orphan, removed first, then the new one runs (invariant 6)",
			steps: []step{
				{synced("file", webNew), nil},
				{listing(2, oldWeb...), []string{"remove orphan default/web(uid-old)", "hold default/web(uid-new) for default/web(uid-old)"}},
				{listing(3, oldWeb...), nil},
				{terminated("uid-old"), []string{"add default/web(uid-new)"}},
				{listing(5, ctr(node, "web", "uid-new", "app")), nil},
			},
			records: []string{"uid-new default/web Running"},
		},
		{
			name:    "orphans linger until every source has synced, and a pod of their name waits for them (invariant 2)",
			sources: []string{"file", "url"},
			steps: []step{
				{synced("file", webNew), nil},
				{listing(2, oldWeb...), []string{"linger default/web(uid-old)", "hold default/web(uid-new) for default/web(uid-old)"}},
				{listing(3, oldWeb...), nil},
				{synced("url"), nil},
				{listing(5, oldWeb...), []string{"remove orphan default/web(uid-old)"}},
				{terminated("uid-old"), []string{"add default/web(uid-new)"}},
			},
			records: []string{"uid-new default/web Running", "uid-old default/web Gone gone@6"},
		},
		{
			name:    "an unsynced source keeps the old instance: a lingering orphan desired again is not an orphan",
			sources: []string{"file", "url"},
			steps: []step{
				{synced("file"), nil},
				{listing(2, oldWeb...), []string{"linger default/web(uid-old)"}},
				{synced("url", web), []string{"add default/web(uid-old)"}},
				{listing(4, oldWeb...), nil},
			},
			records: []string{"uid-old default/web Running"},
		},
		{
			name:    "a lingering orphan removed from outside releases the pod waiting for it",
			sources: []string{"file", "url"},
			steps: []step{
				{synced("file", webNew), nil},
				{listing(2, oldWeb...), []string{"linger default/web(uid-old)", "hold default/web(uid-new) for default/web(uid-old)"}},
				{listing(3), []string{"add default/web(uid-new)"}},
			},
			records: []string{"uid-new default/web Running"},
		},
		{
			name:    "an edit of a source's set (ApplyPod, DeletePod) does not sync it: orphans still linger",
			sources: []string{"file", "host"},
			steps: []step{
				{synced("file"), nil},
				{SourceSet{Source: "host", Pods: []*v1.Pod{a}}, nil},
				{listing(3, oldWeb...), []string{"linger default/web(uid-old)", "add default/a(uid-a)"}},
				{synced("host", a), nil},
				{listing(5, oldWeb...), []string{"remove orphan default/web(uid-old)"}},
			},
			records: []string{"uid-a default/a Running", "uid-old default/web Terminating"},
		},
		{
			name: "a pod removed while it waits leaves nothing; a late report of the end of an unknown removal is ignored",
			steps: []step{
				{synced("file", a), nil},
				{synced("file"), nil},
				{RemovalDone{UID: "uid-a", At: at(3)}, nil},
				{terminated("uid-a"), nil},
				{listing(5), nil},
			},
		},
		{
			name: "containers of another node or without actorlet's labels are never orphans (invariant 3)",
			steps: []step{
				{synced("file"), nil},
				{listing(2, ctr("other-node", "x", "uid-x", "app"),
					runtimeadapter.Container{ID: "foreign", Labels: map[string]string{"app": "x"}, State: runtimeadapter.StateRunning}), nil},
			},
		},
		{
			name: "an abandoned removal: the node removes the containers itself, and the replacement waits until a later listing shows none (invariant 6)",
			steps: []step{
				{listing(1), nil},
				{synced("file", web), []string{"add default/web(uid-old)"}},
				{synced("file", webNew), []string{"remove default/web(uid-old)", "hold default/web(uid-new) for default/web(uid-old)"}},
				{actorFailed("uid-old"), []string{"abandon default/web(uid-old)"}},
				{listing(5, oldWeb...), []string{"remove containers of default/web(uid-old): 2"}},
				{listing(6, oldWeb...), nil}, // removal under way
				{RemovalDone{UID: "uid-old", At: at(7)}, nil},
				{listing(6), nil}, // taken before the removal ended
				{listing(8, oldWeb[1]), []string{"remove containers of default/web(uid-old): 1"}}, // the sandbox was left
				{RemovalDone{UID: "uid-old", At: at(10)}, nil},
				{listing(11), []string{"abandoned gone default/web(uid-old)", "publish default/web(uid-old)  removed", "add default/web(uid-new)"}},
			},
			records: []string{"uid-new default/web Running", "uid-old default/web Gone gone@11"},
		},
		{
			name: "of two pods asking for one host port the older wins; the other is rejected until it stops being desired",
			steps: []step{
				{listing(1), nil},
				{synced("file", hostPort(pod("b", "uid-b", 1)), hostPort(pod("a", "uid-a", 0))), []string{
					"add default/a(uid-a)",
					"reject default/b (NodePorts): Node didn't have free ports for the requested pod ports: host port 8080/TCP is held by pod default/a",
					"publish default/b(uid-b) Failed/NodePorts"}},
				{synced("file", hostPort(pod("a", "uid-a", 0)), edited(hostPort(pod("b", "uid-b", 1)))), nil}, // stays rejected
				{synced("file", hostPort(pod("a", "uid-a", 0))), nil},
			},
			records: []string{"uid-a default/a Running"},
		},
		{
			name: "a failed pod actor fails its pod until its spec changes; a router restart does not respawn it",
			steps: []step{
				{listing(1), nil},
				{synced("file", a, b), []string{"add default/a(uid-a)", "add default/b(uid-b)"}},
				{actorFailed("uid-a"), []string{"failed default/a(uid-a)", "publish default/a(uid-a) Failed/PodActorFailed"}},
				{RouterRestarted{}, []string{"spec default/b(uid-b)"}},
				{synced("file", relabelled(a), b), nil},
				{synced("file", edited(a), b), []string{"spec default/a(uid-a)"}},
				{RouterRestarted{}, []string{"spec default/a(uid-a)", "spec default/b(uid-b)"}},
			},
			records: []string{"uid-a default/a Running status=Failed/PodActorFailed", "uid-b default/b Running"},
		},
		{
			name: "a router restart is told again what runs and what is being removed, but not the abandoned pods",
			steps: []step{
				{listing(1), nil},
				{synced("file", a, b, web), []string{"add default/a(uid-a)", "add default/web(uid-old)", "add default/b(uid-b)"}},
				{synced("file", a), []string{"remove default/b(uid-b)", "remove default/web(uid-old)"}},
				{actorFailed("uid-b"), []string{"abandon default/b(uid-b)"}},
				{RouterRestarted{}, []string{"spec default/a(uid-a)", "remove default/web(uid-old)"}},
			},
			records: []string{"uid-a default/a Running", "uid-b default/b Abandoned", "uid-old default/web Terminating"},
		},
		{
			name: "a pod removed and desired again under its own UID waits for its old instance, then runs anew (invariant 1: one pod actor per UID at a time)",
			steps: []step{
				{listing(1), nil},
				{synced("file", a), []string{"add default/a(uid-a)"}},
				{status("uid-a", v1.PodRunning), []string{"publish default/a(uid-a) Running"}},
				{synced("file"), []string{"remove default/a(uid-a)"}},
				{synced("file", a), []string{"hold default/a(uid-a) for default/a(uid-a)"}},
				{status("uid-a", v1.PodRunning), []string{"publish default/a(uid-a) Running"}},
				{terminated("uid-a"), []string{"publish default/a(uid-a) Running removed", "add default/a(uid-a)"}},
			},
			records: []string{"uid-a default/a Running gone@7"},
		},
		{
			name: "a pod desired again then removed again before its old instance ended leaves nothing",
			steps: []step{
				{listing(1), nil},
				{synced("file", a), []string{"add default/a(uid-a)"}},
				{synced("file"), []string{"remove default/a(uid-a)"}},
				{synced("file", a), []string{"hold default/a(uid-a) for default/a(uid-a)"}},
				{synced("file"), nil},
				{terminated("uid-a"), []string{"publish default/a(uid-a)  removed"}},
				{listing(7), nil},
			},
		},
		{
			name:    "a drain removes every pod, orphans too before the sources synced, and answers once nothing runs",
			sources: []string{"file", "url"},
			steps: []step{
				{synced("file", a), nil},
				{listing(2, ctr(node, "x", "uid-x", "app")), []string{"linger default/x(uid-x)", "add default/a(uid-a)"}},
				{Drain{Reply: true}, []string{"remove default/a(uid-a)"}},
				{listing(4, ctr(node, "x", "uid-x", "app")), []string{"remove orphan default/x(uid-x)"}},
				{terminated("uid-a"), []string{"publish default/a(uid-a)  removed"}},
				{synced("url", b), nil}, // desired nothing any more
				{terminated("uid-x"), []string{"drained"}},
				{Drain{Reply: true}, []string{"drained"}},
				{Drain{}, nil},
			},
			records: []string{"uid-a default/a Gone gone@5", "uid-x default/x Gone gone@7"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srcs := tt.sources
			if srcs == nil {
				srcs = []string{"file"}
			}
			runSteps(t, New(node, srcs), tt.steps, tt.records)
		})
	}
}

// runSteps steps s through steps (step i at at(i+1)), checking each
// step's effects and the indexes, then the records at the end.
func runSteps(t *testing.T, s *State, steps []step, records []string) {
	t.Helper()
	for i, st := range steps {
		var got []string
		for _, e := range s.Step(at(i+1), st.ev) {
			got = append(got, e.String())
		}
		if !slices.Equal(got, st.want) {
			t.Fatalf("step %d (%T): effects\n  %s\nwant\n  %s", i, st.ev, strings.Join(got, "\n  "), strings.Join(st.want, "\n  "))
		}
		checkIndexes(t, s)
	}
	var got []string
	for _, r := range s.Records() {
		got = append(got, summary(r))
	}
	if !slices.Equal(got, records) {
		t.Errorf("records\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(records, "\n  "))
	}
}

// checkIndexes checks the indexes against the records.
func checkIndexes(t *testing.T, s *State) {
	t.Helper()
	n, stopping, marked := 0, 0, 0
	for name, first := range s.byName {
		for r := first; r != nil; r = r.sameName {
			n++
			if s.pods[r.UID] != r || r.Name != name {
				t.Fatalf("byName[%s] holds a stale %s", name, summary(r))
			}
		}
	}
	for uid, r := range s.pods {
		if r.UID != uid || r.Phase == 0 {
			t.Fatalf("record %s: %s", uid, summary(r))
		}
		if r.Phase.terminating() || r.Phase == Lingering {
			stopping++
		}
		if s.byPhase[r.Phase][uid] != r {
			t.Fatalf("record %s not indexed by its phase", summary(r))
		}
		if !r.GoneAt.IsZero() {
			marked++
			if s.marked[uid] != r {
				t.Fatalf("record %s not indexed as gone", summary(r))
			}
		}
	}
	inPhases := 0
	for _, m := range s.byPhase {
		inPhases += len(m)
	}
	if n != len(s.pods) || inPhases != len(s.pods) || stopping != s.stopping() || marked != len(s.marked) {
		t.Fatalf("indexes: %d by name, %d by phase, %d stopping, %d marked; records: %d, %d stopping, %d marked",
			n, inPhases, s.stopping(), len(s.marked), len(s.pods), stopping, marked)
	}
}

// The node keeps the status a pod actor reported (its pointer: one status
// per pod, not a copy), and never changes it: a pod actor failure makes
// a new one.
func TestReportedStatusIsKeptNotCopiedNorChanged(t *testing.T) {
	s := New(node, []string{"file"})
	s.Step(at(1), Listing{ObservedAt: at(1)})
	s.Step(at(2), synced("file", pod("a", "uid-a", 0)))
	st := &v1.PodStatus{Phase: v1.PodRunning, Message: "as reported"}
	s.Step(at(3), StatusReport{UID: "uid-a", Status: st})
	r := s.Record("uid-a")
	if r == nil || r.Status != st {
		t.Fatalf("record %+v: status not the reported one", r)
	}
	s.Step(at(4), ActorFailed{UID: "uid-a"})
	if st.Phase != v1.PodRunning || st.Message != "as reported" {
		t.Errorf("the reported status was changed in place: %+v", st)
	}
	if r.Status == st || r.Status.Phase != v1.PodFailed || r.Status.Reason != "PodActorFailed" {
		t.Errorf("after the actor failed the record holds %+v", r.Status)
	}
}

// A name's records stay listed in the order indexed whichever one leaves
// (first, middle, last), and a name with none left is not kept.
func TestByNameListsKeepOrder(t *testing.T) {
	s := New(node, []string{"file"})
	names := func() []types.UID {
		var out []types.UID
		for r := s.byName["default/web"]; r != nil; r = r.sameName {
			out = append(out, r.UID)
		}
		return out
	}
	rs := map[types.UID]*Record{}
	for _, uid := range []types.UID{"a", "b", "c", "d"} {
		rs[uid] = &Record{UID: uid, Name: "default/web"}
		s.index(rs[uid])
	}
	for _, step := range []struct {
		out  types.UID
		want []types.UID
	}{{"b", []types.UID{"a", "c", "d"}}, {"a", []types.UID{"c", "d"}}, {"d", []types.UID{"c"}}, {"c", nil}} {
		s.unindex(rs[step.out])
		if got := names(); !slices.Equal(got, step.want) {
			t.Fatalf("after %s left: %v, want %v", step.out, got, step.want)
		}
	}
	if _, ok := s.byName["default/web"]; ok {
		t.Error("an empty name is still indexed")
	}
}

// A node's record is one 144-B size-class allocation per pod.
func TestRecordSize(t *testing.T) {
	if n := unsafe.Sizeof(Record{}); n > 144 {
		t.Errorf("Record is %d B, over its 144-B size class", n)
	}
}
