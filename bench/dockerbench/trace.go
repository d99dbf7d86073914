package dockerbench

import (
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// tracer is a zap core that keeps the time of the first "runtime event"
// (the relist actor received a Docker event), "runtime exit" (it received
// containerd's task exit) and "PLEG event" (a pod actor
// received a transition) debug log of each kind and container, so that a
// detection's latency can be split into stages. Every other log entry is
// dropped at Check, before it is encoded.
type tracer struct {
	mu    *sync.Mutex
	first map[string]time.Time
}

func newTracer() *tracer { return &tracer{mu: &sync.Mutex{}, first: map[string]time.Time{}} }

// Logger returns a logger writing to t.
func (t *tracer) Logger() *zap.Logger { return zap.New(t) }

func (t *tracer) Enabled(zapcore.Level) bool        { return true }
func (t *tracer) With([]zapcore.Field) zapcore.Core { return t }
func (t *tracer) Sync() error                       { return nil }

func (t *tracer) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	switch e.Message {
	case "runtime event", "PLEG event", "runtime exit", "start call", "start returned":
		return ce.AddCore(e, t)
	}
	return ce
}

func (t *tracer) Write(e zapcore.Entry, fs []zapcore.Field) error {
	var kind, id string
	for _, f := range fs {
		switch f.Key {
		case "kind", "type":
			kind = f.String
		case "id":
			id = f.String
		}
	}
	key := e.Message + "|" + kind + "|" + id
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.first[key]; ok {
		return nil
	}
	t.first[key] = e.Time
	for _, f := range fs { // the entry's times (a runtime exit's publishedAt, receivedAt)
		if f.Type == zapcore.TimeType {
			at := time.Unix(0, f.Integer)
			if at.UnixNano() > 0 && at.Year() > 1971 {
				t.first[key+"|"+f.Key] = at
			}
		}
	}
	return nil
}

// field returns the time field name of the first log of msg, kind and
// container id, or the zero time.
func (t *tracer) field(msg, kind, id, name string) time.Time {
	return t.at(msg, kind, id+"|"+name)
}

// at returns when the first log of msg, kind and container id (full or
// short) was written, or the zero time.
func (t *tracer) at(msg, kind, id string) time.Time {
	if i := strings.IndexByte(id, '|'); i > 12 {
		id = id[:12] + id[i:]
	} else if i < 0 && len(id) > 12 {
		id = id[:12]
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.first[msg+"|"+kind+"|"+id]
}
