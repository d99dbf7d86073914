package runtimetest

import (
	"errors"
	"strings"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// imageCases: what internal/images builds imagePullPolicy on
// (runtimeadapter.ImageService): an absent image is (false, nil), never an
// error, so a Never policy reports ErrImageNeverPull, not a runtime fault.
var imageCases = []testCase{
	{"EnsurePresentImage", func(e *env) {
		if err := e.Runtime.EnsureImage(e.ctx, e.Image); err != nil {
			e.t.Errorf("EnsureImage(%s), present: %v", e.Image, err)
		}
	}},
	{"PresentAndAbsent", func(e *env) {
		is := e.images()
		if ok, err := is.ImagePresent(e.ctx, e.Image); !ok || err != nil {
			e.t.Errorf("ImagePresent(%s) = %v, %v; want true, nil", e.Image, ok, err)
		}
		if ok, err := is.ImagePresent(e.ctx, e.AbsentImage); ok || err != nil {
			e.t.Errorf("ImagePresent(%s) = %v, %v; want false, nil", e.AbsentImage, ok, err)
		}
	}},
	{"PullOfAnImageNoRegistryServes", func(e *env) {
		is := e.images()
		err := is.PullImage(e.ctx, e.AbsentImage, nil)
		if err == nil {
			e.t.Fatalf("PullImage(%s): nil, want an error", e.AbsentImage)
		}
		if !strings.Contains(err.Error(), e.AbsentImage) {
			e.t.Errorf("PullImage(%s): %q does not name the image", e.AbsentImage, err)
		}
		if errors.Is(err, runtimeadapter.ErrUnavailable) {
			e.t.Errorf("PullImage(%s): %v; a registry's failure is not the runtime's", e.AbsentImage, err)
		}
		if ok, err := is.ImagePresent(e.ctx, e.AbsentImage); ok || err != nil {
			e.t.Errorf("after a failed pull ImagePresent = %v, %v; want false, nil", ok, err)
		}
	}},
}

// images returns the runtime's ImageService, skipping the test when it
// has none.
func (e *env) images() runtimeadapter.ImageService {
	is, ok := e.Runtime.(runtimeadapter.ImageService)
	if !ok {
		e.t.Skip("runtime does not implement runtimeadapter.ImageService")
	}
	if e.Image == "" || e.AbsentImage == "" {
		e.t.Fatal("runtimetest: Instance.Image and AbsentImage are needed")
	}
	return is
}
