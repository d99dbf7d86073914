package supervision

import (
	"encoding/json"
	"testing"
	"time"
	"unsafe"
)

func TestRecordsGetSetCloneEqual(t *testing.T) {
	a := ContainerRecord{Exit: Exit{ContainerID: "a-0"}}
	b := ContainerRecord{Exit: Exit{ContainerID: "b-0"}}
	var rs Records
	if _, ok := rs.Get("app"); ok {
		t.Fatal("empty records found app")
	}
	rs = rs.Set("app", a).Set("side", b)
	if r, ok := rs.Get("app"); !ok || r.Exit.ContainerID != "a-0" {
		t.Fatalf("Get(app) = %+v, %v", r, ok)
	}
	c := rs.Clone()
	c = c.Set("app", b)
	if r, _ := rs.Get("app"); r.Exit.ContainerID != "a-0" {
		t.Fatalf("Set on a clone changed the original: %+v", r)
	}
	if len(c) != 2 || rs.Equal(c) {
		t.Fatalf("clone after Set: %+v, equal %v", c, rs.Equal(c))
	}
	if d := c.Clone(); cap(d) != 2 || cap(d.Set("third", a)) != 3 {
		t.Fatalf("Clone and Set do not keep the capacity exact: %d, %d", cap(d), cap(d.Set("third", a)))
	}
	reordered := Records{{Name: "side", Record: b}, {Name: "app", Record: a}}
	if !rs.Equal(reordered) {
		t.Fatal("the same records in another order are not Equal")
	}
	if rs.Equal(rs[:1]) {
		t.Fatal("records of different lengths are Equal")
	}
}

// The state file keeps its format: a pod's records are an object by
// container name.
func TestRecordsJSONIsAnObjectByName(t *testing.T) {
	at := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	rs := Records{{Name: "app", Record: ContainerRecord{Exit: Exit{ContainerID: "a-0"}, RestartAt: at}}}
	b, err := json.Marshal(rs)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(map[string]ContainerRecord{"app": rs[0].Record})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(want) {
		t.Fatalf("JSON %s, want %s", b, want)
	}
	var back Records
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !back.Equal(rs) {
		t.Fatalf("read back %+v, want %+v", back, rs)
	}
}

// A record is one 352-B size-class allocation per container (with its
// name): Seen keeps an instance, not a whole exit.
func TestNamedRecordSize(t *testing.T) {
	if n := unsafe.Sizeof(NamedRecord{}); n > 352 {
		t.Errorf("NamedRecord is %d B, over its 352-B size class", n)
	}
}
