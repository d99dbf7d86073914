package taskevents

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"
)

type fakeInfo struct{ mode fs.FileMode }

func (f fakeInfo) Name() string       { return "x" }
func (f fakeInfo) Size() int64        { return 0 }
func (f fakeInfo) Mode() fs.FileMode  { return f.mode }
func (f fakeInfo) ModTime() time.Time { return time.Time{} }
func (f fakeInfo) IsDir() bool        { return f.mode.IsDir() }
func (f fakeInfo) Sys() any           { return nil }

func TestAddress(t *testing.T) {
	sock, file := fakeInfo{fs.ModeSocket}, fakeInfo{0}
	denied := errors.New("permission denied")
	cands := []string{"/a.sock", "/b.sock"}
	cases := []struct {
		name    string
		flag    string
		files   map[string]any // fakeInfo or error
		want    string
		wantErr string
	}{
		{"flag wins", "/x/containerd.sock", map[string]any{"/a.sock": sock}, "/x/containerd.sock", ""},
		{"flag with unix://", "unix:///x/c.sock", nil, "/x/c.sock", ""},
		{"relative flag", "c.sock", nil, "", "want an absolute socket path"},
		{"first found", "", map[string]any{"/a.sock": sock, "/b.sock": sock}, "/a.sock", ""},
		{"second found", "", map[string]any{"/b.sock": sock}, "/b.sock", ""},
		{"not a socket skipped", "", map[string]any{"/a.sock": file, "/b.sock": sock}, "/b.sock", ""},
		{"none", "", nil, "", "no containerd socket (/a.sock: absent; /b.sock: absent)"},
		{"denied", "", map[string]any{"/a.sock": denied}, "", "/a.sock: permission denied; /b.sock: absent"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stat := func(p string) (fs.FileInfo, error) {
				switch v := tc.files[p].(type) {
				case fakeInfo:
					return v, nil
				case error:
					return nil, v
				}
				return nil, fs.ErrNotExist
			}
			got, err := Address(tc.flag, cands, stat)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Address = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
