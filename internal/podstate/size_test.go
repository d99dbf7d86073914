package podstate

import (
	"testing"
	"unsafe"
)

// An idle pod's machine is one allocation of a 384-byte size class: a
// field added (or a bool placed between words) that moves it to the
// next class costs every pod of a node 32 B more. Change the limit
// knowingly.
func TestPodMachineSize(t *testing.T) {
	if n := unsafe.Sizeof(Pod{}); n > 384 {
		t.Errorf("podstate.Pod is %d B, over its 384-B size class", n)
	}
}
