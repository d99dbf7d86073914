package manifest

import (
	"fmt"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
)

// Annotations LoadFile sets on every pod it returns. The first two are the
// kubelet's, so tools that know static pods recognise actorlet's.
const (
	// AnnotationConfigSource is "file" for pods read by LoadFile.
	AnnotationConfigSource = "kubernetes.io/config.source"
	// AnnotationConfigHash is the pod's UID (see StaticPodUID).
	AnnotationConfigHash = "kubernetes.io/config.hash"
	// AnnotationSourceFile is the manifest's absolute path.
	AnnotationSourceFile = "io.actorlet/source-file"

	// ConfigSourceFile is AnnotationConfigSource's value for file manifests.
	ConfigSourceFile = "file"
)

// LoadFile turns the content of one manifest file into the pod to run on
// nodeName: Decode, SetDefaults, Validate, then StaticPodUID as
// metadata.uid and the annotations AnnotationConfigSource ("file"),
// AnnotationConfigHash (the UID) and AnnotationSourceFile (the absolute
// path). path may be relative; it is made absolute first. data is the
// file's content: LoadFile does no I/O.
//
// warnings name fields actorlet ignores (see Validate); they come with a
// pod or with an error. A non-nil error is a *FileError naming the absolute
// path and, for invalid pods, every bad field, e.g.
//
//	manifest /etc/actorlet/manifests/web.yaml: spec.containers[0].image: Required value
//
// and the pod is then nil.
func LoadFile(nodeName, path string, data []byte) (*v1.Pod, []string, error) {
	return LoadFileWith(ValidationOptions{}, nodeName, path, data)
}

// LoadFileWith is LoadFile validating with opts (what the operator
// allows: privileged containers, hostPath volumes).
func LoadFileWith(opts ValidationOptions, nodeName, path string, data []byte) (*v1.Pod, []string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nil, &FileError{Path: path, Err: fmt.Errorf("absolute path: %w", err)}
	}
	pod, err := Decode(abs, data)
	if err != nil {
		return nil, nil, err
	}
	SetDefaults(pod)
	warnings, err := ValidateWith(pod, opts)
	if err != nil {
		return nil, warnings, &FileError{Path: abs, Err: err}
	}
	pod.UID = StaticPodUID(nodeName, abs, pod)
	if pod.Annotations == nil {
		pod.Annotations = make(map[string]string, 3)
	}
	pod.Annotations[AnnotationConfigSource] = ConfigSourceFile
	pod.Annotations[AnnotationConfigHash] = string(pod.UID)
	pod.Annotations[AnnotationSourceFile] = abs
	return pod, warnings, nil
}
