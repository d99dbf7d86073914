package podstate

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// An idle pod's machine is one allocation of the 352-byte size class: a
// field added (or a bool placed between words) that moves it to the
// next class costs every pod of a node 32 B more. Change the limit
// knowingly.
func TestPodMachineSize(t *testing.T) {
	if n := unsafe.Sizeof(Pod{}); n > 352 {
		t.Errorf("podstate.Pod is %d B, over its 352-B size class", n)
	}
}

// A held container is 240 B (a pod's sandbox and app: one 480-B
// allocation), and heldFields keeps every field of
// runtimeadapter.Container but Labels, by name, type and order.
func TestHeldContainerSize(t *testing.T) {
	if n := unsafe.Sizeof(held{}); n > 240 {
		t.Errorf("held is %d B, over 240 B", n)
	}
	c, l := reflect.TypeOf(runtimeadapter.Container{}), reflect.TypeOf(heldFields{})
	j := 0
	for i := range c.NumField() {
		f := c.Field(i)
		if f.Name == "Labels" {
			continue
		}
		if j >= l.NumField() || l.Field(j).Name != f.Name || l.Field(j).Type != f.Type {
			t.Fatalf("heldFields does not mirror runtimeadapter.Container at field %s", f.Name)
		}
		j++
	}
	if j != l.NumField() {
		t.Errorf("heldFields has %d fields, Container %d besides Labels", l.NumField(), j)
	}
}
