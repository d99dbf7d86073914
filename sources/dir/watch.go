package dir

import (
	"path/filepath"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"
)

// watch keeps an fsnotify watch on the manifest directory and, while the
// directory is missing, on its parent, so that its creation is seen. All
// methods are called from Run's goroutine. A watch that cannot be created
// leaves the source to its rescans.
type watch struct {
	dir, parent string
	log         *zap.Logger
	w           *fsnotify.Watcher // nil when watching is impossible
	onDir       bool              // dir is watched
	onParent    bool              // parent is watched
	lastErr     string            // last watch error logged
}

func newWatch(dir string, log *zap.Logger) *watch {
	wt := &watch{dir: dir, parent: filepath.Dir(dir), log: log}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		log.Warn("cannot watch the manifest directory; relying on rescans", zap.Error(err))
		return wt
	}
	wt.w = w
	return wt
}

// ensure watches dir if it is not watched yet; if dir cannot be watched
// (e.g. it does not exist) it watches the parent instead.
func (wt *watch) ensure() {
	if wt.w == nil || wt.onDir {
		return
	}
	if err := wt.w.Add(wt.dir); err != nil {
		if wt.lastErr != err.Error() {
			wt.log.Debug("cannot watch the manifest directory yet", zap.Error(err))
			wt.lastErr = err.Error()
		}
		if !wt.onParent && wt.parent != wt.dir {
			wt.onParent = wt.w.Add(wt.parent) == nil
		}
		return
	}
	wt.onDir, wt.lastErr = true, ""
	if wt.onParent {
		_ = wt.w.Remove(wt.parent) // best effort: extra events are filtered
		wt.onParent = false
	}
}

// lost drops the watch on dir after it could not be read (it was removed
// or replaced); the next ensure sets it up again.
func (wt *watch) lost() {
	if wt.w == nil || !wt.onDir {
		return
	}
	_ = wt.w.Remove(wt.dir) // the kernel may have dropped it already
	wt.onDir = false
}

// relevant reports whether ev may change the set of manifests: an event on
// a manifest file in dir, or on dir itself (created, removed, renamed).
func (wt *watch) relevant(ev fsnotify.Event) bool {
	name := filepath.Clean(ev.Name)
	if name == wt.dir {
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			wt.lost() // the watch follows the old inode; re-add on the next scan
		}
		return true
	}
	return filepath.Dir(name) == wt.dir && skipReason(filepath.Base(name)) == ""
}

// broken gives up watching after the watcher failed for good.
func (wt *watch) broken(err error) {
	if wt.w == nil {
		return
	}
	wt.log.Warn("file-system watch stopped; relying on rescans", zap.Error(err))
	_ = wt.w.Close()
	wt.w, wt.onDir, wt.onParent = nil, false, false
}

func (wt *watch) events() <-chan fsnotify.Event {
	if wt.w == nil {
		return nil
	}
	return wt.w.Events
}

func (wt *watch) errors() <-chan error {
	if wt.w == nil {
		return nil
	}
	return wt.w.Errors
}

func (wt *watch) close() {
	if wt.w != nil {
		_ = wt.w.Close()
	}
}
