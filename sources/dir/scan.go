package dir

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/internal/manifest"
	"github.com/actorlet/actorlet/sources"
)

// maxManifestBytes bounds the size of a manifest file:
// manifest.MaxManifestBytes (1 MiB), which LoadFile would refuse anyway; a
// larger file is a problem (errors.Is manifest.ErrTooLarge), not read.
const maxManifestBytes = manifest.MaxManifestBytes

// fileState is what the scanner remembers about one manifest file.
type fileState struct {
	data []byte // content last read; nil after a read error
	// objs are the file's last good objects (pods, ConfigMaps, Secrets),
	// in document order.
	objs []fileObject
	// problems are the file's current problems; nil when data is good.
	problems []error
	logged   map[string]bool // the problems last logged, to log each one once
}

// fileObject is an object read from one document of a file.
type fileObject struct {
	manifest.Object
	// doc names the document in a file of several ("document 2 (line
	// 14)"); "" in a file of one.
	doc string
}

// scanner reads the directory and turns it into updates. It is used by one
// goroutine (Run's) and keeps no goroutines of its own.
type scanner struct {
	dir, source, node string
	log               *zap.Logger
	validate          manifest.ValidationOptions
	strict            bool // unknown fields are errors (--strict-manifests)

	files     map[string]*fileState // by file name
	conflicts map[string]string     // losing file name and document → conflict message last logged
	skipped   map[string]string     // entry skipped → why, logged once while it stays

	sent    bool   // an update has been sent
	failed  bool   // the last scan could not read the directory
	lastErr string // the directory error last sent
	lastKey string // what the last successful update contained
}

func newScanner(dir, source, node string, log *zap.Logger) *scanner {
	return &scanner{
		dir: dir, source: source, node: node, log: log,
		files: map[string]*fileState{}, conflicts: map[string]string{}, skipped: map[string]string{},
	}
}

// scan reads the directory once. It returns the update to send and whether
// to send it: on the first read, when the set of pods or of problems
// changed, when the directory fails (once per distinct error) and when it
// can be read again. An eager scan (one that follows a file-system event
// at once) leaves a file it finds empty as it was, as one still being
// written, and reports deferred: read again shortly.
func (s *scanner) scan(eager bool) (u sources.Update, send, deferred bool) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		err = fmt.Errorf("read manifest directory %s: %w", s.dir, err)
		send := !s.failed || err.Error() != s.lastErr
		if send {
			s.log.Error("cannot read manifest directory; keeping the last set of pods", zap.Error(err))
		}
		s.failed, s.lastErr = true, err.Error()
		return sources.Update{Source: s.source, Err: err}, send, false
	}
	recovered := s.failed
	if recovered {
		s.log.Info("manifest directory readable again", zap.String("dir", s.dir))
	}
	s.failed, s.lastErr = false, ""

	seen, skipped := map[string]bool{}, map[string]string{}
	for _, e := range entries {
		name := e.Name()
		why := skipReason(name)
		if why == "" && !s.isFile(e) {
			why = "not a regular file (a directory, FIFO, socket or device, or a link to one)"
		}
		if why != "" {
			skipped[name] = why
			continue
		}
		exists, later := s.read(name, eager)
		seen[name] = exists
		deferred = deferred || later
	}
	for name := range s.files {
		if !seen[name] {
			s.log.Info("manifest removed", zap.String("file", s.path(name)))
			delete(s.files, name)
		}
	}
	s.logSkipped(skipped)

	u, key := s.update()
	send = !s.sent || recovered || key != s.lastKey
	s.sent, s.lastKey = true, key
	return u, send, deferred
}

// logSkipped logs each entry skipped, once while it stays: the directory
// is re-read every rescan period.
func (s *scanner) logSkipped(skipped map[string]string) {
	names := make([]string, 0, len(skipped))
	for name := range skipped {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if why := skipped[name]; s.skipped[name] != why {
			s.log.Info("file in the manifest directory skipped", zap.String("file", s.path(name)), zap.String("why", why))
		}
	}
	s.skipped = skipped
}

