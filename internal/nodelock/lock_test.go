package nodelock

import (
	"errors"
	"testing"
)

func TestLockExcludesSecondHolder(t *testing.T) {
	dir := t.TempDir()
	l1, err := Acquire(dir, "n1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(dir, "n1"); !errors.Is(err, ErrHeld) {
		t.Fatalf("second Acquire: %v, want ErrHeld", err)
	}
	l2, err := Acquire(dir, "n2")
	if err != nil {
		t.Fatalf("another node name must not conflict: %v", err)
	}
	defer l2.Release()
	if err := l1.Release(); err != nil {
		t.Fatal(err)
	}
	l3, err := Acquire(dir, "n1")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	l3.Release()
}
