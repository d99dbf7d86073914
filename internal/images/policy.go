package images

import (
	"github.com/distribution/reference"
	v1 "k8s.io/api/core/v1"
)

// latestTag is the tag a reference without tag or digest stands for.
const latestTag = "latest"

// DefaultPolicy returns the imagePullPolicy Kubernetes defaults a container
// with image ref to: Always when its tag is "latest" or it has neither tag
// nor digest, else IfNotPresent. A reference that does not parse gets
// IfNotPresent (as in Kubernetes, which leaves it to validation).
func DefaultPolicy(ref string) v1.PullPolicy {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return v1.PullIfNotPresent
	}
	tag := ""
	if t, ok := named.(reference.Tagged); ok {
		tag = t.Tag()
	}
	_, digested := named.(reference.Digested)
	if tag == latestTag || (tag == "" && !digested) {
		return v1.PullAlways
	}
	return v1.PullIfNotPresent
}

// Normalize returns ref's full name as Docker reads it, which is the key
// that shares pulls and back-off: "busybox" becomes
// "docker.io/library/busybox:latest", "localhost:5000/app" becomes
// "localhost:5000/app:latest"; a digest is kept. The error (an
// *InvalidNameError, wrapping ErrInvalidImageName) says why ref does not
// parse: an empty or upper-case repository, a bad tag or digest.
func Normalize(ref string) (string, error) {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return "", &InvalidNameError{Image: ref, Err: err}
	}
	return reference.TagNameOnly(named).String(), nil
}
