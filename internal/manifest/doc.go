// Package manifest turns static-pod manifest files into validated,
// defaulted *v1.Pod values (k8s.io/api/core/v1).
//
// The steps are separate so that other sources (a URL, etcd, an embedding
// service) can reuse them:
//
//	Decode        bytes → *v1.Pod (strict YAML or JSON, kind Pod, apiVersion v1)
//	SetDefaults   Kubernetes' API defaults, applied by hand
//	Validate      Kubernetes-style checks plus actorlet's support table
//	StaticPodUID  a stable identity for a pod read from a file
//
// LoadFile runs all of them for one file of one pod, decoded strictly.
// DecodeDocuments and LoadFileDocuments read a file as the kubelet's file
// source does and more: it may hold several documents ("---"), each a
// pod, an error in one sparing the others, and an unknown field is a
// warning naming it unless DecodeOptions.Strict (--strict-manifests). Every error names the offending
// field by its path (e.g. "spec.containers[0].image: Required value",
// `spec.containers[0].resources.limits[cpu]: Invalid value: "1x": ...`),
// or, for a manifest that is not well-formed YAML or JSON, the line where
// it breaks (never a Go type: see yamlerror.go); LoadFile's errors also name the file (see errors.go). A
// manifest is at most MaxManifestBytes (1 MiB).
//
// Which pod fields actorlet honours, ignores with a warning, or rejects is
// kept in one table, in support.go.
package manifest
