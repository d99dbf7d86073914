// Package atomicdir writes a set of files into a directory so that a
// reader (a container with the directory bind-mounted) sees either the
// whole old set or the whole new one, never a mix, as the kubelet's
// atomic writer does for downwardAPI, ConfigMap, Secret and projected
// volumes. The directory holds:
//
//	..2026_12_01_20_55_00.123456789/   the current set (a new directory per change)
//	..data -> ..2026_12_01_20_55_00.123456789
//	<name> -> ..data/<name>            one link per top-level name of the set
//
// A change writes a new timestamped directory, swaps ..data to it with one
// rename (atomic), links the new top-level names, unlinks those gone and
// removes the old directory. A bind mount of the directory itself follows
// every swap (a bind-mounted file would pin its old inode).
package atomicdir

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// DataDir is the name of the link to the current set's directory.
const DataDir = "..data"

// dataTmp is the link made beside DataDir and renamed over it.
const dataTmp = "..data_tmp"

// File is one file of the set.
type File struct {
	Data []byte
	// Mode is the file's permission bits (0 gives 0644).
	Mode fs.FileMode
}

// CheckPath accepts a file's path in the set: relative, not empty, no ".."
// element, not starting with "..", at most 4096 bytes, as Kubernetes
// checks a volume item's path.
func CheckPath(p string) error {
	switch {
	case p == "":
		return errors.New("path is empty")
	case len(p) > 4096:
		return fmt.Errorf("path %.40q…: longer than 4096 bytes", p)
	case path.IsAbs(p):
		return fmt.Errorf("path %q: must be relative", p)
	case strings.HasPrefix(p, ".."):
		return fmt.Errorf("path %q: must not start with '..'", p)
	}
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return fmt.Errorf("path %q: must not contain '..'", p)
		}
	}
	return nil
}

// Write makes dir (which must exist) hold exactly files, by path, as the
// package comment describes; now names the new set's directory. It
// reports whether it changed anything: a set equal to the current one
// (content and modes) is left alone. A path that fails CheckPath, or two
// paths of which one is a directory of the other, is an error and
// nothing is written.
func Write(dir string, files map[string]File, now time.Time) (bool, error) {
	paths := make([]string, 0, len(files))
	for p := range files {
		if err := CheckPath(p); err != nil {
			return false, fmt.Errorf("atomic dir %s: %w", dir, err)
		}
		paths = append(paths, path.Clean(p))
	}
	slices.Sort(paths)
	for i := 1; i < len(paths); i++ {
		if paths[i] == paths[i-1] || strings.HasPrefix(paths[i], paths[i-1]+"/") {
			return false, fmt.Errorf("atomic dir %s: path %q is also a file of the set", dir, paths[i-1])
		}
	}
	oldTS, _ := os.Readlink(filepath.Join(dir, DataDir))
	if oldTS != "" && same(filepath.Join(dir, oldTS), files) {
		return false, nil
	}
	ts, err := os.MkdirTemp(dir, now.UTC().Format("..2006_01_02_15_04_05."))
	if err != nil {
		return false, fmt.Errorf("atomic dir %s: %w", dir, err)
	}
	if err := os.Chmod(ts, 0o755); err != nil {
		return false, fmt.Errorf("atomic dir %s: %w", dir, err)
	}
	for p, f := range files {
		if err := writeFile(filepath.Join(ts, filepath.FromSlash(path.Clean(p))), f); err != nil {
			_ = os.RemoveAll(ts)
			return false, fmt.Errorf("atomic dir %s: %w", dir, err)
		}
	}
	tmp := filepath.Join(dir, dataTmp)
	_ = os.Remove(tmp) // left by an interrupted write
	if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
		_ = os.RemoveAll(ts)
		return false, fmt.Errorf("atomic dir %s: %w", dir, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, DataDir)); err != nil {
		_ = os.RemoveAll(ts)
		return false, fmt.Errorf("atomic dir %s: swap %s: %w", dir, DataDir, err)
	}
	top := map[string]bool{}
	for _, p := range paths {
		top[strings.SplitN(p, "/", 2)[0]] = true
	}
	for name := range top {
		link := filepath.Join(dir, name)
		target := filepath.Join(DataDir, name)
		if cur, err := os.Readlink(link); err == nil && cur == target {
			continue
		}
		if err := os.Symlink(target, link); err != nil {
			return true, fmt.Errorf("atomic dir %s: link %s: %w", dir, name, err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return true, fmt.Errorf("atomic dir %s: %w", dir, err)
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, "..") || top[name] || e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		if t, err := os.Readlink(filepath.Join(dir, name)); err == nil && strings.HasPrefix(t, DataDir+"/") {
			_ = os.Remove(filepath.Join(dir, name)) // a name no longer in the set
		}
	}
	if oldTS != "" && oldTS != filepath.Base(ts) {
		_ = os.RemoveAll(filepath.Join(dir, oldTS))
	}
	return true, nil
}

func writeFile(p string, f File) error {
	mode := f.Mode.Perm()
	if mode == 0 {
		mode = 0o644
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(p, f.Data, mode); err != nil {
		return err
	}
	return os.Chmod(p, mode) // WriteFile's mode is cut by the umask
}

// same reports whether directory ts holds exactly files, with their
// content and modes.
func same(ts string, files map[string]File) bool {
	n := 0
	err := filepath.WalkDir(ts, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(ts, p)
		if err != nil {
			return err
		}
		f, ok := files[filepath.ToSlash(rel)]
		if !ok {
			return errors.New("extra")
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := f.Mode.Perm()
		if want == 0 {
			want = 0o644
		}
		data, err := os.ReadFile(p)
		if err != nil || info.Mode().Perm() != want || !bytes.Equal(data, f.Data) {
			return errors.New("differs")
		}
		n++
		return nil
	})
	return err == nil && n == len(files)
}
