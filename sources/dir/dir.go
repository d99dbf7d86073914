// Package dir is the static-pod directory source: every regular file
// directly in one directory whose name does not start with a dot is read
// as a manifest, whatever its extension (*.yaml, *.json, GCE's *.manifest),
// as with the kubelet's --pod-manifest-path.
//
// The directory is watched (fsnotify), so a change is read at once (later
// changes within the debounce window, 100 ms by default, together at its
// end), and re-read in full every rescan
// period (20 s) as a safety net. Skipped, and logged once each with why
// (not on every rescan): dotfiles; the artefacts editors, backups, package
// managers and atomic writers leave next to a manifest (name~, *.swp,
// *.swo, *.swx, #name#, vim's 4913, *.bak, *.orig, *.old, *.rej, *.save,
// *.part, *.dpkg-*, *.ucf-*, *.rpmnew, *.rpmsave, *.rpmorig, *.tmp and
// *.tmp.XXXX, sed -i's sedXXXXXX: see skipReason), which would otherwise
// run a stale copy as a second pod; subdirectories and anything but
// regular files (symlinks to them count).
//
// A file may hold several YAML documents ("---"), each a Pod, a ConfigMap
// or a Secret (see manifest.LoadFileDocuments); ConfigMaps and Secrets go
// into the update's ConfigMaps and Secrets, one per kind and
// namespace/name as pods, and no Secret value is ever logged. An unknown field is a warning naming it,
// logged once per edit, unless WithStrictManifests. A file or document
// that fails to parse or validate, or a file over
// manifest.MaxManifestBytes (1 MiB), is one Problem in the update, naming
// the file, the document (in a file of several) and the field or line,
// logged once (not on every rescan while it stays the same); the pod it
// last defined keeps its last good spec until it is fixed or removed, and
// the other documents and files are unaffected. When two files or
// documents define the same namespace/name (or UID), the first in file
// name order, then document order, wins and the other is a Problem,
// warned about once.
// When the directory itself cannot be read (or does not exist yet) the
// update carries Err, the node keeps the last set, and the source retries
// on every rescan and whenever the directory appears.
package dir

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"

	"github.com/actorlet/actorlet/internal/manifest"
	"github.com/actorlet/actorlet/sources"
)

// Source is the static-pod directory source. Create it with New; it
// implements sources.Source.
type Source struct {
	dir      string // absolute
	nodeName string
	rescan   time.Duration
	debounce time.Duration
	log      *zap.Logger
	validate manifest.ValidationOptions
	strict   bool
}

var _ sources.Source = (*Source)(nil)

// New returns a source for the manifests in dir (made absolute), for the
// node nodeName (it goes into each pod's UID, see manifest.StaticPodUID).
// The directory need not exist yet. Options: WithRescanPeriod (default
// 20 s), WithDebounce (default 100 ms), WithLogger (default none).
func New(dir, nodeName string, opts ...Option) *Source {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = filepath.Clean(dir)
	}
	s := &Source{
		dir:      abs,
		nodeName: nodeName,
		rescan:   DefaultRescanPeriod,
		debounce: DefaultDebounce,
		log:      zap.NewNop(),
	}
	for _, o := range opts {
		o(s)
	}
	s.log = s.log.With(zap.String("source", s.Name()))
	return s
}

// Name returns "file:" and the directory's absolute path.
func (s *Source) Name() string { return "file:" + s.dir }

// newScanner returns the scanner Run reads the directory with.
func (s *Source) newScanner() *scanner {
	sc := newScanner(s.dir, s.Name(), s.nodeName, s.log)
	sc.validate, sc.strict = s.validate, s.strict
	return sc
}

// Run reads the directory at once, then on every relevant file-system
// event and every rescan period, and calls sink when something changed
// (see sources.Update). The first event after a quiet spell is read at
// once (no debounce delay on a pod's start); further events within the
// debounce window are coalesced into one read at its end (see scanDelay).
// It returns nil when ctx ends. If no file-system watch can be set up it
// logs a warning and relies on rescans.
func (s *Source) Run(ctx context.Context, sink func(sources.Update)) error {
	sc := s.newScanner()
	w := newWatch(s.dir, s.log)
	defer w.close()

	rescan := time.NewTicker(s.rescan)
	defer rescan.Stop()
	var pending *time.Timer
	var pendingC <-chan time.Time // non-nil while a scan is pending
	var last time.Time            // when the last scan for an event began
	arm := func(d time.Duration) {
		if pending == nil {
			pending = time.NewTimer(d)
		} else {
			pending.Reset(d)
		}
		pendingC = pending.C
	}

	// eager: the scan follows an event at once; a file found empty may
	// be one being written, and is read again at the window's end.
	scan := func(eager bool) {
		w.ensure() // before reading, so no change falls between the two
		u, send, deferred := sc.scan(eager)
		if u.Err != nil {
			w.lost()
		}
		if send {
			sink(u)
		}
		if deferred && pendingC == nil {
			arm(s.debounce)
		}
	}

	scan(false)
	for {
		select {
		case <-ctx.Done():
			if pending != nil {
				pending.Stop()
			}
			return nil
		case <-rescan.C:
			scan(false)
		case <-pendingC:
			pendingC, last = nil, time.Now()
			scan(false)
		case ev, ok := <-w.events():
			if !ok {
				w.broken(errors.New("event channel closed"))
				continue
			}
			if !w.relevant(ev) || pendingC != nil {
				continue
			}
			if d := scanDelay(time.Now(), last, s.debounce); d > 0 {
				arm(d)
			} else {
				last = time.Now()
				scan(true)
			}
		case err, ok := <-w.errors():
			if !ok {
				w.broken(errors.New("error channel closed"))
				continue
			}
			// An overflow means events were lost: re-read now.
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				s.log.Warn("file-system events lost; re-reading the directory")
				scan(false)
				continue
			}
			s.log.Warn("file-system watch error", zap.Error(err))
		}
	}
}

// scanDelay is how long a file-system event at now waits for its read,
// given when the last read began and the debounce window: none when the
// window since the last read has passed (the event is read at once),
// else until the window ends (the events in it are read together).
func scanDelay(now, last time.Time, window time.Duration) time.Duration {
	if d := last.Add(window).Sub(now); d > 0 {
		return d
	}
	return 0
}
