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

// History keeps the ContainerRecord of every container of the node's pods,
// outside the pod actors: a pod actor restarted by its supervisor finds
// its records again. With a path, the records are also written to a small
// state file (atomically: a temporary file renamed over it) after every
// change and read back at start, so they survive a restart of actorlet
// itself. The file is written by a writer goroutine, never by the caller
// of Put or Forget (a pod actor must not wait for an fsync on its
// mailbox): changes that come while it writes are written together next.
// Flush waits for the file to hold every change made before it. It is
// safe for concurrent use; it decides nothing (the pure pod plan does, on
// the records it is given).
type History struct {
	path string

	mu   sync.Mutex
	pods map[string]Records // pod UID → container name → record
	// dirty: a change not yet given to the writer. writing is closed when
	// the running writer ends (nil: none runs).
	dirty   bool
	writing chan struct{}
}

// historyFile is the state file's format.
type historyFile struct {
	Version int                `json:"version"`
	Pods    map[string]Records `json:"pods"`
}

const historyVersion = 2

// legacyRecord is one record of the old back-off file, keyed by
// "<pod UID>/<container name>/<spec hash>": the last exit's ID, the
// deadline of its replacement and its delay.
type legacyRecord struct {
	LastExit string        `json:"lastExit"`
	Deadline time.Time     `json:"deadline"`
	Delay    time.Duration `json:"delay"`
}

// HistoryOption configures NewHistory.
type HistoryOption func(*historyOptions)

type historyOptions struct{ legacy string }

// WithLegacyBackoffFile names the back-off state file of older actorlet
// versions: when the history's own file does not exist yet, its records
// are read (the back-off curves go on), written to the new file, and the
// old file is removed.
func WithLegacyBackoffFile(path string) HistoryOption {
	return func(o *historyOptions) { o.legacy = path }
}

// NewHistory returns a history kept in path (empty: in memory only). A
// missing file is an empty history; an unreadable or corrupt one is an
// error naming the file, with an empty history the caller may go on with.
// The file may also be in the old back-off format.
func NewHistory(path string, opts ...HistoryOption) (*History, error) {
	var o historyOptions
	for _, opt := range opts {
		opt(&o)
	}
	h := &History{path: path, pods: map[string]Records{}}
	if path == "" {
		return h, nil
	}
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		pods, err := parseHistory(b)
		if err != nil {
			return h, fmt.Errorf("container history %s: %w", path, err)
		}
		h.pods = pods
	case !os.IsNotExist(err):
		return h, fmt.Errorf("container history %s: %w", path, err)
	case o.legacy != "":
		b, err := os.ReadFile(o.legacy)
		if os.IsNotExist(err) {
			return h, nil
		}
		if err == nil {
			var pods map[string]Records
			if pods, err = parseHistory(b); err == nil {
				h.pods = pods
				if h.saveLocked() == nil {
					_ = os.Remove(o.legacy)
				}
				return h, nil
			}
		}
		return h, fmt.Errorf("back-off state %s: %w", o.legacy, err)
	}
	return h, nil
}

// parseHistory reads either format of the state file.
func parseHistory(b []byte) (map[string]Records, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, err
	}
	if _, ok := probe["version"]; ok {
		var f historyFile
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, err
		}
		if f.Version != historyVersion {
			return nil, fmt.Errorf("version %d, want %d", f.Version, historyVersion)
		}
		pods := f.Pods
		if pods == nil {
			pods = map[string]Records{}
		}
		return pods, nil
	}
	var old map[string]legacyRecord
	if err := json.Unmarshal(b, &old); err != nil {
		return nil, err
	}
	return fromLegacy(old), nil
}

