package runtimeadapter

import "context"

// ImageService is implemented by runtimes that can tell whether an image is
// present and pull one from its registry (Docker, the fake). It is
// optional, like EventSource: it is what internal/images builds
// imagePullPolicy, ImagePullBackOff and shared pulls on.
//
// Image references are as Docker takes them ("busybox", "busybox:1.36",
// "registry:5000/team/app@sha256:…"); a reference without tag or digest
// means ":latest". Errors name the image and wrap ErrNotFound (the image,
// tag or digest does not exist) or ErrUnavailable (the runtime could not be
// reached, or ctx ended) where they apply. A registry that cannot be reached
// is neither: it is the pull's own error.
type ImageService interface {
	// ImagePresent reports whether ref is present locally. An absent image
	// is (false, nil), never an error.
	ImagePresent(ctx context.Context, ref string) (bool, error)
	// PullImage pulls ref from its registry (anonymously), calling progress
	// (which may be nil) for each progress message, from the calling
	// goroutine, before it returns. It returns nil once the image is
	// present, or the pull's error.
	PullImage(ctx context.Context, ref string, progress func(PullProgress)) error
}

// PullProgress is one progress message of a pull.
type PullProgress struct {
	// Layer is the layer (short ID, as Docker prints it) the message is
	// about; empty for messages about the whole image.
	Layer string
	// Status is the runtime's word, e.g. "Pulling fs layer", "Downloading",
	// "Pull complete", "Digest: sha256:…".
	Status string
	// Current and Total are bytes done and expected for Layer; 0 when the
	// runtime does not say.
	Current, Total int64
}
