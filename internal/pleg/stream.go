package pleg

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/actorlet/actorlet/internal/protocol"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// DefaultStreamGrace is how long after a listing returned the event stream
// has to report a change that listing found (2 s). Docker's die event
// arrives 24 ms (p50) to 46 ms (p90) after the exit, up to ~300 ms on a
// loaded machine; 2 s leaves a wide margin, and detection still comes
// within one safety-net period plus the grace.
const DefaultStreamGrace = 2 * time.Second

// HeardKeep is how long an event waits for a relist to find its change
// (see StreamWatch): far more than a listing ever lags an event.
const HeardKeep = 30 * time.Second

// StreamState is what the PLEG makes of the runtime's event stream.
type StreamState uint8

const (
	// StreamDown: no stream is open: not subscribed yet, a subscription
	// under way, or broken (resubscribing with backoff).
	StreamDown StreamState = iota
	// StreamHealthy: a stream is open and trusted; the relist is only the
	// safety net.
	StreamHealthy
	// StreamSilent: a relist found a change the open stream never
	// reported: the stream is to be replaced by a new subscription.
	StreamSilent
	// StreamConfirming: a new stream is open after one was found silent.
	// It is trusted once it reports a change that a relist confirms.
	StreamConfirming
)

// StreamStates lists every state, in order.
var StreamStates = []StreamState{StreamDown, StreamHealthy, StreamSilent, StreamConfirming}

// String is the state's name: down, healthy, silent or confirming.
func (s StreamState) String() string {
	switch s {
	case StreamDown:
		return "down"
	case StreamHealthy:
		return "healthy"
	case StreamSilent:
		return "silent"
	case StreamConfirming:
		return "confirming"
	default:
		return "invalid"
	}
}

// Change is a container change a relist found, named by the kind of
// runtime event that reports it.
type Change struct {
	ContainerID string
	Kind        runtimeadapter.EventKind
}

// EventKindOf is the kind of runtime event that reports a PLEG event:
// ContainerStarted a start, ContainerDied a die, ContainerRemoved a
// destroy. ContainerChanged (a move to unknown: created, paused, ...) is
// reported by no event the PLEG follows: ok is false.
func EventKindOf(t protocol.PodEventType) (kind runtimeadapter.EventKind, ok bool) {
	switch t {
	case protocol.ContainerStarted:
		return runtimeadapter.EventStart, true
	case protocol.ContainerDied:
		return runtimeadapter.EventDie, true
	case protocol.ContainerRemoved:
		return runtimeadapter.EventDestroy, true
	default:
		return "", false
	}
}

// ChangesOf lists the changes in a relist's batches that an event stream
// reports (see EventKindOf), in the batches' order.
func ChangesOf(batches []protocol.PodTransitions) []Change {
	var out []Change
	for _, b := range batches {
		for _, ev := range b.Events {
			if k, ok := EventKindOf(ev.Type); ok {
				out = append(out, Change{ContainerID: ev.ContainerID, Kind: k})
			}
		}
	}
	return out
}

// Missed is the evidence that a stream is silent: a change a relist found
// that no event reported in time.
type Missed struct {
	Change
	// ListedAt is when the listing that found it started; By is when the
	// grace for its event ran out.
	ListedAt, By time.Time
}

