package dir

import (
	"testing"
	"time"
)

// The numbers the issue and the README promise: a full re-scan every 20 s
// behind the watch, as the kubelet's file source.
func TestDefaultPeriods(t *testing.T) {
	s := New(t.TempDir(), "n1")
	if s.rescan != 20*time.Second {
		t.Errorf("default rescan %v, want 20s", s.rescan)
	}
	if s.debounce > time.Second/2 {
		t.Errorf("default debounce %v leaves too little of the 1 s to see a change", s.debounce)
	}
	if New(t.TempDir(), "n1", WithRescanPeriod(0)).rescan != 20*time.Second {
		t.Error("a zero rescan period must keep the default")
	}
}
