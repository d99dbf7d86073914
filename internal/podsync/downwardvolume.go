package podsync

import (
	"errors"
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

// DownwardAPIPath is the host directory of the downwardAPI volume (or
// projected volume without secret sources) named volume:
// <rootDir>/pods/<uid>/volumes/downward-api/<volume>. Its files are
// written as internal/atomicdir lays them out and the directory is
// bind-mounted, read-only, into the containers.
func DownwardAPIPath(rootDir string, uid types.UID, volume string) string {
	return filepath.Join(PodDirPath(rootDir, uid), "volumes", "downward-api", volume)
}

// ConfigMapPath is the host directory of the configMap volume named
// volume: <rootDir>/pods/<uid>/volumes/configmap/<volume>.
func ConfigMapPath(rootDir string, uid types.UID, volume string) string {
	return filepath.Join(PodDirPath(rootDir, uid), "volumes", "configmap", volume)
}

// SecretPath is the host directory of the secret volume (or projected
// volume with a secret source) named volume:
// <rootDir>/pods/<uid>/volumes/secret/<volume>. Its parent is private to
// root (0700) and volumeprep mounts a tmpfs on it when it can, so secrets
// never reach the disk.
func SecretPath(rootDir string, uid types.UID, volume string) string {
	return filepath.Join(SecretsDir(rootDir, uid), volume)
}

// SecretsDir is the parent of a pod's secret volumes (see SecretPath).
func SecretsDir(rootDir string, uid types.UID) string {
	return filepath.Join(PodDirPath(rootDir, uid), "volumes", "secret")
}

// holdsSecrets: a secret volume, or a projected volume with a secret
// source.
func holdsSecrets(vol *v1.Volume) bool {
	if vol.Secret != nil {
		return true
	}
	if vol.Projected != nil {
		for _, src := range vol.Projected.Sources {
			if src.Secret != nil {
				return true
			}
		}
	}
	return false
}

// WrittenVolumePath is the host directory of a volume whose files
// actorlet writes (see isWrittenVolume).
func WrittenVolumePath(rootDir string, uid types.UID, vol *v1.Volume) string {
	switch {
	case holdsSecrets(vol):
		return SecretPath(rootDir, uid, vol.Name)
	case vol.ConfigMap != nil:
		return ConfigMapPath(rootDir, uid, vol.Name)
	}
	return DownwardAPIPath(rootDir, uid, vol.Name)
}

// isWrittenVolume: a volume whose files actorlet writes (downwardAPI,
// configMap, secret, or projected).
func isWrittenVolume(vol *v1.Volume) bool {
	return vol.DownwardAPI != nil || vol.Projected != nil || vol.ConfigMap != nil || vol.Secret != nil
}

// VolumeFile is one file of a written volume.
type VolumeFile struct {
	Data []byte
	Mode fs.FileMode
}

// WrittenVolume is a volume whose files actorlet writes: Dir (see
// WrittenVolumePath) is to hold exactly Files, by relative path.
type WrittenVolume struct {
	Volume string
	Dir    string
	Files  map[string]VolumeFile
	// Missing: a ConfigMap or Secret (or a key) the volume needs is not
	// there (Files is nil). Files written before stay as they are; a
	// volume never written cannot be mounted: the kubelet's FailedMount.
	Missing *ObjectError
	// Tmpfs: the files are secrets, kept on a tmpfs (see SecretPath),
	// unless SpecOptions.SecretsOnDisk.
	Tmpfs bool
	// Group is the pod's fsGroup: Dir and everything in it belong to
	// this group (directories setgid), and Files' modes already have the
	// group read bits FSGroupFileMode adds (the volume is read-only).
	Group *int64
}

// DownwardAPIFiles is VolumeFiles (it was the name when only downwardAPI
// sources were written).
func DownwardAPIFiles(d Downward, pod *v1.Pod, vol *v1.Volume) (map[string]VolumeFile, error) {
	return VolumeFiles(d, pod, vol)
}

// VolumeFiles returns the files of a downwardAPI, configMap, secret or
// projected volume, as the kubelet writes them.
//
// downwardAPI items: a fieldRef gives metadata.name, metadata.namespace,
// metadata.uid, one label or annotation (metadata.labels['<key>']), or
// all of them (metadata.labels, metadata.annotations: one key="value"
// line per key, sorted, the value quoted as Go quotes it); a
// resourceFieldRef its container's resource (see
// Downward.ResourceFieldRef).
//
// configMap and secret (from d.Objects): without items, one file per key
// (a ConfigMap's data and binaryData); with items, the file at each
// item's path holds its key. A missing object, or a missing key of an
// item, is an *ObjectError with the kubelet's words unless the volume (or
// source) is optional: then it gives no file.
//
// A file's mode is its item's mode, else the volume's defaultMode, else
// 0644. projected combines its sources (serviceAccountToken and
// clusterTrustBundle are errors naming them).
func VolumeFiles(d Downward, pod *v1.Pod, vol *v1.Volume) (map[string]VolumeFile, error) {
	files := map[string]VolumeFile{}
	var defaultMode *int32
	var err error
	switch {
	case vol.DownwardAPI != nil:
		defaultMode = vol.DownwardAPI.DefaultMode
		err = downwardItems(d, pod, vol.Name, vol.DownwardAPI.Items, fileMode(defaultMode), files)
	case vol.ConfigMap != nil:
		cv := vol.ConfigMap
		err = configMapItems(d.Objects, cv.Name, cv.Items, cv.Optional, fileMode(cv.DefaultMode), files)
	case vol.Secret != nil:
		sv := vol.Secret
		err = secretItems(d.Objects, sv.SecretName, sv.Items, sv.Optional, fileMode(sv.DefaultMode), files)
	case vol.Projected != nil:
		mode := fileMode(vol.Projected.DefaultMode)
		for i, src := range vol.Projected.Sources {
			switch {
			case src.DownwardAPI != nil:
				err = downwardItems(d, pod, vol.Name, src.DownwardAPI.Items, mode, files)
			case src.ConfigMap != nil:
				err = configMapItems(d.Objects, src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional, mode, files)
			case src.Secret != nil:
				err = secretItems(d.Objects, src.Secret.Name, src.Secret.Items, src.Secret.Optional, mode, files)
			case src.ServiceAccountToken != nil:
				return nil, fmt.Errorf("volume %q: sources[%d]: serviceAccountToken projections are not supported by actorlet", vol.Name, i)
			case src.ClusterTrustBundle != nil:
				return nil, fmt.Errorf("volume %q: sources[%d]: clusterTrustBundle projections are not supported by actorlet", vol.Name, i)
			default:
				return nil, fmt.Errorf("volume %q: sources[%d]: only downwardAPI, configMap and secret projections are supported by actorlet", vol.Name, i)
			}
			if err != nil {
				break
			}
		}
	default:
		return nil, fmt.Errorf("volume %q: not a downwardAPI, configMap, secret or projected volume", vol.Name)
	}
	if err != nil {
		var oe *ObjectError
		if errors.As(err, &oe) {
			return nil, oe // the kubelet's words: the caller names the volume
		}
		return nil, err
	}
	return files, nil
}

// fileMode is a volume's default file mode.
func fileMode(defaultMode *int32) fs.FileMode {
	if defaultMode != nil {
		return fs.FileMode(*defaultMode).Perm()
	}
	return defaultVolumeFileMode
}

// itemMode is an item's mode, else def.
func itemMode(mode *int32, def fs.FileMode) fs.FileMode {
	if mode != nil {
		return fs.FileMode(*mode).Perm()
	}
	return def
}

func downwardItems(d Downward, pod *v1.Pod, volume string, items []v1.DownwardAPIVolumeFile, mode fs.FileMode, files map[string]VolumeFile) error {
	for i, it := range items {
		if err := checkItemPath(it.Path); err != nil {
			return fmt.Errorf("volume %q: items[%d]: %w", volume, i, err)
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
			return fmt.Errorf("volume %q: items[%d] (%s): %w", volume, i, it.Path, err)
		}
		files[path.Clean(it.Path)] = VolumeFile{Data: []byte(val), Mode: itemMode(it.Mode, mode)}
	}
	return nil
}

// keyItems writes data's keys (all of them without items, else the
// items'), keyMissing wording a missing key of an item.
func keyItems(data map[string][]byte, items []v1.KeyToPath, optional *bool, mode fs.FileMode, keyMissing string, files map[string]VolumeFile) error {
	if len(items) == 0 {
		for k, v := range data {
			if err := checkItemPath(k); err != nil {
				return fmt.Errorf("key %q: %w", k, err)
			}
			files[path.Clean(k)] = VolumeFile{Data: v, Mode: mode}
		}
		return nil
	}
	for i, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if isOptional(optional) {
				continue
			}
			return &ObjectError{Msg: keyMissing + it.Key}
		}
		if err := checkItemPath(it.Path); err != nil {
			return fmt.Errorf("items[%d]: %w", i, err)
		}
		files[path.Clean(it.Path)] = VolumeFile{Data: v, Mode: itemMode(it.Mode, mode)}
	}
	return nil
}

