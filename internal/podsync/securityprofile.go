package podsync

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// SeccompDir is the folder of --root-dir that holds Localhost seccomp
// profiles, as the kubelet's <root-dir>/seccomp: a profile's
// localhostProfile is a path relative to it.
const SeccompDir = "seccomp"

// seccompProfile is the container's seccomp setting for the runtime (see
// runtimeadapter.ContainerSpec.Seccomp): c's securityContext.seccompProfile,
// else the pod's, as the kubelet. Unset and RuntimeDefault keep the
// runtime's default profile (Docker's default profile); Unconfined runs
// without one; Localhost is the JSON content of
// <opts.RootDir>/seccomp/<localhostProfile>, read with opts.ReadFile, which
// must exist, be readable and hold a JSON object: otherwise the error names
// the file (the kubelet's CreateContainerConfigError).
func seccompProfile(opts SpecOptions, pod *v1.Pod, c *v1.Container) (string, error) {
	var p *v1.SeccompProfile
	if c.SecurityContext != nil && c.SecurityContext.SeccompProfile != nil {
		p = c.SecurityContext.SeccompProfile
	} else if pod.Spec.SecurityContext != nil {
		p = pod.Spec.SecurityContext.SeccompProfile
	}
	if p == nil {
		return "", nil
	}
	switch p.Type {
	case v1.SeccompProfileTypeRuntimeDefault:
		return "", nil
	case v1.SeccompProfileTypeUnconfined:
		return runtimeadapter.SeccompUnconfined, nil
	case v1.SeccompProfileTypeLocalhost:
		if p.LocalhostProfile == nil || *p.LocalhostProfile == "" {
			return "", errors.New("seccompProfile: type Localhost needs a localhostProfile")
		}
		name := *p.LocalhostProfile
		if filepath.IsAbs(name) || strings.Contains("/"+filepath.ToSlash(name)+"/", "/../") {
			return "", fmt.Errorf("seccompProfile: localhostProfile %q must be a path below %s", name, SeccompDir)
		}
		file := filepath.Join(opts.RootDir, SeccompDir, name)
		if opts.ReadFile == nil {
			return "", fmt.Errorf("seccompProfile: cannot read localhost profile %s: no file reader configured", file)
		}
		data, err := opts.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("seccompProfile: cannot read localhost profile %s: %w", file, err)
		}
		var obj map[string]any
		if err := json.Unmarshal(data, &obj); err != nil {
			return "", fmt.Errorf("seccompProfile: localhost profile %s is not a seccomp profile (a JSON object): %w", file, err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, data); err != nil {
			return "", fmt.Errorf("seccompProfile: localhost profile %s: %w", file, err)
		}
		return compact.String(), nil
	default:
		return "", fmt.Errorf("seccompProfile: unknown type %q", p.Type)
	}
}

// appArmorProfile is the container's AppArmor setting for the runtime
// (see runtimeadapter.ContainerSpec.AppArmor), chosen as the kubelet 1.34
// does: c's securityContext.appArmorProfile, else the annotation
// container.apparmor.security.beta.kubernetes.io/<container>, else the
// pod's securityContext.appArmorProfile. Unset and RuntimeDefault keep the
// runtime's default; Unconfined runs without a profile; Localhost runs
// under the named profile, which must be loaded on the host (manifest
// validation refuses it where AppArmor is off).
func appArmorProfile(pod *v1.Pod, c *v1.Container) (string, error) {
	var p *v1.AppArmorProfile
	switch {
	case c.SecurityContext != nil && c.SecurityContext.AppArmorProfile != nil:
		p = c.SecurityContext.AppArmorProfile
	case hasAnnotation(pod, v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix+c.Name):
		v := pod.Annotations[v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix+c.Name]
		switch {
		case v == v1.DeprecatedAppArmorBetaProfileRuntimeDefault:
			p = &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeRuntimeDefault}
		case v == v1.DeprecatedAppArmorBetaProfileNameUnconfined:
			p = &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeUnconfined}
		case strings.HasPrefix(v, v1.DeprecatedAppArmorBetaProfileNamePrefix):
			name := strings.TrimPrefix(v, v1.DeprecatedAppArmorBetaProfileNamePrefix)
			p = &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost, LocalhostProfile: &name}
		default:
			return "", fmt.Errorf("annotation %s%s: unknown AppArmor profile %q", v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix, c.Name, v)
		}
	case pod.Spec.SecurityContext != nil:
		p = pod.Spec.SecurityContext.AppArmorProfile
	}
	if p == nil {
		return "", nil
	}
	switch p.Type {
	case v1.AppArmorProfileTypeRuntimeDefault:
		return "", nil
	case v1.AppArmorProfileTypeUnconfined:
		return runtimeadapter.AppArmorUnconfined, nil
	case v1.AppArmorProfileTypeLocalhost:
		if p.LocalhostProfile == nil || strings.TrimSpace(*p.LocalhostProfile) == "" {
			return "", errors.New("appArmorProfile: type Localhost needs a localhostProfile")
		}
		return *p.LocalhostProfile, nil
	default:
		return "", fmt.Errorf("appArmorProfile: unknown type %q", p.Type)
	}
}

func hasAnnotation(pod *v1.Pod, key string) bool {
	_, ok := pod.Annotations[key]
	return ok
}
