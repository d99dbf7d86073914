package manifest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The seccomp annotations Kubernetes removed in 1.27 (the fields replace
// them): refused by name, never ignored.
const (
	seccompPodAnnotation             = "seccomp.security.alpha.kubernetes.io/pod"
	seccompContainerAnnotationPrefix = "container.seccomp.security.alpha.kubernetes.io/"
)

// appArmorSysfs says whether the kernel has AppArmor enabled ("Y").
const appArmorSysfs = "/sys/module/apparmor/parameters/enabled"

// hostAppArmor reads appArmorSysfs once.
var hostAppArmor = sync.OnceValue(func() bool {
	b, err := os.ReadFile(appArmorSysfs)
	return err == nil && strings.TrimSpace(string(b)) == "Y"
})

// HostAppArmor reports whether this host's kernel has AppArmor enabled
// (/sys/module/apparmor/parameters/enabled is "Y"); read once.
func HostAppArmor() bool { return hostAppArmor() }

// validateSecurityProfiles checks the seccomp and AppArmor profiles of
// pod, which actorlet applies (see podsync): every profile's type is
// RuntimeDefault, Unconfined or Localhost; a Localhost seccomp profile
// names a relative path without ".." (below <root-dir>/seccomp/) and only
// Localhost has a localhostProfile; a Localhost AppArmor profile names a
// profile and needs AppArmor on the host (appArmor false: refused by
// name). The AppArmor annotations
// container.apparmor.security.beta.kubernetes.io/<container> name a
// container of the pod and hold runtime/default, unconfined or
// localhost/<profile>. The seccomp annotations removed in Kubernetes 1.27
// are refused.
func validateSecurityProfiles(pod *v1.Pod, appArmor bool) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if sc := pod.Spec.SecurityContext; sc != nil {
		p := spec.Child("securityContext")
		errs = append(errs, validateSeccomp(sc.SeccompProfile, p.Child("seccompProfile"))...)
		errs = append(errs, validateAppArmor(sc.AppArmorProfile, appArmor, p.Child("appArmorProfile"))...)
	}
	var names []string
	visit := func(list []v1.Container, path *field.Path) {
		for i := range list {
			c := &list[i]
			names = append(names, c.Name)
			if c.SecurityContext == nil {
				continue
			}
			p := path.Index(i).Child("securityContext")
			errs = append(errs, validateSeccomp(c.SecurityContext.SeccompProfile, p.Child("seccompProfile"))...)
			errs = append(errs, validateAppArmor(c.SecurityContext.AppArmorProfile, appArmor, p.Child("appArmorProfile"))...)
		}
	}
	visit(pod.Spec.InitContainers, spec.Child("initContainers"))
	visit(pod.Spec.Containers, spec.Child("containers"))

	annotations := field.NewPath("metadata", "annotations")
	keys := make([]string, 0, len(pod.Annotations))
	for k := range pod.Annotations {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, path := pod.Annotations[k], annotations.Key(k)
		switch {
		case k == seccompPodAnnotation || strings.HasPrefix(k, seccompContainerAnnotationPrefix):
			errs = append(errs, field.Forbidden(path, notSupported+": the seccomp annotations were removed in Kubernetes 1.27; use securityContext.seccompProfile"))
		case strings.HasPrefix(k, v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix):
			name := strings.TrimPrefix(k, v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix)
			if !slices.Contains(names, name) {
				errs = append(errs, field.Invalid(path, name, "container not found"))
				continue
			}
			switch {
			case v == v1.DeprecatedAppArmorBetaProfileRuntimeDefault, v == v1.DeprecatedAppArmorBetaProfileNameUnconfined:
			case strings.HasPrefix(v, v1.DeprecatedAppArmorBetaProfileNamePrefix):
				local := strings.TrimPrefix(v, v1.DeprecatedAppArmorBetaProfileNamePrefix)
				errs = append(errs, validateAppArmor(&v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost, LocalhostProfile: &local}, appArmor, path)...)
			default:
				errs = append(errs, field.Invalid(path, v, "must be runtime/default, unconfined or localhost/<profile>"))
			}
		}
	}
	return errs
}

var (
	seccompTypes  = []v1.SeccompProfileType{v1.SeccompProfileTypeRuntimeDefault, v1.SeccompProfileTypeUnconfined, v1.SeccompProfileTypeLocalhost}
	appArmorTypes = []v1.AppArmorProfileType{v1.AppArmorProfileTypeRuntimeDefault, v1.AppArmorProfileTypeUnconfined, v1.AppArmorProfileTypeLocalhost}
)

func validateSeccomp(p *v1.SeccompProfile, path *field.Path) field.ErrorList {
	if p == nil {
		return nil
	}
	if !slices.Contains(seccompTypes, p.Type) {
		return field.ErrorList{field.NotSupported(path.Child("type"), p.Type, seccompTypes)}
	}
	local := path.Child("localhostProfile")
	if p.Type != v1.SeccompProfileTypeLocalhost {
		if p.LocalhostProfile != nil {
			return field.ErrorList{field.Invalid(local, *p.LocalhostProfile, "can only be set for type Localhost")}
		}
		return nil
	}
	switch name := p.LocalhostProfile; {
	case name == nil || *name == "":
		return field.ErrorList{field.Required(local, "type Localhost needs a profile, a path below <root-dir>/seccomp/")}
	case filepath.IsAbs(*name):
		return field.ErrorList{field.Invalid(local, *name, "must be a relative path below <root-dir>/seccomp/")}
	case slices.Contains(strings.Split(filepath.ToSlash(*name), "/"), ".."):
		return field.ErrorList{field.Invalid(local, *name, "must not contain '..'")}
	}
	return nil
}

func validateAppArmor(p *v1.AppArmorProfile, appArmor bool, path *field.Path) field.ErrorList {
	if p == nil {
		return nil
	}
	if !slices.Contains(appArmorTypes, p.Type) {
		return field.ErrorList{field.NotSupported(path.Child("type"), p.Type, appArmorTypes)}
	}
	local := path.Child("localhostProfile")
	if p.Type != v1.AppArmorProfileTypeLocalhost {
		if p.LocalhostProfile != nil {
			return field.ErrorList{field.Invalid(local, *p.LocalhostProfile, "can only be set for type Localhost")}
		}
		return nil
	}
	if p.LocalhostProfile == nil || strings.TrimSpace(*p.LocalhostProfile) == "" {
		return field.ErrorList{field.Required(local, "type Localhost needs the name of a loaded AppArmor profile")}
	}
	if !appArmor {
		return field.ErrorList{field.Forbidden(path, notAllowed+": AppArmor is not enabled on this host, so the Localhost profile "+*p.LocalhostProfile+" cannot be applied")}
	}
	return nil
}
