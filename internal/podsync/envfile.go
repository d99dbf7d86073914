package podsync

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// fileKeyValue resolves an env valueFrom.fileKeyRef as the kubelet does
// (Kubernetes' EnvFiles): the key of the env file at ref.Path in the
// pod's emptyDir volume ref.VolumeName, read when the container is
// created (an init container typically writes it). ok is false for an
// optional file or key that is missing: no variable. The file's format is
// the kubelet's (see envFileValue).
func fileKeyValue(d Downward, pod *v1.Pod, ref *v1.FileKeySelector) (val string, ok bool, err error) {
	vol := findVolume(pod, ref.VolumeName)
	if vol == nil || !isDiskEmptyDir(vol) {
		return "", false, fmt.Errorf("volume %q: not an emptyDir volume on disk of the pod", ref.VolumeName)
	}
	if d.ReadVolumeFile == nil {
		return "", false, fmt.Errorf("file %q of volume %q: volume files cannot be read here", ref.Path, ref.VolumeName)
	}
	data, err := d.ReadVolumeFile(EmptyDirPath(d.RootDir, pod.UID, vol.Name), filepath.FromSlash(ref.Path))
	if err != nil {
		if isOptional(ref.Optional) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("file %q of volume %q: %w", ref.Path, ref.VolumeName, err)
	}
	val, found, err := envFileValue(data, ref.Key)
	switch {
	case err != nil:
		return "", false, fmt.Errorf("file %q of volume %q: %w", ref.Path, ref.VolumeName, err)
	case !found && isOptional(ref.Optional):
		return "", false, nil
	case !found:
		return "", false, fmt.Errorf("key %q not found in file %q of volume %q", ref.Key, ref.Path, ref.VolumeName)
	}
	return val, true, nil
}

// envFileValue returns key's value in an env file, parsed as the kubelet
// parses one for fileKeyRef (pkg/kubelet/util/env, a strict subset of
// POSIX shell): one KEY='value' assignment a line, the value in single
// quotes taken literally (no escapes, no expansion) and possibly spanning
// lines; leading blanks, blank lines and lines starting with '#' skipped,
// a '#' comment allowed after the closing quote; no blank before '=';
// KEY= followed by a blank assigns "" (as the shell does). The first
// assignment of key wins. found is false when the key is not assigned;
// a malformed line before it is an error naming the line.
func envFileValue(data []byte, key string) (val string, found bool, err error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimLeft(sc.Text(), " \t")
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		name, rest, ok := strings.Cut(text, "=")
		switch {
		case !ok:
			return "", false, fmt.Errorf("line %d: missing '='", line)
		case name == "":
			return "", false, fmt.Errorf("line %d: empty variable name", line)
		case strings.TrimRight(name, " \t") != name:
			return "", false, fmt.Errorf("line %d: whitespace before '=' is not allowed", line)
		}
		if trimmed := strings.TrimLeft(rest, " \t"); trimmed != rest || rest == "" {
			if name == key {
				return "", true, nil
			}
			continue
		}
		if !strings.HasPrefix(rest, "'") {
			return "", false, fmt.Errorf("line %d: the value of %s must be in single quotes", line, name)
		}
		var b strings.Builder
		rest, start := rest[1:], line
		for {
			if end := strings.IndexByte(rest, '\''); end >= 0 {
				b.WriteString(rest[:end])
				if after := strings.TrimLeft(rest[end+1:], " \t"); after != "" && !strings.HasPrefix(after, "#") {
					return "", false, fmt.Errorf("line %d: unexpected content after the closing quote", line)
				}
				break
			}
			b.WriteString(rest)
			b.WriteByte('\n')
			if !sc.Scan() {
				return "", false, fmt.Errorf("line %d: unclosed single quote", start)
			}
			line++
			rest = sc.Text()
		}
		if name == key {
			return b.String(), true, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", false, err
	}
	return "", false, nil
}
