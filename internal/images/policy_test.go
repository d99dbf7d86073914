package images_test

import (
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/images"
)

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestDefaultPolicy(t *testing.T) {
	tests := []struct {
		ref  string
		want v1.PullPolicy
	}{
		{"busybox", v1.PullAlways},
		{"busybox:latest", v1.PullAlways},
		{"busybox:1.36", v1.PullIfNotPresent},
		{"busybox@" + digest, v1.PullIfNotPresent},
		{"busybox:latest@" + digest, v1.PullAlways},
		{"busybox:1@" + digest, v1.PullIfNotPresent},
		{"localhost:5000/app", v1.PullAlways},
		{"localhost:5000/app:v1", v1.PullIfNotPresent},
		{"127.0.0.1:5000/team/app:1", v1.PullIfNotPresent},
		{"registry.example.com/latest", v1.PullAlways}, // a repository named latest has no tag
		{"Bad/Name", v1.PullIfNotPresent},
		{"", v1.PullIfNotPresent},
	}
	for _, tt := range tests {
		if got := images.DefaultPolicy(tt.ref); got != tt.want {
			t.Errorf("DefaultPolicy(%q) = %s; want %s", tt.ref, got, tt.want)
		}
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		ref, want string
	}{
		{"busybox", "docker.io/library/busybox:latest"},
		{"busybox:1", "docker.io/library/busybox:1"},
		{"docker.io/library/busybox:latest", "docker.io/library/busybox:latest"},
		{"localhost:5000/app", "localhost:5000/app:latest"},
		{"127.0.0.1:5000/team/app:1", "127.0.0.1:5000/team/app:1"},
		{"busybox@" + digest, "docker.io/library/busybox@" + digest},
	}
	for _, tt := range tests {
		got, err := images.Normalize(tt.ref)
		if err != nil || got != tt.want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", tt.ref, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "Bad/Name", "busybox:", "busybox@sha256:12", "a b"} {
		if _, err := images.Normalize(bad); !errors.Is(err, images.ErrInvalidImageName) {
			t.Errorf("Normalize(%q) error = %v; want ErrInvalidImageName", bad, err)
		}
	}
}