// fromLegacy turns the old back-off records into container records that
// know only the exit's instance ID and spec hash: its deadline stays, and
// the next exit's delay follows on the curve from the recorded one.
func fromLegacy(old map[string]legacyRecord) map[string]Records {
	pods := map[string]Records{}
	for k, r := range old {
		parts := strings.SplitN(k, "/", 3)
		if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
			continue
		}
		uid, name, hash := parts[0], parts[1], parts[2]
		if cur, ok := pods[uid].Get(name); ok && !r.Deadline.After(cur.RestartAt) {
			continue // an older spec's record: the newest deadline wins
		}
		pods[uid] = pods[uid].Set(name, ContainerRecord{
			Exit:      Exit{ContainerID: r.LastExit, Hash: hash},
			RestartAt: r.Deadline,
			Backoff:   BackoffEntry{Hash: hash, Delay: r.Delay, LastUpdate: r.Deadline.Add(-r.Delay)},
		})
	}
	return pods
}

// Pod returns the records of a pod's containers by container name. The
// map is shared: callers must not modify it.
func (h *History) Pod(uid string) Records {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pods[uid]
}

// Put replaces the records of a pod (the map is kept: callers must not
// modify it afterwards) and writes the state file when what it keeps
// changed (not for ContainerRecord.Seen alone).
func (h *History) Put(uid string, recs Records) {
	h.mu.Lock()
	defer h.mu.Unlock()
	old := h.pods[uid]
	if old.Equal(recs) {
		return
	}
	if len(recs) == 0 {
		delete(h.pods, uid)
	} else {
		h.pods[uid] = recs
	}
	if !samePersisted(old, recs) {
		h.changedLocked()
	}
}

// samePersisted: the state file would hold the same for a and b (a record
// with nothing to keep is as none).
func samePersisted(a, b Records) bool {
	for _, n := range a {
		r, _ := b.Get(n.Name)
		if !n.Record.persistedEqual(r) {
			return false
		}
	}
	for _, n := range b {
		if _, ok := a.Get(n.Name); !ok && !n.Record.persistedEqual(ContainerRecord{}) {
			return false
		}
	}
	return true
}

// persisted is what the state file keeps: no record with nothing to keep.
func (h *History) persisted() map[string]Records {
	out := make(map[string]Records, len(h.pods))
	for uid, recs := range h.pods {
		for _, n := range recs {
			if n.Record.persistedEqual(ContainerRecord{}) {
				continue
			}
			out[uid] = append(out[uid], n)
		}
	}
	return out
}

// Forget drops every record of a pod (it has terminated).
func (h *History) Forget(uid string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.pods[uid]; !ok {
		return
	}
	delete(h.pods, uid)
	h.changedLocked()
}

// changedLocked has the state file written, off the caller: it starts the
// writer unless one runs (which then writes this change too).
func (h *History) changedLocked() {
	if h.path == "" {
		return
	}
	h.dirty = true
	if h.writing != nil {
		return
	}
	done := make(chan struct{})
	h.writing = done
	go h.write(done)
}

// write writes the state file until no change is left to write, then
// ends (a history with nothing to write holds no goroutine).
func (h *History) write(done chan struct{}) {
	defer close(done)
	h.mu.Lock()
	defer h.mu.Unlock()
	for h.dirty {
		h.dirty = false
		b, err := json.Marshal(historyFile{Version: historyVersion, Pods: h.persisted()})
		if err != nil {
			continue
		}
		h.mu.Unlock()
		_ = writeFile(h.path, b) // a failure is retried with the next change; the records stay in memory
		h.mu.Lock()
	}
	h.writing = nil
}

// Flush waits until the state file holds every change made before it (a
// failed write excepted: it is retried with the next change). Call it
// before the process ends. A nil History has nothing to flush.
func (h *History) Flush() {
	if h == nil {
		return
	}
	h.mu.Lock()
	done := h.writing
	h.mu.Unlock()
	if done != nil {
		<-done
	}
}

// saveLocked writes the state file at once (at start, when the old file
// is converted).
func (h *History) saveLocked() error {
	if h.path == "" {
		return nil
	}
	b, err := json.Marshal(historyFile{Version: historyVersion, Pods: h.persisted()})
	if err != nil {
		return err
	}
	return writeFile(h.path, b)
}

// writeFile replaces path's content with b atomically (a temporary file,
// synced, renamed over it).
func writeFile(path string, b []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".containers-*.tmp")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
