package supervision

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// BackoffStore keeps the CrashLoopBackOff record of every container of the
// node, outside the pod actors: a pod actor restarted by its supervisor
// finds its records again. With a path, the records are also written to a
// small state file (atomically: a temporary file renamed over it) after
// every change and read back at start, so they survive a restart of
// actorlet itself. It is safe for concurrent use.
type BackoffStore struct {
	policy BackoffPolicy
	path   string

	mu   sync.Mutex
	recs map[string]*CrashLoop
}

// backoffRecord is one record as the state file holds it.
type backoffRecord struct {
	LastExit string        `json:"lastExit"`
	Deadline time.Time     `json:"deadline"`
	Delay    time.Duration `json:"delay"`
}

// NewBackoffStore returns a store for policy. path may be empty (memory
// only); a missing file is an empty store; an unreadable or corrupt one is
// an error naming the file (the caller may start empty instead).
func NewBackoffStore(policy BackoffPolicy, path string) (*BackoffStore, error) {
	s := &BackoffStore{policy: policy, path: path, recs: map[string]*CrashLoop{}}
	if path == "" {
		return s, nil
	}
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("backoff state %s: %w", path, err)
	}
	var recs map[string]backoffRecord
	if err := json.Unmarshal(b, &recs); err != nil {
		return s, fmt.Errorf("backoff state %s: %w", path, err)
	}
	for k, r := range recs {
		s.recs[k] = restoreCrashLoop(policy, r)
	}
	return s, nil
}

// restoreCrashLoop rebuilds a record whose last exit got delay r.Delay:
// the next exit gets the delay after it on the policy's curve.
func restoreCrashLoop(p BackoffPolicy, r backoffRecord) *CrashLoop {
	c := NewCrashLoop(p)
	for i := 0; i < 64; i++ { // the curve doubles: a few steps reach any delay
		d := c.b.NextBackOff()
		if d >= r.Delay || (p.Max > 0 && d >= p.Max) {
			break
		}
	}
	c.lastExit, c.deadline, c.delay = r.LastExit, r.Deadline, r.Delay
	return c
}

// Key names the record of a container: pod UID, container name and spec
// hash (a new spec starts a fresh curve).
func Key(podUID, container, hash string) string { return podUID + "/" + container + "/" + hash }

// RestartAt is CrashLoop.Observe on the record of key.
func (s *BackoffStore) RestartAt(key, deadID string, startedAt, finishedAt time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.recs[key]
	if c == nil {
		c = NewCrashLoop(s.policy)
		s.recs[key] = c
	}
	before := c.lastExit
	at := c.Observe(deadID, startedAt, finishedAt)
	if c.lastExit != before {
		s.saveLocked()
	}
	return at
}

// Forget drops every record of a pod (it was removed).
func (s *BackoffStore) Forget(podUID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := false
	for k := range s.recs {
		if strings.HasPrefix(k, podUID+"/") {
			delete(s.recs, k)
			changed = true
		}
	}
	if changed {
		s.saveLocked()
	}
}

// saveLocked writes the state file; a failure is not fatal (the records
// stay in memory) and is retried on the next change.
func (s *BackoffStore) saveLocked() {
	if s.path == "" {
		return
	}
	recs := make(map[string]backoffRecord, len(s.recs))
	for k, c := range s.recs {
		recs[k] = backoffRecord{LastExit: c.lastExit, Deadline: c.deadline, Delay: c.delay}
	}
	b, err := json.Marshal(recs)
	if err != nil {
		return
	}
	dir := filepath.Dir(s.path)
	_ = os.MkdirAll(dir, 0o755)
	tmp, err := os.CreateTemp(dir, ".backoff-*.tmp")
	if err != nil {
		return
	}
	if _, err := tmp.Write(b); err != nil || tmp.Sync() != nil || tmp.Close() != nil {
		os.Remove(tmp.Name())
		return
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		os.Remove(tmp.Name())
	}
}