func configMapItems(objs Objects, name string, items []v1.KeyToPath, optional *bool, mode fs.FileMode, files map[string]VolumeFile) error {
	cm, ok := objs.ConfigMaps[name]
	if !ok {
		if isOptional(optional) {
			return nil
		}
		return notFound(kindConfigMap, name)
	}
	return keyItems(configMapData(cm), items, optional, mode, "configmap references non-existent config key: ", files)
}

func secretItems(objs Objects, name string, items []v1.KeyToPath, optional *bool, mode fs.FileMode, files map[string]VolumeFile) error {
	s, ok := objs.Secrets[name]
	if !ok {
		if isOptional(optional) {
			return nil
		}
		return notFound(kindSecret, name)
	}
	return keyItems(s.Data, items, optional, mode, "references non-existent secret key: ", files)
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

// writtenVolumes lists pod's downwardAPI, configMap, secret and projected
// volumes with their files (see VolumeFiles); one whose ConfigMap or
// Secret is missing has Missing set instead.
func writtenVolumes(opts SpecOptions, objs Objects, pod *v1.Pod) ([]WrittenVolume, error) {
	var out []WrittenVolume
	d := opts.DownwardFor("", pod, "")
	d.Objects = objs
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if !isWrittenVolume(vol) {
			continue
		}
		wv := WrittenVolume{Volume: vol.Name, Dir: WrittenVolumePath(opts.RootDir, pod.UID, vol), Tmpfs: holdsSecrets(vol) && !opts.SecretsOnDisk}
		files, err := VolumeFiles(d, pod, vol)
		var oe *ObjectError
		switch {
		case errors.As(err, &oe):
			wv.Missing = oe
		case err != nil:
			return nil, err
		default:
			wv.Files = files
		}
		if wv.Group = FSGroup(pod); wv.Group != nil {
			for p, f := range wv.Files {
				f.Mode = FSGroupFileMode(f.Mode, true)
				wv.Files[p] = f
			}
		}
		out = append(out, wv)
	}
	return out, nil
}
