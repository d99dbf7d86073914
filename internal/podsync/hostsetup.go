package podsync

import (
	"fmt"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
)

// HostSetup is what the host must have before a container of a pod is
// created: directories to make, hostPath volumes whose type to check, and
// subPaths that must not run through a symbolic link. HostSetupOf
// computes it; internal/volumeprep carries it out (the only part that
// touches the disk).
type HostSetup struct {
	// Dirs are made when missing, with their Mode exactly.
	Dirs []PodDir
	// HostPaths: with AllowHostPath, each hostPath volume, to create (type
	// FileOrCreate) and check.
	HostPaths []HostPathCheck
	// SubPaths: each subPath of a mount, under its volume's host path.
	SubPaths []SubPathCheck
	// Written: each downwardAPI, configMap, secret or projected volume,
	// whose directory (one of Dirs) must hold exactly its files, written
	// atomically.
	Written []WrittenVolume
}

// HostPathCheck is a hostPath volume to check.
type HostPathCheck struct {
	Volume string
	Source *v1.HostPathVolumeSource
}

// SubPathCheck is a subPath, Base/SubPath on the host, of a mount of
// Container's, that must not run through a symbolic link.
type SubPathCheck struct {
	Container, Volume string
	Base, SubPath     string
}

// HostSetupOf returns what the host must have before a container of pod
// is created (see HostSetup). A pod with a disk emptyDir volume needs an
// absolute root directory; without volumes it needs nothing.
func HostSetupOf(opts SpecOptions, pod *v1.Pod) (HostSetup, error) {
	return HostSetupWith(opts, Objects{}, pod)
}

// HostSetupWith is HostSetupOf for a pod whose ConfigMaps and Secrets
// (those it refers to that exist) are objs: its configMap, secret and
// projected volumes are written from them (see VolumeFiles); a volume
// whose object or key is missing has WrittenVolume.Missing set.
func HostSetupWith(opts SpecOptions, objs Objects, pod *v1.Pod) (HostSetup, error) {
	var s HostSetup
	if len(pod.Spec.Volumes) == 0 {
		return s, nil
	}
	for _, vol := range pod.Spec.Volumes {
		if isDiskEmptyDir(&vol) && !filepath.IsAbs(opts.RootDir) {
			return s, fmt.Errorf("volume %q: emptyDir needs an absolute root directory, have %q", vol.Name, opts.RootDir)
		}
		if isWrittenVolume(&vol) && !filepath.IsAbs(opts.RootDir) {
			return s, fmt.Errorf("volume %q: a %s volume needs an absolute root directory, have %q", vol.Name, writtenKind(&vol), opts.RootDir)
		}
	}
	s.Dirs = PodDirs(opts, pod)
	written, err := writtenVolumes(opts, objs, pod)
	if err != nil {
		return HostSetup{}, err
	}
	s.Written = written
	if opts.AllowHostPath {
		for _, vol := range pod.Spec.Volumes {
			if vol.HostPath != nil {
				s.HostPaths = append(s.HostPaths, HostPathCheck{Volume: vol.Name, Source: vol.HostPath})
			}
		}
	}
	for _, c := range allContainers(pod) {
		for _, vm := range c.VolumeMounts {
			vol := findVolume(pod, vm.Name)
			if vm.SubPath == "" || vol == nil {
				continue
			}
			var base string
			switch {
			case isDiskEmptyDir(vol):
				base = EmptyDirPath(opts.RootDir, pod.UID, vol.Name)
			case vol.HostPath != nil && opts.AllowHostPath:
				base = filepath.Clean(vol.HostPath.Path)
			default:
				continue
			}
			s.SubPaths = append(s.SubPaths, SubPathCheck{Container: c.Name, Volume: vol.Name, Base: base, SubPath: vm.SubPath})
		}
	}
	return s, nil
}