// StreamWatch decides whether the runtime's event stream can be trusted.
// Docker's stream has no heartbeat, so a stream that stays open and
// delivers nothing looks like a quiet node; the evidence is a relist that
// finds a change the stream never reported. It is fed what the relist
// actor sees and holds no timer: the actor calls Check at Deadline. The
// zero value is not usable; call NewStreamWatch. Not safe for concurrent
// use.
//
// The rules:
//
//   - Opened: a stream opened. It is Healthy, or Confirming when a stream
//     was found silent and no stream has been confirmed since.
//   - Broken: the stream ended (or failed to open): Down. Changes missed
//     by a broken stream are no evidence: a resubscription relists.
//   - A change counts as evidence only when the stream was open the whole
//     time it could have happened: the relist that found it is not the
//     first, and the listing before it (which did not show it) started at
//     least grace after the stream opened. (The grace covers a listing
//     that lags behind an exit that happened just before the stream
//     opened.) The first relist's changes are the state of the node, not
//     news, and never count.
//   - A change is reported by an event of the same container and kind
//     received before the listing that found it returned plus grace, and
//     not used to report an earlier change. An event waits for its change
//     until a listing that started HeardKeep (30 s) or more after it has
//     been relisted; then it is forgotten (a start and a die within one
//     period leave an unmatched start, which is no evidence of anything).
//     It waits that long, not just grace, because a listing can lag the
//     events: on a loaded machine (load 40 on 2 cores, seen in a CI run)
//     no listing that started within 5 s of a sandbox's die event showed
//     the exit, and the relist that did found an event already forgotten
//     (a false "silent"). A container starts, dies and is
//     removed once each (a restart is a new container), so an event held
//     longer can only ever report its own change.
//   - Check at or after a counting change's deadline (its listing's end
//     plus grace) with no report: the stream is Silent (the actor
//     resubscribes).
//   - Confirming → Healthy: a change reported by an event of the current
//     stream, whichever came first, the event or the relist (a change
//     found too soon after the open to count still confirms when its
//     event comes in time).
//
// Changes caused by the agent itself (create, start, stop, remove) are
// reported like any other: their events arrive. Only the node's own
// containers are fed by the relist; events of other containers match
// nothing and are forgotten.
type StreamWatch struct {
	grace   time.Duration
	state   StreamState
	suspect bool // a stream was found silent, and none confirmed since

	stream uint64    // the open stream's number, as Opened was told
	opened time.Time // when it opened
	listed time.Time // start of the last relisted listing; zero before the first

	heard   map[changeKey]heard // events that reported no change yet
	waiting map[changeKey]wait  // changes found while a stream is open, not reported yet
	// deleted: an entry of heard or waiting was deleted since the last
	// Relisted. A Go map keeps its buckets when emptied: one that held a
	// burst (every container of 10,000 pods starting) is made anew once
	// empty, instead of keeping ~120-240 B per pod for good.
	deleted bool

	missed Missed // the last evidence of silence
	err    error  // why the stream is down
}

type changeKey struct {
	id   string
	kind runtimeadapter.EventKind
}

type heard struct {
	at     time.Time
	stream uint64
}

type wait struct {
	listedAt, by time.Time
	counts       bool // evidence if not reported (else it can only confirm)
}

// NewStreamWatch returns a watch with no stream open (Down), whose events
// must report changes within grace (DefaultStreamGrace when grace <= 0).
func NewStreamWatch(grace time.Duration) *StreamWatch {
	if grace <= 0 {
		grace = DefaultStreamGrace
	}
	return &StreamWatch{grace: grace, heard: map[changeKey]heard{}, waiting: map[changeKey]wait{}}
}

// Grace is the time the stream has to report a change.
func (w *StreamWatch) Grace() time.Duration { return w.grace }

// State is the stream's state now.
func (w *StreamWatch) State() StreamState { return w.state }

// Err is why the stream went down (Broken's err), nil otherwise.
func (w *StreamWatch) Err() error {
	if w.state != StreamDown {
		return nil
	}
	return w.err
}

// Missed is the last evidence of silence (zero before any).
func (w *StreamWatch) Missed() Missed { return w.missed }

// Reason says why the stream is not healthy ("" when it is).
func (w *StreamWatch) Reason() string {
	switch w.state {
	case StreamDown:
		if w.err != nil {
			return "event stream down: " + w.err.Error()
		}
		return "event stream not open yet"
	case StreamSilent:
		return "event stream silent: " + w.missed.String()
	case StreamConfirming:
		return "event stream resubscribed after it was silent (" + w.missed.String() +
			"); waiting for the new stream to report a change that a relist confirms"
	default:
		return ""
	}
}

// String describes the evidence.
func (m Missed) String() string {
	if m.ContainerID == "" {
		return "no change missed"
	}
	return fmt.Sprintf("the relist listed at %s found container %s %s, and no %s event came by %s",
		m.ListedAt.Format("15:04:05.000"), shortID(m.ContainerID), pastTense(m.Kind), m.Kind, m.By.Format("15:04:05.000"))
}

