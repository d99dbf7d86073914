package manifest

import (
	"path"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateObjectVolume checks a configMap or secret volume, and the
// configMap and secret sources of a projected one, as Kubernetes does: a
// name (a DNS-1123 subdomain), each item's key (a ConfigMap key) and path
// (relative, no '..', unique in the volume) and mode, and defaultMode.
// The objects themselves come from the node's sources when the pod
// starts, not from here.
func validateObjectVolume(vol *v1.Volume, vp *field.Path) field.ErrorList {
	var errs field.ErrorList
	paths := sets.New[string]()
	switch {
	case vol.ConfigMap != nil:
		cp := vp.Child("configMap")
		errs = append(errs, validateObjectName(vol.ConfigMap.Name, cp.Child("name"))...)
		errs = append(errs, validateMode(vol.ConfigMap.DefaultMode, cp.Child("defaultMode"))...)
		errs = append(errs, validateKeyItems(vol.ConfigMap.Items, paths, cp.Child("items"))...)
	case vol.Secret != nil:
		sp := vp.Child("secret")
		errs = append(errs, validateObjectName(vol.Secret.SecretName, sp.Child("secretName"))...)
		errs = append(errs, validateMode(vol.Secret.DefaultMode, sp.Child("defaultMode"))...)
		errs = append(errs, validateKeyItems(vol.Secret.Items, paths, sp.Child("items"))...)
	case vol.Projected != nil:
		for i, src := range vol.Projected.Sources {
			sp := vp.Child("projected", "sources").Index(i)
			if src.ConfigMap != nil {
				errs = append(errs, validateObjectName(src.ConfigMap.Name, sp.Child("configMap", "name"))...)
				errs = append(errs, validateKeyItems(src.ConfigMap.Items, paths, sp.Child("configMap", "items"))...)
			}
			if src.Secret != nil {
				errs = append(errs, validateObjectName(src.Secret.Name, sp.Child("secret", "name"))...)
				errs = append(errs, validateKeyItems(src.Secret.Items, paths, sp.Child("secret", "items"))...)
			}
		}
	}
	return errs
}

// validateObjectName checks the name of a ConfigMap or Secret a pod
// refers to.
func validateObjectName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	return invalid(p, name, validation.IsDNS1123Subdomain(name))
}

func validateKeyItems(items []v1.KeyToPath, paths sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, it := range items {
		ip := p.Index(i)
		if it.Key == "" {
			errs = append(errs, field.Required(ip.Child("key"), ""))
		} else {
			errs = append(errs, invalid(ip.Child("key"), it.Key, validation.IsConfigMapKey(it.Key))...)
		}
		pathErrs := validateItemPath(it.Path, ip.Child("path"))
		errs = append(errs, pathErrs...)
		if len(pathErrs) == 0 {
			if paths.Has(path.Clean(it.Path)) {
				errs = append(errs, field.Duplicate(ip.Child("path"), it.Path))
			}
			paths.Insert(path.Clean(it.Path))
		}
		errs = append(errs, validateMode(it.Mode, ip.Child("mode"))...)
	}
	return errs
}

// validateKeyRef checks an env var's configMapKeyRef or secretKeyRef.
func validateKeyRef(name, key string, p *field.Path) field.ErrorList {
	errs := validateObjectName(name, p.Child("name"))
	if key == "" {
		return append(errs, field.Required(p.Child("key"), ""))
	}
	return append(errs, invalid(p.Child("key"), key, validation.IsConfigMapKey(key))...)
}

// validateEnvFrom checks a container's envFrom: each source names one
// ConfigMap or Secret; a prefix is part of a valid variable name.
func validateEnvFrom(list []v1.EnvFromSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ef := range list {
		ep := p.Index(i)
		if ef.Prefix != "" {
			errs = append(errs, invalid(ep.Child("prefix"), ef.Prefix, validation.IsRelaxedEnvVarName(ef.Prefix))...)
		}
		switch {
		case ef.ConfigMapRef != nil && ef.SecretRef != nil:
			errs = append(errs, field.Invalid(ep, "", "may not have more than one field specified at a time"))
		case ef.ConfigMapRef != nil:
			errs = append(errs, validateObjectName(ef.ConfigMapRef.Name, ep.Child("configMapRef", "name"))...)
		case ef.SecretRef != nil:
			errs = append(errs, validateObjectName(ef.SecretRef.Name, ep.Child("secretRef", "name"))...)
		default:
			errs = append(errs, field.Invalid(ep, "", "must specify one of: `configMapRef` or `secretRef`"))
		}
	}
	return errs
}
