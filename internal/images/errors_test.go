package images_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/actorlet/actorlet/internal/images"
	"github.com/actorlet/actorlet/runtimeadapter"
)

func TestReason(t *testing.T) {
	cause := fmt.Errorf("registry: %w", runtimeadapter.ErrNotFound)
	tests := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("other"), ""},
		{context.DeadlineExceeded, ""},
		{fmt.Errorf("x: %w", images.ErrClosed), ""},
		{&images.PullError{Image: "a", Err: cause}, images.ReasonErrImagePull},
		{fmt.Errorf("wrapped: %w", &images.PullError{Image: "a", Err: cause}), images.ReasonErrImagePull},
		{&images.BackOffError{Image: "a", Until: time.Unix(10, 0), Last: cause}, images.ReasonImagePullBackOff},
		{fmt.Errorf("x: %w", images.ErrImageNeverPull), images.ReasonErrImageNeverPull},
		{fmt.Errorf("x: %w: %w", images.ErrImageInspect, runtimeadapter.ErrUnavailable), images.ReasonImageInspectError},
		{fmt.Errorf("x: %w", images.ErrInvalidImageName), images.ReasonInvalidImageName},
	}
	for _, tt := range tests {
		if got := images.Reason(tt.err); got != tt.want {
			t.Errorf("Reason(%v) = %q; want %q", tt.err, got, tt.want)
		}
	}
}

func TestErrorChains(t *testing.T) {
	cause := fmt.Errorf("registry: %w", runtimeadapter.ErrNotFound)
	pe := &images.PullError{Image: "app:1", Err: cause}
	if !errors.Is(pe, images.ErrImagePull) || !errors.Is(pe, runtimeadapter.ErrNotFound) {
		t.Errorf("PullError chain: %v", pe)
	}
	if want := `failed to pull image "app:1": registry: not found`; pe.Error() != want {
		t.Errorf("PullError = %q; want %q", pe.Error(), want)
	}
	be := &images.BackOffError{Image: "app:1", Until: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), Last: cause}
	if !errors.Is(be, images.ErrImagePullBackOff) || !errors.Is(be, runtimeadapter.ErrNotFound) || errors.Is(be, images.ErrImagePull) {
		t.Errorf("BackOffError chain: %v", be)
	}
	if want := `back-off pulling image "app:1" until 2030-01-02T03:04:05Z: last pull failed: registry: not found`; be.Error() != want {
		t.Errorf("BackOffError = %q; want %q", be.Error(), want)
	}
}
