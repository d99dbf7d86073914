package manifest

import (
	"path"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// volumeFieldPaths are the fieldRef paths a downwardAPI volume item may
// name, as Kubernetes allows them (besides the subscripted
// metadata.labels['<key>'] and metadata.annotations['<key>']).
var volumeFieldPaths = []string{"metadata.name", "metadata.namespace", "metadata.uid", "metadata.labels", "metadata.annotations"}

// validateDownwardVolume checks a downwardAPI volume, or a projected one
// (its sources other than downwardAPI are rejected by the support table):
// each item's path, its one source and its mode, and defaultMode.
func validateDownwardVolume(spec *v1.PodSpec, vol *v1.Volume, vp *field.Path) field.ErrorList {
	var errs field.ErrorList
	paths := sets.New[string]()
	items := func(list []v1.DownwardAPIVolumeFile, p *field.Path) {
		for i, it := range list {
			errs = append(errs, validateDownwardItem(spec, it, paths, p.Index(i))...)
		}
	}
	switch {
	case vol.DownwardAPI != nil:
		dp := vp.Child("downwardAPI")
		errs = append(errs, validateMode(vol.DownwardAPI.DefaultMode, dp.Child("defaultMode"))...)
		items(vol.DownwardAPI.Items, dp.Child("items"))
	case vol.Projected != nil:
		pp := vp.Child("projected")
		errs = append(errs, validateMode(vol.Projected.DefaultMode, pp.Child("defaultMode"))...)
		for i, src := range vol.Projected.Sources {
			if src.DownwardAPI != nil {
				items(src.DownwardAPI.Items, pp.Child("sources").Index(i).Child("downwardAPI", "items"))
			}
		}
	}
	return errs
}

func validateDownwardItem(spec *v1.PodSpec, it v1.DownwardAPIVolumeFile, paths sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	pathErrs := validateItemPath(it.Path, p.Child("path"))
	errs = append(errs, pathErrs...)
	if len(pathErrs) == 0 {
		if paths.Has(path.Clean(it.Path)) {
			errs = append(errs, field.Duplicate(p.Child("path"), it.Path))
		}
		paths.Insert(path.Clean(it.Path))
	}
	errs = append(errs, validateMode(it.Mode, p.Child("mode"))...)
	switch {
	case it.FieldRef != nil && it.ResourceFieldRef != nil:
		errs = append(errs, field.Invalid(p, "", "fieldRef and resourceFieldRef can not be specified simultaneously"))
	case it.FieldRef != nil:
		fp := p.Child("fieldRef")
		if it.FieldRef.APIVersion != "v1" {
			errs = append(errs, field.NotSupported(fp.Child("apiVersion"), it.FieldRef.APIVersion, []string{"v1"}))
		}
		fieldPath := it.FieldRef.FieldPath
		if !slices.Contains(volumeFieldPaths, fieldPath) {
			if strings.HasPrefix(fieldPath, "metadata.labels['") || strings.HasPrefix(fieldPath, "metadata.annotations['") {
				errs = append(errs, validateFieldPath(fieldPath, fp.Child("fieldPath"))...)
			} else {
				supported := append(slices.Clone(volumeFieldPaths), "metadata.labels['<key>']", "metadata.annotations['<key>']")
				errs = append(errs, field.NotSupported(fp.Child("fieldPath"), fieldPath, supported))
			}
		}
	case it.ResourceFieldRef != nil:
		rp := p.Child("resourceFieldRef")
		errs = append(errs, validateResourceField(it.ResourceFieldRef, rp, true)...)
		if cn := it.ResourceFieldRef.ContainerName; cn != "" && !hasContainer(spec, cn) {
			errs = append(errs, field.NotFound(rp.Child("containerName"), cn))
		}
	default:
		errs = append(errs, field.Required(p, "one of fieldRef and resourceFieldRef is required"))
	}
	return errs
}

// validateItemPath checks a volume item's path as Kubernetes does:
// relative, no '..' element, not starting with '..'.
func validateItemPath(p string, fp *field.Path) field.ErrorList {
	switch {
	case p == "":
		return field.ErrorList{field.Required(fp, "")}
	case path.IsAbs(p):
		return field.ErrorList{field.Invalid(fp, p, "must be a relative path")}
	case strings.HasPrefix(p, ".."):
		return field.ErrorList{field.Invalid(fp, p, "must not start with '..'")}
	case slices.Contains(strings.Split(p, "/"), ".."):
		return field.ErrorList{field.Invalid(fp, p, "must not contain '..'")}
	}
	return nil
}

func validateMode(mode *int32, p *field.Path) field.ErrorList {
	if mode != nil && (*mode < 0 || *mode > 0o777) {
		return field.ErrorList{field.Invalid(p, *mode, "must be a number between 0 and 0777 (octal), both inclusive")}
	}
	return nil
}

func hasContainer(spec *v1.PodSpec, name string) bool {
	for _, c := range spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range spec.Containers {
		if c.Name == name {
			return true
		}
	}
	return false
}
