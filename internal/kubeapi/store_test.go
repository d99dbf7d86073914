package kubeapi

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

func pod(name, uid, phase string) runtime.Object {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(uid)}, Status: v1.PodStatus{Phase: v1.PodPhase(phase)}}
}

// summary renders changes as "TYPE key phase@rv".
func summary(cs []change) []string {
	var out []string
	for _, c := range cs {
		p := c.obj.(*v1.Pod)
		out = append(out, fmt.Sprintf("%s %s %s %s@%d", c.typ, c.key, p.UID, p.Status.Phase, c.rv))
		if p.ResourceVersion != fmt.Sprint(c.rv) {
			out = append(out, "resourceVersion "+p.ResourceVersion+" ≠ change's")
		}
	}
	return out
}

func TestStoreSync(t *testing.T) {
	steps := []struct {
		name string
		objs []runtime.Object
		want []string
	}{
		{"first set: added in key order", []runtime.Object{pod("b", "u-b", "Pending"), pod("a", "u-a", "Running")},
			[]string{"ADDED default/a u-a Running@101", "ADDED default/b u-b Pending@102"}},
		{"same again: nothing", []runtime.Object{pod("a", "u-a", "Running"), pod("b", "u-b", "Pending")}, nil},
		{"status change: modified", []runtime.Object{pod("a", "u-a", "Running"), pod("b", "u-b", "Running")},
			[]string{"MODIFIED default/b u-b Running@103"}},
		{"new UID: deleted then added", []runtime.Object{pod("a", "u-a2", "Pending"), pod("b", "u-b", "Running")},
			[]string{"DELETED default/a u-a Running@104", "ADDED default/a u-a2 Pending@105"}},
		{"gone: deleted with its last state", []runtime.Object{pod("a", "u-a2", "Pending")},
			[]string{"DELETED default/b u-b Running@106"}},
		{"duplicate name: the first wins", []runtime.Object{pod("a", "u-a2", "Pending"), pod("a", "u-x", "Failed")}, nil},
	}
	s := newStore(10, 100)
	for _, st := range steps {
		got := summary(s.sync(resPods, st.objs))
		if fmt.Sprint(got) != fmt.Sprint(st.want) {
			t.Fatalf("%s: changes\n got %q\nwant %q", st.name, got, st.want)
		}
	}
	if v := s.version(); v != 106 {
		t.Fatalf("version = %d, want 106", v)
	}
	objs, rv := s.list(resPods)
	if len(objs) != 1 || rv != 106 || objs[0].(*v1.Pod).ResourceVersion != "105" {
		t.Fatalf("list = %v at %d, want default/a at resourceVersion 105, list at 106", objs, rv)
	}
}

func TestStoreSinceAndExpiry(t *testing.T) {
	s := newStore(3, 0)
	for i := range 5 {
		s.sync(resPods, []runtime.Object{pod("a", "u", fmt.Sprint("p", i))})
	}
	// Versions 2..6 were recorded; 3 are kept (4, 5, 6).
	if _, _, _, expired := s.since(resPods, 2); !expired {
		t.Fatal("since 2: not expired, want expired (change 3 is gone)")
	}
	got, now, _, expired := s.since(resPods, 3)
	if expired || len(got) != 3 || now != 6 {
		t.Fatalf("since 3 = %d changes, now %d, expired %v; want 3, 6, false", len(got), now, expired)
	}
	got, _, wake, _ := s.since(resPods, 6)
	if len(got) != 0 {
		t.Fatalf("since 6 = %d changes, want 0", len(got))
	}
	select {
	case <-wake:
		t.Fatal("woken without a change")
	default:
	}
	s.sync(resEvents, []runtime.Object{&v1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "e1"}}})
	select {
	case <-wake:
	default:
		t.Fatal("not woken by a change")
	}
	if got, _, _, _ := s.since(resPods, 6); len(got) != 0 {
		t.Fatalf("pods since 6 = %d changes, want 0 (the change was an event's)", len(got))
	}
}

// listAt rebuilds a past version's set from the current one and the
// history: additions, modifications, replacements and deletions undone.
func TestStoreListAt(t *testing.T) {
	s := newStore(4, 100)
	s.sync(resPods, []runtime.Object{pod("a", "u-a", "Running"), pod("b", "u-b", "Pending")}) // 101, 102
	s.sync(resEvents, []runtime.Object{&v1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "e1"}}})
	s.sync(resPods, []runtime.Object{pod("b", "u-b", "Running"), pod("c", "u-c", "Pending")})  // a deleted 104, b modified 105, c added 106
	s.sync(resPods, []runtime.Object{pod("b", "u-b2", "Pending"), pod("c", "u-c", "Pending")}) // b replaced 107, 108
	show := func(objs []runtime.Object) string {
		var out []string
		for _, o := range objs {
			p := o.(*v1.Pod)
			out = append(out, fmt.Sprintf("%s %s %s@%s", p.Name, p.UID, p.Status.Phase, p.ResourceVersion))
		}
		return fmt.Sprint(out)
	}
	for _, c := range []struct {
		rv   uint64
		want string // "expired" when it cannot be rebuilt
	}{
		{108, "[b u-b2 Pending@108 c u-c Pending@106]"},
		{106, "[b u-b Running@105 c u-c Pending@106]"},
		{105, "[b u-b Running@105]"},
		{104, "[b u-b Pending@102]"},
		{103, "expired"}, // history of 4 keeps 105..108: change 104 is gone
		{109, "expired"}, // not reached
	} {
		objs, ok := s.listAt(resPods, c.rv)
		got := show(objs)
		if !ok {
			got = "expired"
		}
		if got != c.want {
			t.Errorf("listAt(%d) = %s, want %s", c.rv, got, c.want)
		}
	}
}
