// Package volumeprep makes the host side of a pod's volumes ready, as
// podsync.HostSetupOf describes it: the pod executor's part that touches
// the disk.
package volumeprep

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/actorlet/actorlet/internal/atomicdir"
	"github.com/actorlet/actorlet/internal/podsync"
)

// now names a written volume's new set (atomicdir.Write); only a name, so
// the wall clock is fine.
var now = time.Now

// Prepare makes the host side of pod's volumes ready; call it
// before creating each app (or init) container of the pod, as the kubelet
// sets volumes up before every container start. It:
//
//  1. creates every directory PodDirs lists that is missing (parents too),
//     with its Mode exactly (umask ignored); existing paths are left as
//     they are;
//  2. with opts.AllowHostPath, creates the file of a hostPath volume of
//     type FileOrCreate (empty, 0644; its parent must exist, as in
//     Kubernetes) and checks each hostPath volume's type: Directory and
//     DirectoryOrCreate a directory, File and FileOrCreate a regular file,
//     Socket, CharDevice, BlockDevice what they say ("" checks nothing);
//  3. refuses a subPath that runs through a symbolic link inside its
//     volume, so a container cannot make another container mount a host
//     path of its choosing (the check and Docker's mount are not atomic:
//     a container racing the check can still win; see the kubelet's
//     CVE-2017-1002101 for the full fix, which Docker's API cannot take);
//  4. writes the files of each downwardAPI, configMap, secret or projected volume into its
//     directory with internal/atomicdir (a ..data link swapped atomically;
//     an unchanged set is left alone), so a container that has the
//     directory mounted sees the whole old set or the whole new one;
//  5. with the pod's fsGroup, gives a new emptyDir directory and each
//     written volume (after each change) to that group, setgid, as the
//     kubelet's SetVolumeOwnership (see groupOwn).
//
// Errors name the volume or directory. It does nothing for a pod without
// volumes.
func Prepare(opts podsync.SpecOptions, pod *v1.Pod) error {
	return PrepareWith(opts, podsync.Objects{}, pod)
}

// MountError is a volume that cannot be set up because a ConfigMap or
// Secret (or a key) it needs is missing and it was never written: the
// kubelet's FailedMount. Its Error is the kubelet's event message,
// `MountVolume.SetUp failed for volume "config" : configmap "app" not
// found`.
type MountError struct {
	Volume string
	Err    *podsync.ObjectError
}

func (e *MountError) Error() string {
	return fmt.Sprintf("MountVolume.SetUp failed for volume %q : %v", e.Volume, e.Err)
}

func (e *MountError) Unwrap() error { return e.Err }

// secretTmpfsSize is the size of a secret volume's tmpfs, as the kubelet
// sizes memory-backed volumes (pkg/volume/emptydir,
// calculateEmptyDirMemorySize): the pod's memory limit
// (component-helpers' PodLimits: the apps and sidecars added, against the
// largest init container with the sidecars started before it; a
// container without a limit adds none), else nodeMemory, the node's
// memory.
func secretTmpfsSize(pod *v1.Pod, nodeMemory int64) int64 {
	limits := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})
	if m, ok := limits[v1.ResourceMemory]; ok && !m.IsZero() {
		return m.Value()
	}
	return nodeMemory
}

// PrepareWith is Prepare for a pod whose ConfigMaps and Secrets are objs
// (see podsync.HostSetupWith). Besides, it mounts a tmpfs on each secret
// volume's directory (see mountTmpfs) before writing it, and a volume
// whose object or key is missing keeps the files it has; one never
// written is a *MountError (the other volumes are still written). Call it
// again when the objects change: an unchanged volume is left alone, a
// changed one swapped whole, so containers see the change (except through
// a subPath, which pins the file it was created with).
func PrepareWith(opts podsync.SpecOptions, objs podsync.Objects, pod *v1.Pod) error {
	setup, err := podsync.HostSetupWith(opts, objs, pod)
	if err != nil {
		return err
	}
	for _, d := range setup.Dirs {
		if err := makeDir(d); err != nil {
			return err
		}
	}
	for _, hp := range setup.HostPaths {
		if err := checkHostPath(hp.Source); err != nil {
			return fmt.Errorf("volume %q: %w", hp.Volume, err)
		}
	}
	for _, sp := range setup.SubPaths {
		if err := checkNoSymlink(sp.Base, sp.SubPath); err != nil {
			return fmt.Errorf("container %q: volume %q: subPath %q: %w", sp.Container, sp.Volume, sp.SubPath, err)
		}
	}
	var mountErrs []error
	for _, wv := range setup.Written {
		if wv.Tmpfs {
			if err := mountTmpfs(wv.Dir, secretTmpfsSize(pod, nodeMemory())); err != nil {
				return fmt.Errorf("volume %q: %w", wv.Volume, err)
			}
		}
		if wv.Missing != nil {
			if _, err := os.Lstat(filepath.Join(wv.Dir, atomicdir.DataDir)); err != nil {
				mountErrs = append(mountErrs, &MountError{Volume: wv.Volume, Err: wv.Missing})
			}
			continue // written before: the files stay, as the kubelet's
		}
		files := make(map[string]atomicdir.File, len(wv.Files))
		for p, f := range wv.Files {
			files[p] = atomicdir.File{Data: f.Data, Mode: f.Mode}
		}
		changed, err := atomicdir.Write(wv.Dir, files, now())
		if err != nil {
			return fmt.Errorf("volume %q: %w", wv.Volume, err)
		}
		if changed && wv.Group != nil {
			if err := groupOwn(wv.Dir, *wv.Group, true); err != nil {
				return fmt.Errorf("volume %q: fsGroup %d: %w", wv.Volume, *wv.Group, err)
			}
		}
	}
	return errors.Join(mountErrs...)
}

