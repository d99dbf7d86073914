package podsync

import (
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// Modes of the directories PodDirs lists, as the kubelet makes them: pod
// directories private to root, emptyDir volumes (and their subPaths)
// writable by any user the container runs as, hostPath directories 0755.
const (
	podDirMode      fs.FileMode = 0o750
	emptyDirMode    fs.FileMode = 0o777
	hostPathDirMode fs.FileMode = 0o755
	// secretsDirMode: the parent of a pod's secret volumes, private to
	// root.
	secretsDirMode fs.FileMode = 0o700
)

// PodDirPath is a pod's directory, <rootDir>/pods/<uid>: its volumes live
// below it. Remove it (os.RemoveAll) once the pod is gone and none of its
// containers remains.
func PodDirPath(rootDir string, uid types.UID) string {
	return filepath.Join(rootDir, "pods", string(uid))
}

// EmptyDirPath is the host directory of the disk-backed emptyDir volume
// named volume: <rootDir>/pods/<uid>/volumes/empty-dir/<volume>.
func EmptyDirPath(rootDir string, uid types.UID, volume string) string {
	return filepath.Join(PodDirPath(rootDir, uid), "volumes", "empty-dir", volume)
}

// PodDir is a directory a pod needs on the host before its app containers
// are created.
type PodDir struct {
	Path string
	// Mode is the permission to create Path (and missing parents) with,
	// umask ignored. An existing path is left as it is.
	Mode fs.FileMode
	// Group, when set (the pod's fsGroup, on a disk emptyDir volume's
	// directory), is the group a new Path is given (Mode then has setgid
	// and group rwx, see FSGroupDirMode).
	Group *int64
}

// PodDirs lists, parents first, the directories pod's app containers need
// (volumeprep.Prepare makes them): the pod's directory and its volumes
// directory (0750), each disk-backed emptyDir volume (its emptyDir.mode,
// else 0777, so a container's non-root user can write; with fsGroup, owned
// by that group with setgid and group rwx, as the kubelet leaves it), each subPath mounted from one
// (0777) or from a hostPath volume (0755), and, with opts.AllowHostPath,
// the path of each hostPath volume of type "" or DirectoryOrCreate (0755:
// the kubelet creates these, "" because container runtimes do). Nothing is
// listed for memory-backed emptyDirs (tmpfs) or volumes of other kinds. It
// is pure.
func PodDirs(opts SpecOptions, pod *v1.Pod) []PodDir {
	var out []PodDir
	seen := map[string]bool{}
	addDir := func(d PodDir) {
		if !seen[d.Path] {
			seen[d.Path] = true
			out = append(out, d)
		}
	}
	add := func(p string, mode fs.FileMode) { addDir(PodDir{Path: p, Mode: mode}) }
	uid := pod.UID
	for _, vol := range pod.Spec.Volumes {
		if !isDiskEmptyDir(&vol) {
			continue
		}
		base := filepath.Dir(EmptyDirPath(opts.RootDir, uid, vol.Name))
		add(PodDirPath(opts.RootDir, uid), podDirMode)
		add(filepath.Dir(base), podDirMode)
		add(base, podDirMode)
		d := PodDir{Path: EmptyDirPath(opts.RootDir, uid, vol.Name), Mode: emptyDirModeOf(&vol)}
		if d.Group = FSGroup(pod); d.Group != nil {
			d.Mode = FSGroupDirMode(d.Mode, false)
		}
		addDir(d)
	}
	for _, vol := range pod.Spec.Volumes {
		if !isWrittenVolume(&vol) {
			continue
		}
		dir := WrittenVolumePath(opts.RootDir, uid, &vol)
		base := filepath.Dir(dir)
		add(PodDirPath(opts.RootDir, uid), podDirMode)
		add(filepath.Dir(base), podDirMode)
		if holdsSecrets(&vol) {
			add(base, secretsDirMode)
		} else {
			add(base, podDirMode)
		}
		add(dir, writtenVolumeDirMode)
	}
	if opts.AllowHostPath {
		for _, vol := range pod.Spec.Volumes {
			if hp := vol.HostPath; hp != nil && (hp.Type == nil || *hp.Type == v1.HostPathUnset || *hp.Type == v1.HostPathDirectoryOrCreate) {
				add(filepath.Clean(hp.Path), hostPathDirMode)
			}
		}
	}
	for _, c := range allContainers(pod) {
		for _, vm := range c.VolumeMounts {
			if vm.SubPath == "" || checkSubPath(vm.SubPath) != nil {
				continue
			}
			vol := findVolume(pod, vm.Name)
			switch {
			case vol == nil:
			case isDiskEmptyDir(vol):
				add(filepath.Join(EmptyDirPath(opts.RootDir, uid, vol.Name), vm.SubPath), emptyDirMode)
			case vol.HostPath != nil && opts.AllowHostPath && hostPathIsDir(vol.HostPath):
				add(filepath.Join(vol.HostPath.Path, vm.SubPath), hostPathDirMode)
			}
		}
	}
	return out
}

// emptyDirModeOf is the mode of a disk-backed emptyDir's directory: its
// emptyDir.mode when set (Kubernetes' EmptyDirVolumeMode: 0 to 01777,
// e.g. 01777 for a sticky /tmp), else 0777.
func emptyDirModeOf(vol *v1.Volume) fs.FileMode {
	if vol.EmptyDir == nil || vol.EmptyDir.Mode == nil {
		return emptyDirMode
	}
	m := *vol.EmptyDir.Mode
	mode := fs.FileMode(m) & fs.ModePerm
	if m&0o1000 != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// FSGroup is the pod's securityContext.fsGroup, nil when unset: the
// group added to every container's processes and given the volumes
// actorlet makes (disk emptyDir, downwardAPI, configMap, secret,
// projected), as the kubelet gives them.
func FSGroup(pod *v1.Pod) *int64 {
	if sc := pod.Spec.SecurityContext; sc != nil && sc.FSGroup != nil {
		g := *sc.FSGroup
		return &g
	}
	return nil
}

// The kubelet's masks of SetVolumeOwnership (pkg/volume/volume_linux.go):
// what fsGroup adds to the mode of each file of a volume (rw, or ro for a
// read-only volume) and, with setgid, of each directory (x).
const (
	fsGroupRWMask   fs.FileMode = 0o660
	fsGroupROMask   fs.FileMode = 0o440
	fsGroupExecMask fs.FileMode = 0o110
)

// FSGroupFileMode is the mode the kubelet leaves a file of a volume
// with fsGroup in: mode (0 is 0644) plus group (and owner) read, and
// write unless readOnly.
func FSGroupFileMode(mode fs.FileMode, readOnly bool) fs.FileMode {
	if mode == 0 {
		mode = 0o644
	}
	if readOnly {
		return mode | fsGroupROMask
	}
	return mode | fsGroupRWMask
}

// FSGroupDirMode is FSGroupFileMode for a directory: also x and setgid,
// so what is created in it belongs to the fsGroup.
func FSGroupDirMode(mode fs.FileMode, readOnly bool) fs.FileMode {
	return FSGroupFileMode(mode, readOnly) | fsGroupExecMask | fs.ModeSetgid
}

// allContainers returns the pod's init and app containers.
func allContainers(pod *v1.Pod) []*v1.Container {
	out := make([]*v1.Container, 0, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	for i := range pod.Spec.InitContainers {
		out = append(out, &pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		out = append(out, &pod.Spec.Containers[i])
	}
	return out
}

func findVolume(pod *v1.Pod, name string) *v1.Volume {
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Name == name {
			return &pod.Spec.Volumes[i]
		}
	}
	return nil
}

// isEmptyDir: an emptyDir volume, or one with no source, which Kubernetes
// defaults to an emptyDir.
func isEmptyDir(vol *v1.Volume) bool {
	return vol.EmptyDir != nil || vol.VolumeSource == (v1.VolumeSource{})
}

func emptyDirMedium(vol *v1.Volume) v1.StorageMedium {
	if vol.EmptyDir == nil {
		return v1.StorageMediumDefault
	}
	return vol.EmptyDir.Medium
}

func isDiskEmptyDir(vol *v1.Volume) bool {
	return isEmptyDir(vol) && emptyDirMedium(vol) == v1.StorageMediumDefault
}

// hostPathIsDir: a hostPath volume whose type says (or allows) a
// directory.
func hostPathIsDir(hp *v1.HostPathVolumeSource) bool {
	return hp.Type == nil || slices.Contains([]v1.HostPathType{v1.HostPathUnset, v1.HostPathDirectory, v1.HostPathDirectoryOrCreate}, *hp.Type)
}

// checkSubPath accepts a relative path without ".." elements.
func checkSubPath(sub string) error {
	if path.IsAbs(sub) || filepath.IsAbs(sub) {
		return fmt.Errorf("must be a relative path")
	}
	for _, el := range strings.Split(filepath.ToSlash(sub), "/") {
		if el == ".." {
			return fmt.Errorf("must not contain '..'")
		}
	}
	return nil
}

// mounts maps c's volumeMounts (see AppSpecWith).
func mounts(opts SpecOptions, pod *v1.Pod, c *v1.Container) ([]runtimeadapter.Mount, error) {
	var out []runtimeadapter.Mount
	for i, vm := range c.VolumeMounts {
		m, err := mount(opts, pod, vm)
		if err != nil {
			return nil, fmt.Errorf("volumeMounts[%d]: %w", i, err)
		}
		out = append(out, m)
	}
	return out, nil
}

func mount(opts SpecOptions, pod *v1.Pod, vm v1.VolumeMount) (runtimeadapter.Mount, error) {
	none := runtimeadapter.Mount{}
	vol := findVolume(pod, vm.Name)
	switch {
	case vol == nil:
		return none, fmt.Errorf("volume %q not found in spec.volumes", vm.Name)
	case vm.SubPathExpr != "":
		return none, fmt.Errorf("subPathExpr is not supported by actorlet")
	case vm.MountPropagation != nil && *vm.MountPropagation != v1.MountPropagationNone:
		return none, fmt.Errorf("mountPropagation %s is not supported by actorlet", *vm.MountPropagation)
	case vm.RecursiveReadOnly != nil && *vm.RecursiveReadOnly == v1.RecursiveReadOnlyEnabled:
		return none, fmt.Errorf("recursiveReadOnly Enabled is not supported by actorlet")
	case len(vm.BindMountOptions) > 0:
		return none, fmt.Errorf("bindMountOptions are not supported by actorlet")
	}
	if vm.SubPath != "" {
		if err := checkSubPath(vm.SubPath); err != nil {
			return none, fmt.Errorf("subPath %q: %w", vm.SubPath, err)
		}
	}
	m := runtimeadapter.Mount{Type: runtimeadapter.MountBind, Target: vm.MountPath, ReadOnly: vm.ReadOnly}
	switch {
	case vol.HostPath != nil:
		if !opts.AllowHostPath {
			return none, fmt.Errorf("volume %q: hostPath volumes are not allowed on this node (--allow-host-path)", vol.Name)
		}
		m.Source = filepath.Join(vol.HostPath.Path, vm.SubPath)
	case isWrittenVolume(vol):
		if !filepath.IsAbs(opts.RootDir) {
			return none, fmt.Errorf("volume %q: a %s volume needs an absolute root directory, have %q", vol.Name, writtenKind(vol), opts.RootDir)
		}
		// A subPath is the file (or directory) through the volume's
		// links, as they are at the container's creation: it is not
		// updated, as in Kubernetes.
		m.Source = filepath.Join(WrittenVolumePath(opts.RootDir, pod.UID, vol), vm.SubPath)
		m.ReadOnly = true // as the kubelet: the files are the node's to write
	case isEmptyDir(vol):
		switch medium := emptyDirMedium(vol); medium {
		case v1.StorageMediumMemory:
			if vm.SubPath != "" {
				return none, fmt.Errorf("volume %q: subPath of a Memory emptyDir is not supported by actorlet", vol.Name)
			}
			m.Type = runtimeadapter.MountTmpfs
			if q := vol.EmptyDir.SizeLimit; q != nil {
				m.SizeBytes = q.Value()
			}
		case v1.StorageMediumDefault:
			if !filepath.IsAbs(opts.RootDir) {
				return none, fmt.Errorf("volume %q: emptyDir needs an absolute root directory, have %q", vol.Name, opts.RootDir)
			}
			m.Source = filepath.Join(EmptyDirPath(opts.RootDir, pod.UID, vol.Name), vm.SubPath)
		default:
			return none, fmt.Errorf("volume %q: emptyDir medium %q is not supported by actorlet", vol.Name, medium)
		}
	default:
		return none, fmt.Errorf("volume %q: only emptyDir, hostPath, downwardAPI, configMap, secret and projected volumes are supported by actorlet", vol.Name)
	}
	return m, nil
}

// writtenKind names a written volume's kind for messages.
func writtenKind(vol *v1.Volume) string {
	switch {
	case vol.ConfigMap != nil:
		return "configMap"
	case vol.Secret != nil:
		return "secret"
	case vol.Projected != nil:
		return "projected"
	}
	return "downwardAPI"
}
