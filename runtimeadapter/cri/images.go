package cri

import (
	"context"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// ImagePresent asks ImageStatus whether ref is present.
func (r *Runtime) ImagePresent(ctx context.Context, ref string) (bool, error) {
	resp, err := r.is.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: ref}})
	if err != nil {
		return false, wrap(ctx, err, "image %s: status", ref)
	}
	return resp.GetImage() != nil, nil
}

// PullImage pulls ref with the runtime's PullImage (anonymously). CRI
// reports no progress: progress gets one message once it is pulled.
func (r *Runtime) PullImage(ctx context.Context, ref string, progress func(runtimeadapter.PullProgress)) error {
	resp, err := r.is.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: ref}})
	if err != nil {
		if ctx.Err() != nil {
			return wrap(ctx, err, "pull image %s", ref)
		}
		// A registry's failure is the pull's own error, not the runtime's.
		return fmt.Errorf("pull image %s: %s", ref, errMessage(err))
	}
	if progress != nil {
		progress(runtimeadapter.PullProgress{Status: "Pulled " + resp.GetImageRef()})
	}
	return nil
}

// EnsureImage makes ref present, pulling it if it is not. The sandbox
// image actorlet names (Options.PauseImage) is the runtime's business: it
// runs its own.
func (r *Runtime) EnsureImage(ctx context.Context, ref string) error {
	if ref != "" && ref == r.opts.PauseImage {
		return nil
	}
	ok, err := r.ImagePresent(ctx, ref)
	if err != nil || ok {
		return err
	}
	return r.PullImage(ctx, ref, nil)
}
