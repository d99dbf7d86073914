package taskevents

import (
	"sync"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// Ledger remembers the init exits containerd reported so that what the
// daemon above it still says, until it has handled them, can be corrected:
// dockerd lists (and, until it takes the container's lock, inspects) a
// container whose task has exited as running for tens to hundreds of
// milliseconds. Correct rewrites such a listing as exited with
// containerd's exit status and time, which are what dockerd records next
// (its State.ExitCode and FinishedAt come from the same event).
//
// An entry goes once the daemon shows the container not running, or
// running again since the exit (started anew), or after TTL. Safe for
// concurrent use.
type Ledger struct {
	mu    sync.Mutex
	exits map[string]Exit
	ttl   time.Duration
	max   int
}

// DefaultLedgerTTL bounds how long an exit is remembered (the daemon has
// handled it long before).
const DefaultLedgerTTL = 2 * time.Minute

// ledgerMax bounds the entries kept (exits of other containers of the
// namespace are recorded too); past it the oldest half goes.
const ledgerMax = 4096

// NewLedger returns an empty ledger whose entries last ttl (0: DefaultLedgerTTL).
func NewLedger(ttl time.Duration) *Ledger {
	if ttl <= 0 {
		ttl = DefaultLedgerTTL
	}
	return &Ledger{exits: map[string]Exit{}, ttl: ttl, max: ledgerMax}
}

// Record remembers an init exit; exec exits are ignored. now dates the
// sweep of expired entries.
func (l *Ledger) Record(e Exit, now time.Time) {
	if !e.Init() || e.ContainerID == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.exits[e.ContainerID] = e
	if len(l.exits) > l.max {
		l.sweep(now, true)
	}
}

// sweep drops expired entries; when full, also the oldest half.
func (l *Ledger) sweep(now time.Time, full bool) {
	cut := now.Add(-l.ttl)
	if full {
		cut = now.Add(-l.ttl / 2)
	}
	for id, e := range l.exits {
		if e.ExitedAt.Before(cut) {
			delete(l.exits, id)
		}
	}
	if len(l.exits) > l.max { // clocks apart: keep the bound anyway
		clear(l.exits)
	}
}

// Len is the number of exits remembered.
func (l *Ledger) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.exits)
}

// Correct rewrites c, as the daemon reported it at now, with the exit
// containerd reported, when the daemon still says running for the run
// that exited. It reports whether it changed c. See Ledger.
func (l *Ledger) Correct(c *runtimeadapter.Container, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.exits[c.ID]
	if !ok {
		return false
	}
	switch {
	case now.Sub(e.ExitedAt) > l.ttl:
		delete(l.exits, c.ID)
		return false
	case c.State != runtimeadapter.StateRunning:
		delete(l.exits, c.ID) // the daemon has it (exited, or removing…)
		return false
	case !c.StartedAt.IsZero() && !e.ExitedAt.IsZero() && c.StartedAt.After(e.ExitedAt):
		delete(l.exits, c.ID) // started again since: not the run that exited
		return false
	}
	Apply(c, e)
	return true
}

// Apply marks c exited as e says, the way the Docker adapter reports an
// exited container: Reason OOMKilled, Error or Completed.
func Apply(c *runtimeadapter.Container, e Exit) {
	c.State, c.RawState = runtimeadapter.StateExited, "exited"
	c.ExitCode = int(e.ExitStatus)
	c.FinishedAt = e.ExitedAt
	switch {
	case e.OOMKilled:
		c.Reason = "OOMKilled"
	case c.ExitCode == 0:
		c.Reason = "Completed"
	default:
		c.Reason = "Error"
	}
}
