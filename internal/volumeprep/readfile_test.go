package volumeprep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ReadVolumeFile reads inside the volume only: a link a container made
// there to a host file, or "..", is refused; a link inside it is followed.
func TestReadVolumeFile(t *testing.T) {
	host := t.TempDir()
	secret := filepath.Join(host, "shadow")
	if err := os.WriteFile(secret, []byte("HOST='secret'"), 0o600); err != nil {
		t.Fatal(err)
	}
	vol := filepath.Join(host, "vol")
	if err := os.MkdirAll(filepath.Join(vol, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vol, "sub", "config.env"), []byte("A='1'"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"escape.env": secret, "up.env": "../shadow", "inside.env": "sub/config.env"} {
		if err := os.Symlink(target, filepath.Join(vol, link)); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{"sub/config.env": "A='1'", "inside.env": "A='1'"} {
		if got, err := ReadVolumeFile(vol, name); err != nil || string(got) != want {
			t.Errorf("ReadVolumeFile(%s) = %q, %v; want %q", name, got, err, want)
		}
	}
	for _, name := range []string{"escape.env", "up.env", "../shadow", "missing.env"} {
		if got, err := ReadVolumeFile(vol, name); err == nil || strings.Contains(string(got), "secret") {
			t.Errorf("ReadVolumeFile(%s) = %q, %v; want an error", name, got, err)
		}
	}
}