func pastTense(k runtimeadapter.EventKind) string {
	switch k {
	case runtimeadapter.EventStart:
		return "started"
	case runtimeadapter.EventDie:
		return "died"
	case runtimeadapter.EventDestroy:
		return "removed"
	default:
		return string(k)
	}
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// watching reports whether a stream is open and not yet given up on.
func (w *StreamWatch) watching() bool {
	return w.state == StreamHealthy || w.state == StreamConfirming
}

// Opened records that stream number stream opened at now.
func (w *StreamWatch) Opened(stream uint64, now time.Time) {
	w.stream, w.opened = stream, now
	w.state = StreamHealthy
	if w.suspect {
		w.state = StreamConfirming
	}
	w.err = nil
	clear(w.waiting)
}

// Broken records that the stream ended, or failed to open, with err.
func (w *StreamWatch) Broken(err error) {
	w.state, w.err = StreamDown, err
	clear(w.waiting)
}

// Event records an event of stream number stream about container id,
// received at at.
func (w *StreamWatch) Event(stream uint64, id string, kind runtimeadapter.EventKind, at time.Time) {
	if id == "" {
		return
	}
	k := changeKey{id, kind}
	if wt, ok := w.waiting[k]; ok && at.Before(wt.by) {
		delete(w.waiting, k)
		w.deleted = true
		w.reported(stream)
		return
	}
	w.heard[k] = heard{at: at, stream: stream}
}

// Relisted records the changes a successful listing found; the listing
// started at from and returned at until. Failed listings are not fed:
// the next successful one is diffed against the last successful one.
func (w *StreamWatch) Relisted(from, until time.Time, changes []Change) {
	counts := w.watching() && !w.listed.IsZero() && !w.listed.Before(w.opened.Add(w.grace))
	for _, c := range changes {
		k := changeKey{c.ContainerID, c.Kind}
		if h, ok := w.heard[k]; ok {
			delete(w.heard, k)
			w.deleted = true
			w.reported(h.stream)
			continue
		}
		if _, dup := w.waiting[k]; w.watching() && !dup {
			w.waiting[k] = wait{listedAt: from, by: until.Add(w.grace), counts: counts}
		}
	}
	for k, h := range w.heard {
		if !h.at.Add(max(w.grace, HeardKeep)).After(from) {
			delete(w.heard, k)
			w.deleted = true
		}
	}
	for k, wt := range w.waiting {
		if !wt.counts && !wt.by.After(from) {
			delete(w.waiting, k)
			w.deleted = true
		}
	}
	if w.deleted {
		w.deleted = false
		if len(w.heard) == 0 {
			w.heard = map[changeKey]heard{}
		}
		if len(w.waiting) == 0 {
			w.waiting = map[changeKey]wait{}
		}
	}
	w.listed = from
}

// reported: a change was reported by an event of stream.
func (w *StreamWatch) reported(stream uint64) {
	if w.state == StreamConfirming && stream == w.stream {
		w.state, w.suspect = StreamHealthy, false
	}
}

// Deadline is when Check must next run: the earliest deadline of a
// counting change not reported yet (ok false: none).
func (w *StreamWatch) Deadline() (at time.Time, ok bool) {
	for _, wt := range w.waiting {
		if wt.counts && (!ok || wt.by.Before(at)) {
			at, ok = wt.by, true
		}
	}
	return at, ok
}

// Check finds, at now, the counting changes whose deadline has come
// without a report: if there is one, the stream is Silent. It reports
// whether it found the stream silent.
func (w *StreamWatch) Check(now time.Time) bool {
	if !w.watching() {
		if len(w.waiting) > 0 {
			w.waiting = map[changeKey]wait{}
		}
		return false
	}
	var late []Missed
	for k, wt := range w.waiting {
		switch {
		case now.Before(wt.by):
		case !wt.counts:
			delete(w.waiting, k) // its chance to confirm the stream is over
			w.deleted = true
		default:
			late = append(late, Missed{Change: Change{ContainerID: k.id, Kind: k.kind}, ListedAt: wt.listedAt, By: wt.by})
		}
	}
	if len(late) == 0 {
		return false
	}
	w.missed = slices.MinFunc(late, func(a, b Missed) int {
		return cmp.Or(a.By.Compare(b.By), cmp.Compare(a.ContainerID, b.ContainerID), cmp.Compare(a.Kind, b.Kind))
	})
	w.state, w.suspect = StreamSilent, true
	clear(w.waiting)
	return true
}
