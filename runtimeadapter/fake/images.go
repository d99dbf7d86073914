package fake

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// normalizeImage adds the ":latest" tag Docker implies to a reference
// without a tag or digest, so "busybox" and "busybox:latest" are one image.
func normalizeImage(ref string) string {
	if strings.Contains(ref, "@") {
		return ref
	}
	if !strings.Contains(ref[strings.LastIndex(ref, "/")+1:], ":") {
		return ref + ":latest"
	}
	return ref
}

// AddImage makes ref present locally (a reference without tag means
// ":latest").
func (r *Runtime) AddImage(ref string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.images[normalizeImage(ref)] = true
}

// Images returns the present images, normalised and sorted.
func (r *Runtime) Images() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.images))
	for ref := range r.images {
		out = append(out, ref)
	}
	slices.Sort(out)
	return out
}

// EnsureImage succeeds for a present image, and with AutoImages for any
// image (which it then adds). Otherwise it fails with an error wrapping
// runtimeadapter.ErrNotFound that names the image.
func (r *Runtime) EnsureImage(ctx context.Context, image string) (err error) {
	call, err := r.begin(ctx, Call{Method: MethodEnsureImage, Arg: image})
	defer func() { r.finish(call, err) }()
	if err != nil {
		return err
	}
	r.mu.Lock()
	ref := normalizeImage(image)
	switch {
	case r.images[ref]:
	case r.autoImages:
		r.images[ref] = true
	default:
		err = fmt.Errorf("fake: image %q: %w", image, runtimeadapter.ErrNotFound)
	}
	r.mu.Unlock()
	if err != nil {
		return err
	}
	return r.faultAfter(MethodEnsureImage)
}
