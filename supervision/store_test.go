package supervision

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The records survive a restart of actorlet: read back from the state
// file, the curve goes on.
func TestHistorySurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "containers.json")
	p := DefaultBackoffPolicy()
	h, err := NewHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	var r ContainerRecord
	r = p.Restart(p.Observe(r, Exit{ContainerID: "a", Hash: "h1", FinishedAt: t0, ExitCode: 1, Reason: "Error"}), t0)
	r = p.Observe(r, Exit{ContainerID: "b", Hash: "h1", RestartCount: 1, FinishedAt: t0.Add(time.Second), ExitCode: 1, Reason: "Error"})
	h.Put("uid", RecordsOf(map[string]ContainerRecord{"app": r}))
	h.Flush()
	h2, err := NewHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := h2.Pod("uid").Map()["app"]
	if !ok || !got.Equal(r) {
		t.Fatalf("read back %+v, want %+v", got, r)
	}
	if d := p.Observe(p.Restart(got, got.RestartAt), Exit{ContainerID: "c", Hash: "h1", FinishedAt: t0.Add(time.Minute)}).Delay(); d != 20*time.Second {
		t.Fatalf("next exit after the restart: %v, want 20 s", d)
	}
	h2.Forget("uid")
	h2.Flush()
	h3, err := NewHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	if recs := h3.Pod("uid"); len(recs) != 0 {
		t.Fatalf("after Forget: %+v", recs)
	}
}

func TestHistoryRejectsCorruptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "containers.json")
	for _, content := range []string{"{not json", `{"version": 7, "pods": {}}`} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := NewHistory(path); err == nil {
			t.Errorf("%q gave no error", content)
		}
	}
}

// The back-off file of older versions is still read: its deadlines stay,
// the next delays follow the curve from the recorded one, and it is
// replaced by the new file.
func TestHistoryReadsTheOldBackoffFile(t *testing.T) {
	dir := t.TempDir()
	old, path := filepath.Join(dir, "n1.backoff.json"), filepath.Join(dir, "n1.containers.json")
	deadline := t0.Add(21 * time.Second)
	content := `{"uid/app/h1":{"lastExit":"b","deadline":"` + deadline.Format(time.RFC3339Nano) + `","delay":20000000000},` +
		`"uid/app/h0":{"lastExit":"z","deadline":"` + t0.Add(-time.Hour).Format(time.RFC3339Nano) + `","delay":10000000000}}`
	if err := os.WriteFile(old, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := NewHistory(path, WithLegacyBackoffFile(old))
	if err != nil {
		t.Fatal(err)
	}
	r, ok := h.Pod("uid").Map()["app"]
	if !ok || r.Exit.ContainerID != "b" || !r.RestartAt.Equal(deadline) || r.Exit.Known() {
		t.Fatalf("imported %+v", r)
	}
	p := DefaultBackoffPolicy()
	// The same exit, seen again: its deadline stays.
	r = p.Observe(r, Exit{ContainerID: "b", Hash: "h1", RestartCount: 2, FinishedAt: t0.Add(time.Second), ExitCode: 1})
	if !r.RestartAt.Equal(deadline) || !r.Exit.Known() {
		t.Fatalf("the old exit seen again: %+v", r)
	}
	r = p.Restart(r, deadline)
	if d := p.Observe(r, Exit{ContainerID: "c", Hash: "h1", FinishedAt: deadline.Add(time.Second)}).Delay(); d != 40*time.Second {
		t.Fatalf("next exit: %v, want 40 s (after the old file's 20 s)", d)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("old file still there: %v", err)
	}
	h2, err := NewHistory(path, WithLegacyBackoffFile(old))
	if err != nil || h2.Pod("uid").Map()["app"].Exit.ContainerID != "b" {
		t.Fatalf("new file: %+v, %v", h2.Pod("uid"), err)
	}
}

// What a record holds in memory only (the instance seen running) is not
// written: a Put that changes only that writes nothing.
func TestHistoryWritesOnlyWhatItKeeps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "containers.json")
	h, err := NewHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	h.Put("uid", RecordsOf(map[string]ContainerRecord{"app": {Seen: Instance{ContainerID: "a", RestartCount: 3}}}))
	h.Flush()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a record of a running instance only was written: %v", err)
	}
	if got := h.Pod("uid").Map()["app"].Seen.ContainerID; got != "a" {
		t.Fatalf("kept in memory: %q", got)
	}
	exit := Exit{ContainerID: "a", RestartCount: 3, FinishedAt: t0, ExitCode: 1}
	h.Put("uid", RecordsOf(map[string]ContainerRecord{"app": {Exit: exit, Seen: Instance{ContainerID: "a", RestartCount: 3}}}))
	h.Flush()
	h2, err := NewHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	if r := h2.Pod("uid").Map()["app"]; r.Exit.ContainerID != "a" || r.Seen.ContainerID != "" {
		t.Fatalf("read back %+v: want the exit, not the instance seen", r)
	}
}

// Put and Forget never write the file themselves (a pod actor calls them
// on its mailbox): a writer does, and changes made while it writes are
// written with the next write. After Flush the file holds the last state.
func TestHistoryWritesOffTheCaller(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "containers.json")
	h, err := NewHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	p := DefaultBackoffPolicy()
	var want map[string]ContainerRecord
	var wg sync.WaitGroup
	for i := range 50 {
		uid := fmt.Sprintf("uid-%d", i%5)
		r := p.Observe(ContainerRecord{}, Exit{ContainerID: fmt.Sprint(i), Hash: "h", FinishedAt: t0.Add(time.Duration(i) * time.Second), ExitCode: 1})
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.Put(uid, RecordsOf(map[string]ContainerRecord{"app": r}))
		}()
		if i == 49 {
			want = map[string]ContainerRecord{"app": r}
		}
	}
	wg.Wait()
	h.Put("uid-last", RecordsOf(want))
	h.Forget("uid-0")
	h.Flush()
	h2, err := NewHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 5; i++ {
		uid := fmt.Sprintf("uid-%d", i)
		if got, ok := h2.Pod(uid).Map()["app"]; !ok || !got.Equal(h.Pod(uid).Map()["app"]) {
			t.Errorf("%s read back %+v, want %+v", uid, got, h.Pod(uid).Map()["app"])
		}
	}
	if got := h2.Pod("uid-last").Map()["app"]; !got.Equal(want["app"]) {
		t.Errorf("uid-last read back %+v, want %+v", got, want["app"])
	}
	if len(h2.Pod("uid-0")) != 0 {
		t.Errorf("forgotten pod read back: %+v", h2.Pod("uid-0"))
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, ".containers-*.tmp")); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}