// MissingObjects lists the volumes of pod whose ConfigMap or Secret (or a
// key) is missing from objs, as the kubelet's FailedMount messages, for a
// pod whose volumes were written before (their files stay).
func MissingObjects(opts podsync.SpecOptions, objs podsync.Objects, pod *v1.Pod) []string {
	setup, err := podsync.HostSetupWith(opts, objs, pod)
	if err != nil {
		return nil
	}
	var out []string
	for _, wv := range setup.Written {
		if wv.Missing != nil {
			out = append(out, (&MountError{Volume: wv.Volume, Err: wv.Missing}).Error())
		}
	}
	return out
}

// RemovePodDir removes the pod's directory, <rootDir>/pods/<uid>, and
// its volumes (the pod has terminated).
// A tmpfs on a secret volume is unmounted first.
func RemovePodDir(rootDir string, uid types.UID) error {
	if err := unmountSecrets(podsync.SecretsDir(rootDir, uid)); err != nil {
		return err
	}
	return os.RemoveAll(podsync.PodDirPath(rootDir, uid))
}

// makeDir creates d.Path with d.Mode unless something exists there.
func makeDir(d podsync.PodDir) error {
	if _, err := os.Lstat(d.Path); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("pod directory: %w", err)
	}
	if err := os.MkdirAll(d.Path, d.Mode); err != nil {
		return fmt.Errorf("pod directory: %w", err)
	}
	if d.Group != nil {
		if err := os.Chown(d.Path, -1, int(*d.Group)); err != nil {
			return fmt.Errorf("pod directory: fsGroup: %w", err)
		}
	}
	if err := os.Chmod(d.Path, d.Mode); err != nil { // MkdirAll's mode is cut by the umask; after chown, which clears setgid
		return fmt.Errorf("pod directory: %w", err)
	}
	return nil
}

// groupOwn gives dir and everything in it to group gid, as the kubelet's
// SetVolumeOwnership does for a pod's fsGroup: each entry's group
// (symbolic links themselves, their targets untouched), each file's mode
// plus group read (and write unless readOnly), each directory's plus x
// and setgid (podsync.FSGroupFileMode, FSGroupDirMode).
func groupOwn(dir string, gid int64, readOnly bool) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(p, -1, int(gid)); err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		mode := podsync.FSGroupFileMode(info.Mode().Perm(), readOnly)
		if d.IsDir() {
			mode = podsync.FSGroupDirMode(info.Mode().Perm(), readOnly)
		}
		return os.Chmod(p, mode|info.Mode()&fs.ModeSticky)
	})
}

// checkHostPath creates a FileOrCreate file and checks the path's type.
func checkHostPath(hp *v1.HostPathVolumeSource) error {
	typ := v1.HostPathUnset
	if hp.Type != nil {
		typ = *hp.Type
	}
	if typ == v1.HostPathFileOrCreate {
		f, err := os.OpenFile(hp.Path, os.O_RDONLY|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("hostPath type FileOrCreate: %w", err)
		}
		f.Close()
	}
	if typ == v1.HostPathUnset {
		return nil
	}
	fi, err := os.Stat(hp.Path)
	if err != nil {
		return fmt.Errorf("hostPath type %s: %w", typ, err)
	}
	mode := fi.Mode()
	var ok bool
	switch typ {
	case v1.HostPathDirectory, v1.HostPathDirectoryOrCreate:
		ok = mode.IsDir()
	case v1.HostPathFile, v1.HostPathFileOrCreate:
		ok = mode.IsRegular()
	case v1.HostPathSocket:
		ok = mode&fs.ModeSocket != 0
	case v1.HostPathCharDev:
		ok = mode&fs.ModeDevice != 0 && mode&fs.ModeCharDevice != 0
	case v1.HostPathBlockDev:
		ok = mode&fs.ModeDevice != 0 && mode&fs.ModeCharDevice == 0
	default:
		return fmt.Errorf("hostPath type %q is not supported by actorlet", typ)
	}
	if !ok {
		return fmt.Errorf("hostPath type check failed: %s is not a %s", hp.Path, typ)
	}
	return nil
}

// checkNoSymlink fails when base/sub, or any directory between base and
// it, is a symbolic link. A missing element ends the check (Docker then
// refuses the missing bind source).
func checkNoSymlink(base, sub string) error {
	p := base
	for _, el := range strings.Split(filepath.Clean(sub), string(filepath.Separator)) {
		if el == "" || el == "." {
			continue
		}
		p = filepath.Join(p, el)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link: refused", p)
		}
	}
	return nil
}

// ReadVolumeFile reads the file name (a relative path) inside the volume
// directory dir, never outside it: through os.Root, so neither ".." nor a
// symbolic link a container made in the volume (to /etc/shadow, say) can
// make the agent read a host file into a container's env. It is
// podsync.SpecOptions.ReadVolumeFile in the agent (env valueFrom.fileKeyRef).
func ReadVolumeFile(dir, name string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.ReadFile(name)
}
