package testregistry_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/actorlet/actorlet/test/support/testregistry"
)

func TestPushAndFetch(t *testing.T) {
	reg := testregistry.Start(t)
	ref := reg.PushTestWorkload(t, "actorlet/tw", "1")
	if want := reg.Host() + "/actorlet/tw:1"; ref != want {
		t.Errorf("ref = %q; want %q", ref, want)
	}
	if n := len(reg.Requests()); n != 0 {
		t.Errorf("Push was recorded: %v", reg.Requests())
	}

	parsed, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(parsed, remote.WithContext(context.Background()))
	if err != nil {
		t.Fatalf("fetch %s: %v", ref, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || !slices.Equal(cf.Config.Entrypoint, []string{"/testworkload"}) {
		t.Errorf("config: os %q, entrypoint %q", cf.OS, cf.Config.Entrypoint)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers = %d, %v; want 1", len(layers), err)
	}
	if n := reg.ManifestRequests("actorlet/tw"); n == 0 {
		t.Errorf("manifest requests = 0; requests: %v", reg.Requests())
	}
	if n := reg.ManifestRequests("actorlet/other"); n != 0 {
		t.Errorf("manifest requests of another repository = %d", n)
	}
	reg.ResetRequests()
	if n := len(reg.Requests()); n != 0 {
		t.Errorf("requests after reset = %d", n)
	}

	// A missing tag is a 404.
	resp, err := http.Get("http://" + reg.Host() + "/v2/actorlet/tw/manifests/missing")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("missing tag: status %d; want 404", resp.StatusCode)
	}
}

func TestPushElsewhereFails(t *testing.T) {
	reg := testregistry.Start(t)
	if err := reg.Push(context.Background(), "127.0.0.1:1/actorlet/tw:1", empty.Image); err == nil {
		t.Error("Push to another registry succeeded")
	}
}
