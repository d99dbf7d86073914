package dir

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
	v1 "k8s.io/api/core/v1"
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
	data []byte  // content last read; nil after a read error
	pod  *v1.Pod // last good pod read from the file; nil if none yet
	// fingerprint identifies pod's UID and full content, to see changes.
	fingerprint string
	problem     error  // the file's current problem; nil when data is good
	logged      string // the problem last logged, to log each one once
}

// scanner reads the directory and turns it into updates. It is used by one
// goroutine (Run's) and keeps no goroutines of its own.
type scanner struct {
	dir, source, node string
	log               *zap.Logger
	validate          manifest.ValidationOptions

	files     map[string]*fileState // by file name
	conflicts map[string]string     // losing file name → conflict message last logged
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
// can be read again.
func (s *scanner) scan() (sources.Update, bool) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		err = fmt.Errorf("read manifest directory %s: %w", s.dir, err)
		send := !s.failed || err.Error() != s.lastErr
		if send {
			s.log.Error("cannot read manifest directory; keeping the last set of pods", zap.Error(err))
		}
		s.failed, s.lastErr = true, err.Error()
		return sources.Update{Source: s.source, Err: err}, send
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
		if s.read(name) {
			seen[name] = true
		}
	}
	for name := range s.files {
		if !seen[name] {
			s.log.Info("manifest removed", zap.String("file", s.path(name)))
			delete(s.files, name)
		}
	}
	s.logSkipped(skipped)

	u, key := s.update()
	send := !s.sent || recovered || key != s.lastKey
	s.sent, s.lastKey = true, key
	return u, send
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
func (s *scanner) read(name string) bool {
	path := s.path(name)
	st := s.files[name]
	if st == nil {
		st = &fileState{}
	}
	data, err := readManifest(path)
	switch {
	case errors.Is(err, fs.ErrNotExist): // removed since the listing (or a dangling link)
		return false
	case err != nil:
		st.data = nil
		s.setProblem(name, st, &manifest.FileError{Path: path, Err: err})
	case st.data != nil && bytes.Equal(data, st.data):
		// Unchanged: keep the pod or the problem, log nothing.
	default:
		st.data = data
		pod, warnings, err := manifest.LoadFileWith(s.validate, s.node, path, data)
		if err != nil {
			s.setProblem(name, st, err)
			break
		}
		if st.problem != nil {
			s.log.Info("manifest fixed", zap.String("file", path))
		}
		st.pod, st.fingerprint, st.problem, st.logged = pod, fingerprint(pod), nil, ""
		for _, w := range warnings {
			s.log.Warn("manifest field ignored", zap.String("file", path), zap.String("warning", w))
		}
	}
	s.files[name] = st
	return true
}

// setProblem records the file's current problem, logging it unless it is
// the one already logged.
func (s *scanner) setProblem(name string, st *fileState, err error) {
	st.problem = err
	if st.logged == err.Error() {
		return
	}
	st.logged = err.Error()
	if st.pod != nil {
		s.log.Error("manifest rejected; its pod keeps its last good spec", zap.Error(err),
			zap.String("pod", st.pod.Namespace+"/"+st.pod.Name), zap.String("uid", string(st.pod.UID)))
	} else {
		s.log.Error("manifest rejected", zap.Error(err))
	}
}

// update assembles the current set. Files are taken in name order; when two
// define the same namespace/name (or UID), the first keeps it and the other
// is a problem, warned about once. key summarises the update's pods and
// problems, to send only changes.
func (s *scanner) update() (u sources.Update, key string) {
	names := make([]string, 0, len(s.files))
	for name := range s.files {
		names = append(names, name)
	}
	slices.Sort(names)

	u.Source = s.source
	var k strings.Builder
	byName := map[string]string{}   // namespace/name → file
	byUID := map[types.UID]string{} // UID → file
	conflicts := map[string]string{}
	for _, name := range names {
		st := s.files[name]
		if st.problem != nil {
			u.Problems = append(u.Problems, st.problem)
		}
		if st.pod == nil {
			continue
		}
		key := st.pod.Namespace + "/" + st.pod.Name
		winner, clash := byName[key]
		what := "pod " + key
		if !clash {
			if winner, clash = byUID[st.pod.UID]; clash {
				what = "pod UID " + string(st.pod.UID)
			}
		}
		if clash {
			err := &manifest.FileError{Path: s.path(name), Err: fmt.Errorf(
				"%s is also defined by %s, which comes first in name order and wins; this file is ignored", what, s.path(winner))}
			u.Problems = append(u.Problems, err)
			conflicts[name] = err.Error()
			if s.conflicts[name] != err.Error() {
				s.log.Warn("two manifests define the same pod", zap.Error(err))
			}
			continue
		}
		byName[key], byUID[st.pod.UID] = name, name
		u.Pods = append(u.Pods, st.pod)
		k.WriteString(st.fingerprint + "\n")
	}
	s.conflicts = conflicts
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

// fingerprint identifies a pod's UID and whole content.
func fingerprint(pod *v1.Pod) string {
	data, _ := json.Marshal(pod) // a v1.Pod always marshals
	sum := sha256.Sum256(data)
	return string(pod.UID) + "/" + hex.EncodeToString(sum[:])
}
