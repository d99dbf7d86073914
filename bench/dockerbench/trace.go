package dockerbench

import (
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
	if e.Message == "runtime event" || e.Message == "PLEG event" || e.Message == "runtime exit" {
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
	if _, ok := t.first[key]; !ok {
		t.first[key] = e.Time
	}
	return nil
}

// at returns when the first log of msg, kind and container id (full or
// short) was written, or the zero time.
func (t *tracer) at(msg, kind, id string) time.Time {
	if len(id) > 12 {
		id = id[:12]
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.first[msg+"|"+kind+"|"+id]
}