// isFile reports whether entry is a regular file or a symlink to one.
// Other kinds (directories, FIFOs, sockets, devices) are skipped: reading a
// FIFO would block.
func (s *scanner) isFile(e fs.DirEntry) bool {
	if e.Type().IsRegular() {
		return true
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	fi, err := os.Stat(s.path(e.Name()))
	return err == nil && fi.Mode().IsRegular()
}

// read re-reads one file and updates its state. It returns false when the
// file no longer exists (it was removed since the directory was listed).
// eager: an empty file that was not empty (or not there) before is left
// as it was, and read again later (deferred): a writer that is not
// atomic creates the file, then writes it.
func (s *scanner) read(name string, eager bool) (exists, deferred bool) {
	path := s.path(name)
	st := s.files[name]
	if st == nil {
		st = &fileState{}
	}
	data, err := readManifest(path)
	switch {
	case errors.Is(err, fs.ErrNotExist): // removed since the listing (or a dangling link)
		return false, false
	case eager && err == nil && len(data) == 0 && (st.data == nil || len(st.data) > 0):
		return true, true
	case err != nil:
		st.data = nil
		s.setProblems(st, []problem{{err: &manifest.FileError{Path: path, Err: err}, kept: st.objs}})
	case st.data != nil && bytes.Equal(data, st.data):
		// Unchanged: keep the pods and the problems, log nothing.
	default:
		st.data = data
		docs, err := manifest.LoadFileDocuments(manifest.LoadOptions{Validation: s.validate, Strict: s.strict}, s.node, path, data)
		if err != nil {
			s.setProblems(st, []problem{{err: err, kept: st.objs}})
			break
		}
		objs, problems := merge(st.objs, docs)
		if len(st.problems) > 0 && len(problems) == 0 {
			s.log.Info("manifest fixed", zap.String("file", path))
		}
		st.objs = objs
		s.setProblems(st, problems)
		for _, d := range docs {
			for _, w := range d.Warnings {
				s.log.Warn("manifest field ignored", zap.String("file", path), zap.String("warning", w))
			}
		}
	}
	s.files[name] = st
	return true, false
}

// problem is one of a file's problems and the last good objects it keeps.
type problem struct {
	err  error
	kept []fileObject
}

// merge returns a file's objects and problems after it was read into
// docs, given its last good objects, old. Each good document gives its
// object; a bad one is a problem and keeps the last good object of its
// kind and namespace/name (a pod when the kind cannot be read), if the
// file had one. When a bad document's name cannot be read (e.g. a YAML
// syntax error), every last good object no document defines now is kept:
// it may be that document's. Otherwise an object whose document went
// away is dropped.
func merge(old []fileObject, docs []manifest.Document) (objs []fileObject, problems []problem) {
	multi := len(docs) > 1
	oldByKey := make(map[string]fileObject, len(old))
	for _, o := range old {
		oldByKey[o.Key()] = o
	}
	defined := map[string]bool{}
	var unnamed []int // problems of documents without a readable name
	for _, d := range docs {
		label := ""
		if multi {
			label = fmt.Sprintf("document %d (line %d)", d.Index, d.Line)
		}
		if d.Err == nil {
			o := fileObject{Object: manifest.NewObject(d), doc: label}
			defined[o.Key()] = true
			objs = append(objs, o)
			continue
		}
		pr := problem{err: d.Err}
		if d.Name == "" {
			unnamed = append(unnamed, len(problems))
		} else if key := manifest.ObjectKey(d.Kind, d.Namespace+"/"+d.Name); !defined[key] {
			if o, ok := oldByKey[key]; ok {
				defined[key] = true
				o.doc = label
				objs = append(objs, o)
				pr.kept = []fileObject{o}
			}
		}
		problems = append(problems, pr)
	}
	if len(unnamed) > 0 {
		var kept []fileObject
		for _, o := range old {
			if !defined[o.Key()] {
				kept = append(kept, o)
			}
		}
		objs = append(objs, kept...)
		problems[unnamed[0]].kept = kept
	}
	return objs, problems
}

// setProblems records the file's current problems, logging each one that
// was not already logged.
func (s *scanner) setProblems(st *fileState, problems []problem) {
	st.problems = st.problems[:0:0]
	logged := make(map[string]bool, len(problems))
	for _, p := range problems {
		st.problems = append(st.problems, p.err)
		msg := p.err.Error()
		logged[msg] = true
		if st.logged[msg] {
			continue
		}
		switch {
		case len(p.kept) == 0:
			s.log.Error("manifest rejected", zap.Error(p.err))
		case len(p.kept) == 1 && p.kept[0].Pod != nil:
			s.log.Error("manifest rejected; its pod keeps its last good spec", zap.Error(p.err),
				zap.String("pod", p.kept[0].Name()), zap.String("uid", string(p.kept[0].Pod.UID)))
		default:
			names := make([]string, len(p.kept))
			for i, k := range p.kept {
				names[i] = k.What()
			}
			s.log.Error("manifest rejected; what it defined keeps its last good version", zap.Error(p.err), zap.Strings("objects", names))
		}
	}
	st.logged = logged
}

// update assembles the current set. Files are taken in name order, and a
// file's pods in document order; when two define the same namespace/name
// (or UID), the first keeps it and the other is a problem, warned about
// once. key summarises the update's pods and problems, to send only
// changes.
func (s *scanner) update() (u sources.Update, key string) {
	names := make([]string, 0, len(s.files))
	for name := range s.files {
		names = append(names, name)
	}
	slices.Sort(names)

	u.Source = s.source
	var set manifest.Objects
	var k strings.Builder
	byKey := map[string]string{}    // kind and namespace/name → where
	byUID := map[types.UID]string{} // pod UID → where
	conflicts := map[string]string{}
	for _, name := range names {
		st := s.files[name]
		u.Problems = append(u.Problems, st.problems...)
		for _, o := range st.objs {
			where := s.path(name)
			if o.doc != "" {
				where += " (" + o.doc + ")"
			}
			winner, clash := byKey[o.Key()]
			what := o.What()
			if !clash && o.Pod != nil {
				if winner, clash = byUID[o.Pod.UID]; clash {
					what = "pod UID " + string(o.Pod.UID)
				}
			}
			if clash {
				var cause error
				if o.doc == "" {
					cause = fmt.Errorf("%s is also defined by %s, which comes first in name order and wins; this file is ignored", what, winner)
				} else {
					cause = fmt.Errorf("%s: %s is also defined by %s, which comes first in name and document order and wins; this document is ignored", o.doc, what, winner)
				}
				err := &manifest.FileError{Path: s.path(name), Err: cause}
				u.Problems = append(u.Problems, err)
				id := name + "\x00" + o.doc
				conflicts[id] = err.Error()
				if s.conflicts[id] != err.Error() {
					msg := "two manifests define the same pod"
					if o.Pod == nil {
						msg = "two manifests define the same " + o.Kind()
					}
					s.log.Warn(msg, zap.Error(err))
				}
				continue
			}
			byKey[o.Key()] = where
			if o.Pod != nil {
				byUID[o.Pod.UID] = where
			}
			set.Add(o.Object)
			k.WriteString(o.Fingerprint + "\n")
		}
	}
	s.conflicts = conflicts
	u.Pods, u.ConfigMaps, u.Secrets = set.Pods, set.ConfigMaps, set.Secrets
	k.WriteString("problems:\n")
	for _, p := range u.Problems {
		k.WriteString(p.Error() + "\n")
	}
	return u, k.String()
}

func (s *scanner) path(name string) string { return filepath.Join(s.dir, name) }

// readManifest reads a regular file of at most maxManifestBytes. It opens
// without blocking, so a FIFO swapped in after the listing cannot hang the
// scan.
func readManifest(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	if fi.Size() > maxManifestBytes {
		return nil, fmt.Errorf("%w: file is %d bytes, over the %d-byte limit", manifest.ErrTooLarge, fi.Size(), maxManifestBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxManifestBytes {
		return nil, fmt.Errorf("%w: file is over the %d-byte limit", manifest.ErrTooLarge, maxManifestBytes)
	}
	return data, nil
}
