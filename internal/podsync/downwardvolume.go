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
)

// defaultVolumeFileMode is a written volume file's mode when neither the
// item nor the volume sets one, as Kubernetes defaults defaultMode.
const defaultVolumeFileMode fs.FileMode = 0o644

// writtenVolumeDirMode is the mode of a written volume's directory.
const writtenVolumeDirMode fs.FileMode = 0o755

// DownwardAPIPath is the host directory of the downwardAPI (or projected)
// volume named volume: <rootDir>/pods/<uid>/volumes/downward-api/<volume>.
// Its files are written as internal/atomicdir lays them out and the
// directory is bind-mounted, read-only, into the containers.
func DownwardAPIPath(rootDir string, uid types.UID, volume string) string {
	return filepath.Join(PodDirPath(rootDir, uid), "volumes", "downward-api", volume)
}

// isWrittenVolume: a volume whose files actorlet writes (downwardAPI, or
// projected).
func isWrittenVolume(vol *v1.Volume) bool {
	return vol.DownwardAPI != nil || vol.Projected != nil
}

// VolumeFile is one file of a written volume.
type VolumeFile struct {
	Data []byte
	Mode fs.FileMode
}

// WrittenVolume is a volume whose files actorlet writes: Dir (see
// DownwardAPIPath) is to hold exactly Files, by relative path.
type WrittenVolume struct {
	Volume string
	Dir    string
	Files  map[string]VolumeFile
}

// DownwardAPIFiles returns the files of a downwardAPI volume, or of a
// projected volume with downwardAPI sources only, as the kubelet writes
// them: an item's fieldRef gives metadata.name, metadata.namespace,
// metadata.uid, one label or annotation (metadata.labels['<key>']), or all
// of them (metadata.labels, metadata.annotations: one key="value" line per
// key, sorted, the value quoted as Go quotes it); a resourceFieldRef its
// container's resource (see Downward.ResourceFieldRef). A file's mode is
// its item's mode, else the volume's defaultMode, else 0644. Any other
// source is an error naming it.
func DownwardAPIFiles(d Downward, pod *v1.Pod, vol *v1.Volume) (map[string]VolumeFile, error) {
	var items []v1.DownwardAPIVolumeFile
	var defaultMode *int32
	switch {
	case vol.DownwardAPI != nil:
		items, defaultMode = vol.DownwardAPI.Items, vol.DownwardAPI.DefaultMode
	case vol.Projected != nil:
		defaultMode = vol.Projected.DefaultMode
		for i, src := range vol.Projected.Sources {
			switch {
			case src.DownwardAPI != nil:
				items = append(items, src.DownwardAPI.Items...)
			case src.ConfigMap != nil:
				return nil, fmt.Errorf("volume %q: sources[%d]: configMap projections are not supported by actorlet", vol.Name, i)
			case src.Secret != nil:
				return nil, fmt.Errorf("volume %q: sources[%d]: secret projections are not supported by actorlet", vol.Name, i)
			case src.ServiceAccountToken != nil:
				return nil, fmt.Errorf("volume %q: sources[%d]: serviceAccountToken projections are not supported by actorlet", vol.Name, i)
			default:
				return nil, fmt.Errorf("volume %q: sources[%d]: only downwardAPI projections are supported by actorlet", vol.Name, i)
			}
		}
	default:
		return nil, fmt.Errorf("volume %q: not a downwardAPI or projected volume", vol.Name)
	}
	mode := defaultVolumeFileMode
	if defaultMode != nil {
		mode = fs.FileMode(*defaultMode).Perm()
	}
	files := make(map[string]VolumeFile, len(items))
	for i, it := range items {
		if err := checkItemPath(it.Path); err != nil {
			return nil, fmt.Errorf("volume %q: items[%d]: %w", vol.Name, i, err)
		}
		var val string
		var err error
		switch {
		case it.FieldRef != nil:
			val, err = volumeFieldValue(pod, it.FieldRef.FieldPath)
		case it.ResourceFieldRef != nil:
			val, err = d.ResourceFieldRef(pod, nil, it.ResourceFieldRef)
		default:
			err = fmt.Errorf("one of fieldRef and resourceFieldRef is required")
		}
		if err != nil {
			return nil, fmt.Errorf("volume %q: items[%d] (%s): %w", vol.Name, i, it.Path, err)
		}
		m := mode
		if it.Mode != nil {
			m = fs.FileMode(*it.Mode).Perm()
		}
		files[path.Clean(it.Path)] = VolumeFile{Data: []byte(val), Mode: m}
	}
	return files, nil
}

// volumeFieldValue resolves a downwardAPI volume item's fieldPath.
func volumeFieldValue(pod *v1.Pod, fieldPath string) (string, error) {
	switch fieldPath {
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case FieldPodName, FieldPodNamespace, FieldPodUID:
		return Downward{}.FieldRef(pod, fieldPath)
	}
	if _, ok := subscript(fieldPath, fieldLabelsPrefix); ok {
		return Downward{}.FieldRef(pod, fieldPath)
	}
	if _, ok := subscript(fieldPath, fieldAnnotationsPrefix); ok {
		return Downward{}.FieldRef(pod, fieldPath)
	}
	return "", fmt.Errorf("fieldPath %q is not supported in a downwardAPI volume", fieldPath)
}

// formatMap writes m as the kubelet's downward API does: key="value"
// lines (the value quoted as Go's %q), sorted by key, without a final
// newline.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s=%q", k, m[k])
	}
	return b.String()
}

// checkItemPath accepts a volume item's path: relative, no ".." element,
// not starting with "..".
func checkItemPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("path is empty")
	case path.IsAbs(p):
		return fmt.Errorf("path %q: must be relative", p)
	case strings.HasPrefix(p, ".."):
		return fmt.Errorf("path %q: must not start with '..'", p)
	case slices.Contains(strings.Split(p, "/"), ".."):
		return fmt.Errorf("path %q: must not contain '..'", p)
	}
	return nil
}

// writtenVolumes lists pod's downwardAPI and projected volumes with their
// files (see DownwardAPIFiles).
func writtenVolumes(opts SpecOptions, pod *v1.Pod) ([]WrittenVolume, error) {
	var out []WrittenVolume
	d := opts.DownwardFor("", pod, "")
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if !isWrittenVolume(vol) {
			continue
		}
		files, err := DownwardAPIFiles(d, pod, vol)
		if err != nil {
			return nil, err
		}
		out = append(out, WrittenVolume{Volume: vol.Name, Dir: DownwardAPIPath(opts.RootDir, pod.UID, vol.Name), Files: files})
	}
	return out, nil
}
