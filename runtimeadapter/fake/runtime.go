package fake

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

var (
	_ runtimeadapter.Runtime           = (*Runtime)(nil)
	_ runtimeadapter.EventSource       = (*Runtime)(nil)
	_ runtimeadapter.SandboxContainers = (*Runtime)(nil)
)

// Runtime is an in-memory container runtime. Create one with New; the zero
// value is not usable. All methods are safe for concurrent use.
type Runtime struct {
	mu sync.Mutex

	closed     bool
	autoImages bool
	images     map[string]bool // normalised refs

	seq     uint64                // last container number handed out
	ips     uint64                // last IP number handed out (ipLocked)
	version uint64                // bumped on every container state change (ListResult.Version)
	byID    map[string]*container // every container, managed or not
	byName  map[string]string     // runtime name → ID
	order   []*container          // creation order

	rules  []rule
	faults map[string]*fault
	delays map[string]time.Duration
	hangs  []*hang

	calls []*Call
	subs  map[*subscription]struct{}
	// silenceNext: how many streams opened from now on are silent (< 0:
	// all); see SilenceEvents.
	silenceNext int
}

// container is the fake's record of one container.
type container struct {
	c         runtimeadapter.Container // Labels owned by the fake, never shared
	spec      runtimeadapter.ContainerSpec
	behavior  Behavior
	exitTimer *time.Timer   // ExitAfter, while running
	killTimer *time.Timer   // SIGKILL after the grace of an ignored SIGTERM
	exited    chan struct{} // closed when a started container stops running
}

// Option configures a Runtime in New.
type Option func(*Runtime)

// AutoImages makes EnsureImage succeed for any image, adding it, as if every
// pull worked. Create still needs the image present, as with Docker.
// Default false: EnsureImage fails for images not added.
func AutoImages(on bool) Option {
	return func(r *Runtime) { r.autoImages = on }
}

// WithImages adds images, as AddImage does.
func WithImages(refs ...string) Option {
	return func(r *Runtime) {
		for _, ref := range refs {
			r.images[normalizeImage(ref)] = true
		}
	}
}

// New returns an empty runtime: no images, no containers, no faults, and
// containers that run forever once started.
func New(opts ...Option) *Runtime {
	r := &Runtime{
		images: make(map[string]bool),
		byID:   make(map[string]*container),
		byName: make(map[string]string),
		faults: make(map[string]*fault),
		delays: make(map[string]time.Duration),
		subs:   make(map[*subscription]struct{}),
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

// SandboxIsContainer implements runtimeadapter.SandboxContainers, as
// Docker: a sandbox is a container, and a start that joins a namespace of
// a container that does not run fails.
func (r *Runtime) SandboxIsContainer() bool { return true }

// Close stops every container timer, ends every Events stream (its error
// channel receives an error wrapping runtimeadapter.ErrUnavailable) and
// releases hung calls. Afterwards every method fails with
// runtimeadapter.ErrUnavailable. Containers keep the state they had; the
// inspection helpers (Containers, Calls, ...) still work. Close is
// idempotent.
func (r *Runtime) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.closed = true
	for _, c := range r.order {
		c.stopTimers()
	}
	r.breakStreamsLocked(fmt.Errorf("fake: runtime closed: %w", runtimeadapter.ErrUnavailable))
	r.releaseHangsLocked()
}

// newIDLocked returns the next container ID: 64 hex digits, deterministic
// for a given sequence of creations.
func (r *Runtime) newIDLocked() string {
	for {
		r.seq++
		r.version++
		sum := sha256.Sum256([]byte("actorlet-fake-container-" + strconv.FormatUint(r.seq, 10)))
		id := hex.EncodeToString(sum[:])
		if _, taken := r.byID[id]; !taken {
			return id
		}
	}
}

// lookupLocked finds a container by full ID, name (with or without a
// leading "/") or unique ID prefix; nil if none or ambiguous.
func (r *Runtime) lookupLocked(ref string) *container {
	if ref == "" {
		return nil
	}
	if c, ok := r.byID[ref]; ok {
		return c
	}
	if id, ok := r.byName[strings.TrimPrefix(ref, "/")]; ok {
		return r.byID[id]
	}
	var found *container
	for _, c := range r.order {
		if strings.HasPrefix(c.c.ID, ref) {
			if found != nil {
				return nil // ambiguous
			}
			found = c
		}
	}
	return found
}

// addLocked stores a new container.
func (r *Runtime) addLocked(c *container) {
	r.byID[c.c.ID] = c
	r.byName[c.c.Name] = c.c.ID
	r.order = append(r.order, c)
}

// deleteLocked forgets a container and announces its removal.
func (r *Runtime) deleteLocked(c *container) {
	c.stopTimers()
	delete(r.byID, c.c.ID)
	delete(r.byName, c.c.Name)
	if i := slices.Index(r.order, c); i >= 0 {
		r.order = slices.Delete(r.order, i, i+1)
	}
	r.publishLocked(runtimeadapter.EventDestroy, c)
}

// snapshot returns a deep copy of c's state.
func (c *container) snapshot() runtimeadapter.Container {
	out := c.c
	out.Labels = maps.Clone(c.c.Labels)
	return out
}

func (c *container) running() bool { return c.c.State == runtimeadapter.StateRunning }

func (c *container) stopTimers() {
	if c.exitTimer != nil {
		c.exitTimer.Stop()
		c.exitTimer = nil
	}
	if c.killTimer != nil {
		c.killTimer.Stop()
		c.killTimer = nil
	}
}

// exitLocked ends a running container with code. An empty reason becomes
// "Completed" for code 0 and "Error" otherwise, as the kubelet reports
// them. It is a no-op for a container that is not running.
func (r *Runtime) exitLocked(c *container, code int, reason string) {
	if !c.running() {
		return
	}
	c.stopTimers()
	if reason == "" {
		reason = "Error"
		if code == 0 {
			reason = "Completed"
		}
	}
	c.c.State = runtimeadapter.StateExited
	c.c.RawState = "exited"
	c.c.IP = "" // as Docker: the network goes with the process
	c.c.ExitCode = code
	c.c.Reason = reason
	c.c.FinishedAt = time.Now()
	if c.exited != nil {
		close(c.exited)
	}
	if reason == reasonOOMKilled {
		r.publishLocked(runtimeadapter.EventOOM, c)
	}
	r.publishLocked(runtimeadapter.EventDie, c)
}

// Exit codes, reasons and raw states the fake produces.
const (
	exitSIGTERM     = 143 // 128 + 15
	exitSIGKILL     = 137 // 128 + 9
	exitStartFailed = 128 // Docker's exit code of a failed start it cannot tell apart

	reasonOOMKilled = "OOMKilled"

	rawCreated = "created"
	rawRunning = "running"
)
