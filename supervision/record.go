package supervision

import "time"

// Exit is one container instance's terminal exit as the runtime last
// showed it (or, for a start that failed, as actorlet saw it).
type Exit struct {
	ContainerID string `json:"containerID"`
	// Init: an init container. SandboxID is then the sandbox it ran in
	// (init containers run again only in a new sandbox).
	Init      bool   `json:"init,omitempty"`
	SandboxID string `json:"sandboxID,omitempty"`
	// Hash is the instance's container spec hash; RestartCount its
	// restart count (also its attempt in the runtime name).
	Hash         string    `json:"hash"`
	RestartCount int       `json:"restartCount"`
	ExitCode     int       `json:"exitCode"`
	Reason       string    `json:"reason"`
	Message      string    `json:"message,omitempty"`
	StartedAt    time.Time `json:"startedAt"`
	FinishedAt   time.Time `json:"finishedAt"`
}

// Known reports whether e is a whole exit, one whose instance can be shown
// and reasoned about after the instance is gone (a record read from the
// old back-off file knows only the instance's ID).
func (e Exit) Known() bool { return e.ContainerID != "" && !e.FinishedAt.IsZero() }

// ContainerRecord is what the node keeps of one container of a pod (by
// pod UID and container name) beyond its instances: its last exit, so
// that completed work is never run again and restart counts go on when
// exited instances are removed, and its CrashLoopBackOff.
type ContainerRecord struct {
	Exit Exit `json:"exit"`
	// RestartAt is when the replacement of Exit may start: its finish
	// time plus the back-off's wait.
	RestartAt time.Time `json:"restartAt"`
	// Restarted: the replacement of Exit was decided, and Backoff
	// advanced for it (once per exit).
	Restarted bool         `json:"restarted,omitempty"`
	Backoff   BackoffEntry `json:"backoff"`
	// Seen is the newest instance seen running, kept in memory only: one
	// that vanishes before its exit was seen (removed while running,
	// between two listings) is an exit of unknown code (LostExit), so
	// that restart counts never go back.
	Seen Instance `json:"-"`
}

// Instance is what a record keeps of a running instance: an Exit without
// the exit's own fields (64 B less per container record, which every
// idle pod holds for as long as it lives).
type Instance struct {
	ContainerID  string
	Init         bool
	SandboxID    string
	Hash         string
	RestartCount int
	StartedAt    time.Time
}

// Reason and exit code of an instance that vanished while running, as the
// kubelet reports a container it lost.
const (
	ReasonStatusUnknown   = "ContainerStatusUnknown"
	ExitCodeStatusUnknown = 137
)

// LostExit is the exit of the seen instance, which vanished while
// running; it was noticed at now.
func (r ContainerRecord) LostExit(now time.Time) Exit {
	s := r.Seen
	return Exit{ContainerID: s.ContainerID, Init: s.Init, SandboxID: s.SandboxID, Hash: s.Hash, RestartCount: s.RestartCount,
		StartedAt: s.StartedAt, ExitCode: ExitCodeStatusUnknown, Reason: ReasonStatusUnknown, FinishedAt: now,
		Message: "The container could not be located: it was removed while running"}
}

// Delay is the back-off wait of the record's exit.
func (r ContainerRecord) Delay() time.Duration {
	if r.Exit.FinishedAt.IsZero() {
		return 0
	}
	return r.RestartAt.Sub(r.Exit.FinishedAt)
}

// Equal reports whether r and o hold the same record (times compared as
// instants).
func (r ContainerRecord) Equal(o ContainerRecord) bool {
	return r.persistedEqual(o) && r.Seen.equal(o.Seen)
}

func (a Instance) equal(b Instance) bool {
	return a.ContainerID == b.ContainerID && a.Init == b.Init && a.SandboxID == b.SandboxID && a.Hash == b.Hash &&
		a.RestartCount == b.RestartCount && a.StartedAt.Equal(b.StartedAt)
}

// persistedEqual is Equal on what the state file keeps (not Seen).
func (r ContainerRecord) persistedEqual(o ContainerRecord) bool {
	return r.Exit.equal(o.Exit) && r.RestartAt.Equal(o.RestartAt) && r.Restarted == o.Restarted &&
		r.Backoff.Hash == o.Backoff.Hash && r.Backoff.Delay == o.Backoff.Delay && r.Backoff.LastUpdate.Equal(o.Backoff.LastUpdate)
}

func (a Exit) equal(b Exit) bool {
	return a.ContainerID == b.ContainerID && a.Init == b.Init && a.SandboxID == b.SandboxID && a.Hash == b.Hash &&
		a.RestartCount == b.RestartCount && a.ExitCode == b.ExitCode && a.Reason == b.Reason && a.Message == b.Message &&
		a.StartedAt.Equal(b.StartedAt) && a.FinishedAt.Equal(b.FinishedAt)
}

// Observe returns r once the runtime has shown the exit e. A new exit
// becomes the record's, with its deadline: its finish time plus the
// back-off's Wait. The same exit shown again updates what the runtime
// says of it; a more exact, earlier finish time (a die event's time
// comes a little after the runtime's own) moves the deadline earlier,
// the delay staying the one of that exit. Observe is pure and idempotent.
func (p BackoffPolicy) Observe(r ContainerRecord, e Exit) ContainerRecord {
	if r.Exit.ContainerID != e.ContainerID {
		return ContainerRecord{Exit: e, RestartAt: e.FinishedAt.Add(p.Wait(r.Backoff, e.Hash, e.FinishedAt)), Backoff: r.Backoff, Seen: r.Seen}
	}
	finished := r.Exit.FinishedAt
	switch {
	case finished.IsZero(): // a record of the old back-off file: keep its deadline
		finished = e.FinishedAt
	case !e.FinishedAt.IsZero() && e.FinishedAt.Before(finished):
		r.RestartAt = e.FinishedAt.Add(r.Delay())
		finished = e.FinishedAt
	}
	r.Exit = e
	r.Exit.FinishedAt = finished
	return r
}

// Restart returns r once the replacement of its exit was decided at now:
// the back-off advances (Next), once per exit.
func (p BackoffPolicy) Restart(r ContainerRecord, now time.Time) ContainerRecord {
	if r.Restarted {
		return r
	}
	r.Backoff = p.Next(r.Backoff, r.Exit.Hash, r.Exit.FinishedAt, now)
	r.Restarted = true
	return r
}
