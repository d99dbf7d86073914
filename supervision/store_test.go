package supervision

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The curve goes on across a restart of actorlet: 10 s, 20 s, then — read
// back from the state file — 40 s.
func TestBackoffStoreSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "backoff.json")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s, err := NewBackoffStore(DefaultBackoffPolicy(), path)
	if err != nil {
		t.Fatal(err)
	}
	k := Key("uid", "app", "h1")
	if d := s.RestartAt(k, "a", t0, t0.Add(time.Second)).Sub(t0.Add(time.Second)); d != 10*time.Second {
		t.Fatalf("first delay %v", d)
	}
	if d := s.RestartAt(k, "b", t0, t0.Add(time.Second)).Sub(t0.Add(time.Second)); d != 20*time.Second {
		t.Fatalf("second delay %v", d)
	}
	s2, err := NewBackoffStore(DefaultBackoffPolicy(), path)
	if err != nil {
		t.Fatal(err)
	}
	if d := s2.RestartAt(k, "b", t0, t0.Add(time.Second)).Sub(t0.Add(time.Second)); d != 20*time.Second {
		t.Fatalf("the same exit after restart: %v, want its 20 s again", d)
	}
	if d := s2.RestartAt(k, "c", t0, t0.Add(time.Second)).Sub(t0.Add(time.Second)); d != 40*time.Second {
		t.Fatalf("next exit after restart: %v, want 40 s", d)
	}
	s2.Forget("uid")
	s3, _ := NewBackoffStore(DefaultBackoffPolicy(), path)
	if d := s3.RestartAt(k, "d", t0, t0.Add(time.Second)).Sub(t0.Add(time.Second)); d != 10*time.Second {
		t.Fatalf("after Forget: %v, want a fresh 10 s", d)
	}
}

func TestBackoffStoreRejectsCorruptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "backoff.json")
	if err := writeFile(path, "{not json"); err != nil {
		t.Fatal(err)
	}
	if _, err := NewBackoffStore(DefaultBackoffPolicy(), path); err == nil {
		t.Fatal("a corrupt state file gave no error")
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }
